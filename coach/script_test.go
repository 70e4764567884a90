package coach

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestScriptsJSONFields reads the served file the way a browser does (plain
// JSON, no Go types) and checks that every field the offline coach needs is
// there for both languages.
func TestScriptsJSONFields(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(ScriptsJSON(), &doc); err != nil {
		t.Fatalf("scripts.json: %v", err)
	}
	if n, _ := doc["countdown_s"].(float64); n != defaultCountdownS {
		t.Errorf("countdown_s = %v, want %d", doc["countdown_s"], defaultCountdownS)
	}
	for _, path := range []string{
		"detect.question_marks", "detect.sentence_breaks", "detect.clause_breaks",
		"detect.en.fillers", "detect.en.wh", "detect.en.aux", "detect.en.subjects",
		"detect.en.starts", "detect.en.not_starts", "detect.en.contains",
		"detect.en.near_subjects", "detect.en.restarts",
		"detect.zh.ignore", "detect.zh.markers", "detect.zh.final_particles",
		"detect.zh.alternatives", "detect.zh.alternative_openers", "detect.zh.a_not_a",
	} {
		if !nonEmpty(lookup(doc, path)) {
			t.Errorf("%s is missing or empty", path)
		}
	}
	rules, _ := doc["classify"].([]any)
	if len(rules) == 0 {
		t.Fatal("classify is missing or empty")
	}
	frameworks := []string{"star", "carl", "statement"}
	for _, lang := range []string{"en", "zh"} {
		for i, r := range rules {
			if !nonEmpty(lookup(r.(map[string]any), lang)) {
				t.Errorf("classify[%d].%s is missing or empty", i, lang)
			}
		}
		for _, fw := range frameworks {
			base := "text." + lang + ".frameworks." + fw
			if !nonEmpty(lookup(doc, base+".name")) || !nonEmpty(lookup(doc, base+".steps")) {
				t.Errorf("%s lacks name or steps", base)
			}
		}
		for _, tips := range []string{"question_tips", "statement_tips"} {
			if !nonEmpty(lookup(doc, "text."+lang+"."+tips)) {
				t.Errorf("text.%s.%s is missing or empty", lang, tips)
			}
		}
	}
	if _, err := Parse(ScriptsJSON()); err != nil {
		t.Errorf("Parse(embedded): %v", err)
	}
}

func TestScriptsJSONIsACopy(t *testing.T) {
	t.Parallel()
	b := ScriptsJSON()
	b[0] = 'x'
	if !bytes.Equal(ScriptsJSON(), scriptsJSON) || scriptsJSON[0] == 'x' {
		t.Error("ScriptsJSON shares its bytes with the embedded file")
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		old     string // replaced once in the embedded file
		new     string
		wantErr string
	}{
		{"bad version", `"version": 1`, `"version": 2`, "version 2"},
		{"unknown field", `"version": 1`, `"version": 1, "extra": true`, "unknown field"},
		{"zero countdown", `"countdown_s": 8`, `"countdown_s": 0`, "countdown_s"},
		{"statement as default", `"default_framework": "star"`, `"default_framework": "statement"`, "default_framework"},
		{"missing framework", `"default_framework": "star"`, `"default_framework": "prep"`, "frameworks.prep is missing"},
		{"upper case phrase", `"tell me", "tell us"`, `"Tell me", "tell us"`, "not lower case"},
		{"double space phrase", `"tell me", "tell us"`, `"tell  me", "tell us"`, "single spaces"},
		{"empty marker list", `"final_particles": ["吗", "呢"]`, `"final_particles": []`, "zh.final_particles is empty"},
		{"missing zh text", `"zh": {
      "frameworks"`, `"fr": {
      "frameworks"`, "text.zh"},
		{"not json", `{`, `[`, "decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := string(scriptsJSON)
			if !strings.Contains(src, tt.old) {
				t.Fatalf("fixture %q no longer in scripts.json", tt.old)
			}
			_, err := Parse([]byte(strings.Replace(src, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse error = %v, want one with %q", err, tt.wantErr)
			}
		})
	}
}

// lookup follows a dotted path through decoded JSON objects.
func lookup(v any, path string) any {
	for _, key := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	return v
}

// nonEmpty reports whether v is a non-empty string or a non-empty list of
// non-empty strings.
func nonEmpty(v any) bool {
	switch v := v.(type) {
	case string:
		return v != ""
	case []any:
		for _, e := range v {
			if s, ok := e.(string); !ok || s == "" {
				return false
			}
		}
		return len(v) > 0
	}
	return false
}
