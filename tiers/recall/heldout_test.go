package recall

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// heldoutSet is testdata/heldout_dev.yaml or heldout_test.yaml: spoken
// interviewer utterances written by a different process from the bank's
// paraphrases, labelled with the template they ask (positives) or with
// the kind of utterance that must match none (negatives).
type heldoutSet struct {
	Positives []heldoutItem `yaml:"positives"`
	Negatives []heldoutItem `yaml:"negatives"`
}

type heldoutItem struct {
	ID   string `yaml:"id"`   // positives: the template asked
	Kind string `yaml:"kind"` // negatives: near_miss, tech_followup, tech_unbanked or other
	Lang string `yaml:"lang"`
	Text string `yaml:"text"`
}

func loadHeldout(t testing.TB, name string) heldoutSet {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var hs heldoutSet
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&hs); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return hs
}

// scores are the three recall figures of one slice of a held-out set.
type scores struct {
	right, wrong rate // positives that hit their own template, another one
	falseHit     rate // negatives that hit any template
}

// heldoutScores matches every item of hs with s and returns the scores
// overall ("all") and per language; with verbose it logs every miss and
// false hit (never for the test half, whose texts must not steer tuning).
func heldoutScores(t *testing.T, s *Store, hs heldoutSet, verbose bool) map[string]*scores {
	t.Helper()
	out := map[string]*scores{"all": {}, LangZH: {}, LangEN: {}}
	for i, p := range hs.Positives {
		m, err := s.Match(t.Context(), p.Text, p.Lang, []string{Junior, Mid, Senior}[i%3])
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"all", p.Lang, bankOf(p.ID)} {
			if out[k] == nil {
				out[k] = &scores{}
			}
			out[k].right.add(m.Hit && m.TemplateID == p.ID)
			out[k].wrong.add(m.Hit && m.TemplateID != p.ID)
		}
		if verbose && (!m.Hit || m.TemplateID != p.ID) {
			t.Logf("miss  %-13s got %-13s hit=%-5v %.3f  %q", p.ID, m.TemplateID, m.Hit, m.Similarity, p.Text)
		}
	}
	for _, n := range hs.Negatives {
		m, err := s.Match(t.Context(), n.Text, n.Lang, Mid)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"all", n.Lang, n.Kind} {
			if out[k] == nil {
				out[k] = &scores{}
			}
			out[k].falseHit.add(m.Hit)
		}
		if verbose && m.Hit {
			t.Logf("false %-13s %-13s %.3f  %q", n.Kind, m.TemplateID, m.Similarity, n.Text)
		}
	}
	return out
}

// table renders scores as rows of right, wrong and false-hit rates.
func table(sc map[string]*scores) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-14s %-22s %-22s %-22s\n", "slice", "right", "wrong", "false hits")
	for _, k := range []string{"all", LangZH, LangEN, "behavioural", "technical", "near_miss", "tech_followup", "tech_unbanked", "other"} {
		if s := sc[k]; s != nil {
			fmt.Fprintf(&b, "%-14s %-22v %-22v %-22v\n", k, s.right, s.wrong, s.falseHit)
		}
	}
	return b.String()
}

// floors are the least right-hit rate and the most wrong-hit and
// false-hit rates a slice of a held-out set may show.
type floors struct{ right, wrong, falseHit float64 }

// check fails t for every figure of sc beyond its floor.
func (f floors) check(t *testing.T, slice string, sc *scores) {
	t.Helper()
	if sc.right.frac() < f.right {
		t.Errorf("%s: right %v, want at least %.1f%%", slice, sc.right, 100*f.right)
	}
	if sc.wrong.frac() > f.wrong {
		t.Errorf("%s: wrong %v, want at most %.1f%%", slice, sc.wrong, 100*f.wrong)
	}
	if sc.falseHit.frac() > f.falseHit {
		t.Errorf("%s: false hits %v, want at most %.1f%%", slice, sc.falseHit, 100*f.falseHit)
	}
}

// Floors just under the figures measured with the verifier (see verify)
// fitted on the dev halves, 2026-12-03, after the specificity evidence
// (see collection.specificity) and coach's coding and logistics rules
// deciding on their own; right, wrong and false hits, %. The test
// halves and the final set were scored after the model was fixed;
// heldout8 was written after the first verifier and is not in the fit.
// docs/benchmarks.md has the hand-set rule's figures before it, its
// history, and how often each test half was scored. The aims are 90%
// right, 3% wrong, 5% false hits.
var (
	// heldout_dev: 92.8 / 0.8 / 1.9 (zh 92.3 / 0.0 / 3.8, en 93.2 / 1.7 / 0.0)
	devFloors = map[string]floors{
		"all":  {right: 0.925, wrong: 0.01, falseHit: 0.02},
		LangZH: {right: 0.92, wrong: 0.005, falseHit: 0.04},
		LangEN: {right: 0.93, wrong: 0.02, falseHit: 0.005},
	}
	// heldout_test: 84.0 / 1.1 / 4.8 (zh 88.5 / 1.1 / 3.9, en 79.4 / 1.1 / 5.7)
	testFloors = map[string]floors{
		"all":  {right: 0.835, wrong: 0.015, falseHit: 0.05},
		LangZH: {right: 0.88, wrong: 0.015, falseHit: 0.04},
		LangEN: {right: 0.79, wrong: 0.015, falseHit: 0.06},
	}
	// heldout_final: 87.6 / 0.0 / 8.1 (zh 90.4 / 0.0 / 8.8, en 84.8 / 0.0 / 7.5)
	finalFloors = map[string]floors{
		"all":  {right: 0.875, wrong: 0.005, falseHit: 0.085},
		LangZH: {right: 0.9, wrong: 0.005, falseHit: 0.09},
		LangEN: {right: 0.845, wrong: 0.005, falseHit: 0.08},
	}
	// heldout2_dev: 67.3 / 1.0 / 4.4 (zh 71.3 / 0.0 / 2.9, en 63.6 / 1.9 / 5.9)
	dev2Floors = map[string]floors{
		"all":  {right: 0.67, wrong: 0.015, falseHit: 0.045},
		LangZH: {right: 0.71, wrong: 0.005, falseHit: 0.03},
		LangEN: {right: 0.635, wrong: 0.02, falseHit: 0.06},
	}
	// heldout2_test: 62.1 / 0.4 / 2.2 (zh 58.0 / 0.0 / 2.9, en 66.4 / 0.9 / 1.5);
	// 61.6 (en 65.5) before the eighth session's technical terms
	test2Floors = map[string]floors{
		"all":  {right: 0.615, wrong: 0.005, falseHit: 0.025},
		LangZH: {right: 0.575, wrong: 0.005, falseHit: 0.03},
		LangEN: {right: 0.65, wrong: 0.01, falseHit: 0.02},
	}
	// heldout3_dev: 82.9 / 0.8 / 2.4 (zh 80.3 / 0.0 / 2.9, en 85.6 / 1.6 / 1.8)
	dev3Floors = map[string]floors{
		"all":  {right: 0.825, wrong: 0.01, falseHit: 0.025},
		LangZH: {right: 0.8, wrong: 0.005, falseHit: 0.03},
		LangEN: {right: 0.855, wrong: 0.02, falseHit: 0.02},
	}
	// heldout3_test: 74.3 / 0.8 / 0.8 (zh 78.8 / 0.0 / 1.6, en 70.2 / 1.5 / 0.0)
	test3Floors = map[string]floors{
		"all":  {right: 0.74, wrong: 0.01, falseHit: 0.01},
		LangZH: {right: 0.785, wrong: 0.005, falseHit: 0.02},
		LangEN: {right: 0.7, wrong: 0.02, falseHit: 0.005},
	}
	// heldout4_dev: 89.0 / 0.0 / 5.0 (zh 91.0 / 0.0 / 2.0, en 87.0 / 0.0 / 8.0)
	dev4Floors = map[string]floors{
		"all":  {right: 0.885, wrong: 0.005, falseHit: 0.055},
		LangZH: {right: 0.905, wrong: 0.005, falseHit: 0.025},
		LangEN: {right: 0.865, wrong: 0.005, falseHit: 0.085},
	}
	// heldout4_test: 84.5 / 1.0 / 2.0 (zh 82.0 / 2.0 / 4.0, en 87.0 / 0.0 / 0.0)
	test4Floors = map[string]floors{
		"all":  {right: 0.84, wrong: 0.015, falseHit: 0.025},
		LangZH: {right: 0.815, wrong: 0.025, falseHit: 0.045},
		LangEN: {right: 0.865, wrong: 0.005, falseHit: 0.005},
	}
	// heldout5_dev: 46.2 / 2.6 / 2.9 (zh 51.1 / 4.4 / 4.3, en 39.4 / 0.0 / 1.6)
	dev5Floors = map[string]floors{
		"all":  {right: 0.46, wrong: 0.03, falseHit: 0.03},
		LangZH: {right: 0.51, wrong: 0.045, falseHit: 0.045},
		LangEN: {right: 0.39, wrong: 0.005, falseHit: 0.02},
	}
	// heldout5_test: 39.5 / 5.3 / 4.6 (zh 38.6 / 2.3 / 5.3, en 40.6 / 9.4 / 4.0);
	// false 5.0 (zh 6.2) before the eighth session's technical terms
	test5Floors = map[string]floors{
		"all":  {right: 0.39, wrong: 0.055, falseHit: 0.055},
		LangZH: {right: 0.385, wrong: 0.025, falseHit: 0.065},
		LangEN: {right: 0.405, wrong: 0.095, falseHit: 0.045},
	}
	// heldout6_dev: 33.3 / 5.9 / 2.9 (zh 41.2 / 5.9 / 2.9, en 25.5 / 5.9 / 2.9)
	dev6Floors = map[string]floors{
		"all":  {right: 0.33, wrong: 0.06, falseHit: 0.03},
		LangZH: {right: 0.41, wrong: 0.06, falseHit: 0.03},
		LangEN: {right: 0.25, wrong: 0.06, falseHit: 0.03},
	}
	// heldout6_test: 39.2 / 4.9 / 2.3 (zh 47.1 / 7.8 / 3.0, en 31.4 / 2.0 / 1.5)
	test6Floors = map[string]floors{
		"all":  {right: 0.39, wrong: 0.05, falseHit: 0.025},
		LangZH: {right: 0.47, wrong: 0.08, falseHit: 0.035},
		LangEN: {right: 0.31, wrong: 0.025, falseHit: 0.02},
	}
	// heldout7_dev: 65.0 / 0.9 / 0.0 (zh 65.1 / 0.9 / 0.0, en 64.8 / 0.9 / 0.0)
	dev7Floors = map[string]floors{
		"all":  {right: 0.645, wrong: 0.01, falseHit: 0.005},
		LangZH: {right: 0.65, wrong: 0.01, falseHit: 0.005},
		LangEN: {right: 0.645, wrong: 0.01, falseHit: 0.005},
	}
	// heldout7_test: 60.4 / 1.4 / 3.6 (zh 61.0 / 1.9 / 7.3, en 59.8 / 0.9 / 0.0)
	test7Floors = map[string]floors{
		"all":  {right: 0.6, wrong: 0.015, falseHit: 0.04},
		LangZH: {right: 0.605, wrong: 0.02, falseHit: 0.075},
		LangEN: {right: 0.595, wrong: 0.01, falseHit: 0.005},
	}
	// heldout9_final: 75.0 / 1.4 / 4.0 (zh 70.0 / 0.9 / 0.0, en 80.0 / 1.8 / 8.0),
	// since its second scoring, after the bank's 16 new paraphrases a
	// template (unchanged by the eighth session's two classifier changes,
	// its third and fourth); its first: 69.1 / 1.4 / 4.0 (the tree before
	// the session that wrote it: 64.5 / 0.9 / 2.0)
	final9Floors = map[string]floors{
		"all":  {right: 0.745, wrong: 0.015, falseHit: 0.045},
		LangZH: {right: 0.695, wrong: 0.01, falseHit: 0.005},
		LangEN: {right: 0.795, wrong: 0.02, falseHit: 0.085},
	}
	// heldout10_final: 53.5 / 0.5 / 8.0 (zh 50.0 / 0.0 / 6.0, en 57.0 / 1.0 / 10.0)
	// since the eighth session's technical terms (its second scoring; its
	// third, for the personal guard on logistics, moved nothing); its
	// first: 53.0 (en 56.0); the tree before the new paraphrases: 49.0 / 1.0 / 8.0
	final10Floors = map[string]floors{
		"all":  {right: 0.525, wrong: 0.01, falseHit: 0.085},
		LangZH: {right: 0.495, wrong: 0.005, falseHit: 0.065},
		LangEN: {right: 0.555, wrong: 0.015, falseHit: 0.105},
	}
	// heldout11_dev: 57.5 / 0.5 / 10.0 (zh 59.0 / 0.0 / 8.0, en 56.0 / 1.0 / 12.0);
	// 57.0 (en 55.0) before the eighth session's technical terms
	dev11Floors = map[string]floors{
		"all":  {right: 0.565, wrong: 0.01, falseHit: 0.105},
		LangZH: {right: 0.585, wrong: 0.005, falseHit: 0.085},
		LangEN: {right: 0.545, wrong: 0.015, falseHit: 0.125},
	}
	// heldout8_dev: 91.7 / 0.0 / 9.3 (zh 91.3 / 0.0 / 14.6, en 92.2 / 0.0 / 4.1)
	// the hand-set rule before the verifier: 85.0 / 0.0 / 14.4
	dev8Floors = map[string]floors{
		"all":  {right: 0.915, wrong: 0.005, falseHit: 0.095},
		LangZH: {right: 0.91, wrong: 0.005, falseHit: 0.15},
		LangEN: {right: 0.92, wrong: 0.005, falseHit: 0.045},
	}
	// heldout8_test: 91.7 / 1.0 / 12.2 (zh 90.2 / 1.0 / 13.3, en 93.2 / 1.0 / 11.1)
	// the hand-set rule: 89.8 / 1.0 / 16.7
	test8Floors = map[string]floors{
		"all":  {right: 0.915, wrong: 0.015, falseHit: 0.125},
		LangZH: {right: 0.9, wrong: 0.015, falseHit: 0.135},
		LangEN: {right: 0.93, wrong: 0.015, falseHit: 0.115},
	}
)

// TestHeldoutDev scores template recall on testdata/heldout_dev.yaml, the
// half the decision rule was tuned on, prints the table and checks the
// floors. go test -run Heldout -v ./tiers/recall/
func TestHeldoutDev(t *testing.T) { testHeldout(t, "heldout_dev.yaml", devFloors, true) }

// TestHeldoutFinal scores testdata/heldout_final.yaml, a third set written
// after the matcher was tuned, by interviewer personas, from nothing but
// each template's canonical question, and scored once when the matcher
// was final (its floors are just under that one scoring). Aggregates only.
func TestHeldoutFinal(t *testing.T) { testHeldout(t, "heldout_final.yaml", finalFloors, false) }

// TestHeldoutTest scores testdata/heldout_test.yaml, the half never tuned
// on, the same way, printing aggregate figures only.
func TestHeldoutTest(t *testing.T) { testHeldout(t, "heldout_test.yaml", testFloors, false) }

// TestHeldout4Dev scores testdata/heldout4_dev.yaml: utterances written
// intent first (a note of what the interviewer wants to learn, then the
// note said aloud in one of six styles, without the template's wording in
// view), by a helper that read only the templates' canonical questions.
// Its dev half was tuned on; it prints its misses.
func TestHeldout4Dev(t *testing.T) { testHeldout(t, "heldout4_dev.yaml", dev4Floors, true) }

// TestHeldout4Test scores heldout4's test half, aggregates only.
func TestHeldout4Test(t *testing.T) { testHeldout(t, "heldout4_test.yaml", test4Floors, false) }

func testHeldout(t *testing.T, name string, fl map[string]floors, verbose bool) {
	t.Parallel() // each test builds its own store
	s, err := NewStore(realBank(t), Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := loadHeldout(t, name)
	sc := heldoutScores(t, s, hs, verbose)
	obs := observe(t, s, hs)
	t.Logf("%s:%s\nevery best template taken (right wrong false): zh%s, en%s", name, table(sc),
		ceiling(obs, LangZH).cells(), ceiling(obs, LangEN).cells())
	for _, slice := range []string{"all", LangZH, LangEN} {
		fl[slice].check(t, slice, sc[slice])
	}
}

// bankOf names the bank a template id belongs to.
func bankOf(id string) string {
	for _, p := range []string{"design-", "concept-", "coding-"} {
		if strings.HasPrefix(id, p) {
			return "technical"
		}
	}
	return "behavioural"
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

// TestHeldout2Dev scores testdata/heldout2_dev.yaml, the dev half of a
// second set written by another process (whole interviewer turns imagined
// in a concrete interview, with many technical questions the bank does not
// hold), printing its misses.
func TestHeldout2Dev(t *testing.T) { testHeldout(t, "heldout2_dev.yaml", dev2Floors, true) }

// TestHeldout2Test scores testdata/heldout2_test.yaml, the other half,
// never tuned on: aggregates only.
func TestHeldout2Test(t *testing.T) { testHeldout(t, "heldout2_test.yaml", test2Floors, false) }

// TestHeldout3Dev scores testdata/heldout3_dev.yaml, the dev half of a
// third set written blind by another process (interviewer turns taken from
// whole mock-interview transcripts and labelled by meaning afterwards),
// printing its misses.
func TestHeldout3Dev(t *testing.T) { testHeldout(t, "heldout3_dev.yaml", dev3Floors, true) }

// TestHeldout3Test scores testdata/heldout3_test.yaml, the other half,
// scored once when the matcher was final: aggregates only.
func TestHeldout3Test(t *testing.T) { testHeldout(t, "heldout3_test.yaml", test3Floors, false) }

// TestHeldout5Dev scores testdata/heldout5_dev.yaml, the dev half of a
// fifth set written bank-blind (whole mock interviews first, labelled
// against the templates' canonical questions afterwards, so that its
// positives are the turns that happen to ask a banked question and most
// of its negatives are follow-ups on the candidate's own work), printing
// its misses.
func TestHeldout5Dev(t *testing.T) { testHeldout(t, "heldout5_dev.yaml", dev5Floors, true) }

// TestHeldout5Test scores testdata/heldout5_test.yaml, the other half:
// aggregates only.
func TestHeldout5Test(t *testing.T) { testHeldout(t, "heldout5_test.yaml", test5Floors, false) }

// TestHeldout6Dev scores testdata/heldout6_dev.yaml, the dev half of a
// sixth set written bank-blind by yet another process (interview guides,
// the question lists companies hand their interviewers, said live; labelled
// against the templates' canonical questions afterwards), printing its
// misses. Scored once, with the rule of the second round; nothing was
// tuned on it yet.
func TestHeldout6Dev(t *testing.T) { testHeldout(t, "heldout6_dev.yaml", dev6Floors, true) }

// TestHeldout6Test scores testdata/heldout6_test.yaml, the other half:
// aggregates only.
func TestHeldout6Test(t *testing.T) { testHeldout(t, "heldout6_test.yaml", test6Floors, false) }

// TestHeldout7Dev scores testdata/heldout7_dev.yaml, the dev half of a
// seventh set written by the final set's process (one live interviewer
// persona per utterance, as a recognizer transcribes it) by other
// writers, printing its misses: the final set's figures can then be read
// beside a dev half of its own kind.
func TestHeldout7Dev(t *testing.T) { testHeldout(t, "heldout7_dev.yaml", dev7Floors, true) }

// TestHeldout7Test scores testdata/heldout7_test.yaml, the other half:
// aggregates only.
func TestHeldout7Test(t *testing.T) { testHeldout(t, "heldout7_test.yaml", test7Floors, false) }

// TestHeldout8Dev scores testdata/heldout8_dev.yaml, the dev half of an
// eighth set written across languages (each writer saw the intent only
// in the other language, never the bank's wording in its own), after the
// verifier was fitted, printing its misses.
func TestHeldout8Dev(t *testing.T) { testHeldout(t, "heldout8_dev.yaml", dev8Floors, true) }

// TestHeldout8Test scores heldout8's test half, aggregates only.
func TestHeldout8Test(t *testing.T) { testHeldout(t, "heldout8_test.yaml", test8Floors, false) }

// TestHeldout9Final scores testdata/heldout9_final.yaml, interviewer turns
// written for ten imagined interview loops in their own domains (its
// header says how), after every change it could have steered. Scored
// once for that session's tree, once after the next session's new
// paraphrases and twice for the session after's classifier changes,
// never tuned on (its floors are just under the second scoring).
// Aggregates only.
func TestHeldout9Final(t *testing.T) {
	testHeldout(t, "heldout9_final.yaml", final9Floors, false)
}

// TestHeldout11Dev scores testdata/heldout11_dev.yaml, written by
// heldout10's process (interviewers' second phrasings) by another writer:
// a dev set, tuned on, printing its misses; heldout10 is its test.
func TestHeldout11Dev(t *testing.T) { testHeldout(t, "heldout11_dev.yaml", dev11Floors, true) }

// TestHeldout10Final scores testdata/heldout10_final.yaml, the second
// phrasings of interviewers asked to rephrase (its header says how),
// written beside the bank's newest paraphrases by a helper that never saw
// them; scored once then and twice for the next session's classifier
// changes (its floors are just under the first scoring). Aggregates only.
func TestHeldout10Final(t *testing.T) {
	testHeldout(t, "heldout10_final.yaml", final10Floors, false)
}
