package coach

import (
	"encoding/json"
	"testing"
)

// TestRulesAgreement measures what the browser's offline coach covers: how
// often the rules alone (ClassifyRules, which coach.js ports) give the
// labelled type of the dev half, against Classify with its model. The
// figures are logged; the floors keep the port honest.
func TestRulesAgreement(t *testing.T) {
	set := loadLabelled(t, "types_dev.yaml")
	var rules, full, agree int
	for _, l := range set {
		r, c := ClassifyRules(l.Text, l.Lang), Classify(l.Text, l.Lang)
		if r == l.Type {
			rules++
		}
		if c == l.Type {
			full++
		}
		if r == c {
			agree++
		}
	}
	n := float64(len(set))
	t.Logf("dev half, %d utterances: rules alone right %.1f%%, Classify right %.1f%%, agreeing %.1f%%",
		len(set), 100*float64(rules)/n, 100*float64(full)/n, 100*float64(agree)/n)
	if float64(rules)/n < 0.85 || float64(agree)/n < 0.80 {
		t.Errorf("rules alone right %d/%d, agreeing %d/%d: under the floors (85%%, 80%%)", rules, len(set), agree, len(set))
	}
}

func TestLexiconJSON(t *testing.T) {
	var f lexiconFile
	if err := json.Unmarshal(LexiconJSON(), &f); err != nil {
		t.Fatal(err)
	}
	if f.Version != lexiconVersion {
		t.Errorf("version %d", f.Version)
	}
	for _, k := range []string{"smalltalk", "logistics", "coding", "design", "project", "project_tech", "concept",
		"concept_first", "concept_weak", "tech", "request", "address", "self"} {
		if len(f.EN[k]) == 0 || len(f.ZH[k]) == 0 {
			t.Errorf("%s: %d en, %d zh entries", k, len(f.EN[k]), len(f.ZH[k]))
		}
	}
	b := LexiconJSON()
	b[0] = 'x'
	if LexiconJSON()[0] != '{' {
		t.Error("LexiconJSON returned the shared slice")
	}
}
