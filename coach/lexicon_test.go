package coach

import (
	"encoding/json"
	"testing"
)

// TestRulesAgreement measures what the browser's offline coach covers: how
// often the rules alone (ClassifyRules, which coach.js ports) give the
// labelled type, against Classify with its model, on the dev half (which
// the rules were tuned on) and the test half. The floors keep the port
// honest; the test half shows how far the rules carry beyond the half
// they fit (75.4% against the model's 88.4%, 2026-12-03).
func TestRulesAgreement(t *testing.T) {
	for _, half := range []struct {
		name              string
		rulesFloor, agree float64
	}{{"types_dev.yaml", 0.85, 0.80}, {"types_test.yaml", 0.74, 0.70}} {
		set := loadLabelled(t, half.name)
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
		t.Logf("%s, %d utterances: rules alone right %.1f%%, Classify right %.1f%%, agreeing %.1f%%",
			half.name, len(set), 100*float64(rules)/n, 100*float64(full)/n, 100*float64(agree)/n)
		if float64(rules)/n < half.rulesFloor || float64(agree)/n < half.agree {
			t.Errorf("%s: rules alone right %d/%d, agreeing %d/%d: under the floors (%.0f%%, %.0f%%)",
				half.name, rules, len(set), agree, len(set), 100*half.rulesFloor, 100*half.agree)
		}
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
