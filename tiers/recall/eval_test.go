package recall

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Floors of the measured accuracy on testdata/eval.yaml.
const (
	minEvalPositives = 150
	minEvalNegatives = 100
	minHitRate       = 0.85 // positives that hit their own template
	maxFalseHitRate  = 0.05 // negatives that hit any template
	minLowOverlap    = 0.25 // share of positives with little word overlap
	lowOverlap       = 1.0 / 3
)

// evalSet is testdata/eval.yaml: spoken paraphrases of bank questions,
// written independently of the bank's own paraphrases and labelled with
// the template they ask, and utterances that must match nothing.
type evalSet struct {
	Positives []evalItem `yaml:"positives"`
	Negatives []evalItem `yaml:"negatives"`
}

type evalItem struct {
	ID   string `yaml:"id"` // expected template; empty for negatives
	Text string `yaml:"text"`
}

// lang is the session language the item is asked in: its own script.
func (i evalItem) lang() string { return scriptOf(i.Text) }

func loadEval(t testing.TB) evalSet {
	t.Helper()
	data, err := os.ReadFile("testdata/eval.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ev evalSet
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("eval.yaml: %v", err)
	}
	return ev
}

// contentUnits are what word overlap is measured on: content-word stems in
// English, character bigrams (fillers cut) in Chinese.
func contentUnits(text string) map[string]bool {
	units := make(map[string]bool)
	for _, seg := range splitSegments(normalizeText(text)) {
		if seg.han {
			for _, p := range cutFillersZH([]rune(seg.text)) {
				for i := 0; i+2 <= len(p); i++ {
					units[string(p[i:i+2])] = true
				}
			}
			continue
		}
		for _, w := range seg.words {
			if !stopWordsEN[w] {
				units[stem(w)] = true
			}
		}
	}
	return units
}

// overlap is the share of the canonical wording's content units that text
// also has.
func overlap(text, canonical string) float64 {
	c := contentUnits(canonical)
	if len(c) == 0 {
		return 0
	}
	n := 0
	for u := range contentUnits(text) {
		if c[u] {
			n++
		}
	}
	return float64(n) / float64(len(c))
}

// rate is a counter of successes over trials.
type rate struct{ n, of int }

func (r *rate) add(ok bool) {
	r.of++
	if ok {
		r.n++
	}
}

func (r rate) frac() float64 {
	if r.of == 0 {
		return 0
	}
	return float64(r.n) / float64(r.of)
}

func (r rate) String() string {
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*r.frac(), r.n, r.of)
}

// TestEvalSetIndependent checks the evaluation set itself: large enough,
// both languages, real template ids, no copy of any bank wording, and at
// least a quarter of positives with little word overlap with the canonical
// question.
func TestEvalSetIndependent(t *testing.T) {
	b := realBank(t)
	ev := loadEval(t)
	if len(ev.Positives) < minEvalPositives || len(ev.Negatives) < minEvalNegatives {
		t.Fatalf("%d positives and %d negatives, want at least %d and %d", len(ev.Positives), len(ev.Negatives), minEvalPositives, minEvalNegatives)
	}
	bankWordings := make(map[string]string)
	for _, q := range b.Questions {
		for _, lang := range []string{LangZH, LangEN} {
			for _, w := range append([]string{q.Wording(lang)}, q.Paraphrases.In(lang)...) {
				bankWordings[normalizeQuestion(w)] = q.ID
			}
		}
	}
	langs := make(map[string]int)
	var low rate
	for _, p := range ev.Positives {
		q := b.Question(p.ID)
		if q == nil {
			t.Errorf("positive %q: unknown template %q", p.Text, p.ID)
			continue
		}
		if id, ok := bankWordings[normalizeQuestion(p.Text)]; ok {
			t.Errorf("positive %q copies a wording of %s", p.Text, id)
		}
		langs[p.lang()]++
		low.add(overlap(p.Text, q.Wording(p.lang())) < lowOverlap)
	}
	for _, n := range ev.Negatives {
		if n.ID != "" {
			t.Errorf("negative %q has an id", n.Text)
		}
		langs[n.lang()]++
	}
	if langs[LangZH] == 0 || langs[LangEN] == 0 {
		t.Errorf("languages %v, want both zh and en", langs)
	}
	t.Logf("low word overlap (< %.2f of the canonical's content words): %v of positives", lowOverlap, low)
	if low.frac() < minLowOverlap {
		t.Errorf("low-overlap positives %v, want at least %.0f%%", low, 100*minLowOverlap)
	}
}

// TestEval measures template recall on testdata/eval.yaml and enforces the
// floors: at least 85% of positives hit their own template (a hit on a
// wrong template counts as a miss) and at most 5% of negatives hit any.
func TestEval(t *testing.T) {
	hit, neg := runEval(t, realBank(t))
	if hit.frac() < minHitRate {
		t.Errorf("hit rate %v, want at least %.0f%%", hit, 100*minHitRate)
	}
	if neg.frac() > maxFalseHitRate {
		t.Errorf("false-hit rate %v, want at most %.0f%%", neg, 100*maxFalseHitRate)
	}
}

// runEval matches every item of the evaluation set against b, logs misses,
// false hits and the rates, and returns the positives' hit rate and the
// negatives' false-hit rate.
func runEval(t *testing.T, b *Bank) (hit, neg rate) {
	t.Helper()
	s, err := NewStore(b, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := loadEval(t)
	seniorities := []string{Junior, Mid, Senior}
	var wrong, lowHit rate
	byLang := map[string]*rate{LangZH: {}, LangEN: {}}
	for i, p := range ev.Positives {
		m, err := s.Match(t.Context(), p.Text, p.lang(), seniorities[i%3])
		if err != nil {
			t.Fatal(err)
		}
		ok := m.Hit && m.TemplateID == p.ID
		hit.add(ok)
		wrong.add(m.Hit && m.TemplateID != p.ID)
		byLang[p.lang()].add(ok)
		if q := b.Question(p.ID); q != nil && overlap(p.Text, q.Wording(p.lang())) < lowOverlap {
			lowHit.add(ok)
		}
		if !ok {
			t.Logf("miss  %-14s got %-14s %.3f hit=%v  %q", p.ID, m.TemplateID, m.Similarity, m.Hit, p.Text)
		}
	}
	for _, n := range ev.Negatives {
		m, err := s.Match(t.Context(), n.Text, n.lang(), Mid)
		if err != nil {
			t.Fatal(err)
		}
		neg.add(m.Hit)
		if m.Hit {
			t.Logf("false %-14s %.3f  %q", m.TemplateID, m.Similarity, n.Text)
		}
	}
	t.Logf("threshold %.2f: positives hit %v (zh %v, en %v; low-overlap %v), wrong-template hits %v; negatives false hits %v",
		s.threshold, hit, *byLang[LangZH], *byLang[LangEN], lowHit, wrong, neg)
	return hit, neg
}
