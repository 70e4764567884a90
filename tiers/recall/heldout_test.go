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

// Floors just under the figures measured when the decision rule was fixed
// (the aims are 90% right, 3% wrong, 5% false hits; docs/benchmarks.md has
// the figures before and after and what is left). Every change was tuned
// on the dev halves only (TestCalibration's sweeps); the test halves and
// the final set were scored when a stop's rule was fixed. The figures
// after "from" are those of the rule before the second round of
// 2026-12-02 (the coverage floor, confirmation asks, the English threshold
// 0.12, 1,199 spoken wordings of the behavioural templates); "third round"
// marks what the Chinese coverage margin of 0.03 (was 0.02) changed;
// "2026-12-03" what coach's question rules of that day changed (a
// question a few words after its wh word or restarted mid-clause, 吗
// before a comma, openers of 还是, requests such as 打个分 and 写道题):
// 16 more right hits and 1 more false hit on the dev halves, 7 more right
// hits on the test halves and the final set, none wrong or false; and
// its topic turns of up to 8 words, with "versus" / 区别 as cues, 8 more
// right hits on heldout3's dev half, 2 more on the test halves and the
// final set. "untermed" marks coach's untermedLead and personal (the
// naive Bayes model may call a question without a technical term
// technical only at odds of 20 to 1 over behavioural, and never one that
// asks about the candidate as a person): 21 more right hits on the dev
// halves, none wrong or false; 10 more and 1 fewer right hits on the test
// halves and the final set, none wrong, and 3 more false hits. "Person"
// marks coach.AboutThePerson (a follow-up or statement that asks about
// the candidate as a person takes the usual rule, not the follow rule): 7
// more right hits on the dev halves, none wrong or false; 8 more right
// hits on the test halves and the final set, none wrong, 1 more false.
// "Asks" marks the question rules heldout7's dev half showed missing
// (kindly, numbered scorecard items, imperatives such as compute and
// given, 咋, 说下, 给定): 15 more right hits on heldout7's dev half, every
// other dev half unchanged; 8 more right hits on the test halves and the
// final set, and 1 more false hit (heldout3's).
var (
	// dev 82.5 / 1.4 / 2.8 (zh 82.0 / 1.1 / 5.7, en 83.0 / 1.7 / 0), from
	// 79.9 / 1.1 / 3.7; 2026-12-03 83.6 / 1.4 / 2.8 (zh 83.1, en 84.1);
	// untermed 86.4 (en 89.8); person 87.2 (zh 84.7).
	devFloors = map[string]floors{
		"all":  {right: 0.87, wrong: 0.015, falseHit: 0.03},
		LangZH: {right: 0.845, wrong: 0.015, falseHit: 0.06},
		LangEN: {right: 0.895, wrong: 0.02, falseHit: 0.005},
	}
	// test 81.2 / 1.4 / 2.9 (zh 84.1 / 1.6 / 2.0, en 78.3 / 1.1 / 3.8),
	// from 80.1 / 1.4 / 2.9; 2026-12-03 81.5 / 1.4 / 2.9 (en 78.9);
	// untermed 82.1 / 1.4 / 3.8 (en 80.0 / 1.1 / 5.7: one English
	// negative more is taken for a behavioural question, and hits); person
	// 82.4 (zh 84.6).
	testFloors = map[string]floors{
		"all":  {right: 0.82, wrong: 0.015, falseHit: 0.04},
		LangZH: {right: 0.835, wrong: 0.02, falseHit: 0.025},
		LangEN: {right: 0.795, wrong: 0.015, falseHit: 0.06},
	}
	// final 80.8 / 0.4 / 10.7 (zh 81.1 / 0.9 / 11.4, en 80.4 / 0 / 10.0),
	// from 77.7 / 0.9 / 11.1; 2026-12-03 81.4 / 0.4 / 10.7 (zh 81.6, en
	// 81.2), 81.6 (en 81.7) with that day's topic turns; untermed 82.5
	// (en 83.5); person 83.2 / 0.4 / 11.1 (zh 82.9 / 0.9 / 12.3); asks
	// 84.3 (zh 84.2, en 84.4).
	finalFloors = map[string]floors{
		"all":  {right: 0.84, wrong: 0.005, falseHit: 0.115},
		LangZH: {right: 0.84, wrong: 0.01, falseHit: 0.125},
		LangEN: {right: 0.84, wrong: 0.005, falseHit: 0.105},
	}
	// heldout2 (whole interviewer turns: acknowledgements, domain nouns,
	// unpunctuated run-ons; 119 unbanked technical questions among the
	// negatives): dev 55.8 / 1.4 / 5.9 (zh 55.4 / 1.0 / 2.9, en 56.1 / 1.9
	// / 8.8), from 54.3 / 1.4 / 5.1; third round 54.8 / 1.4 / 4.4 (zh 53.5
	// / 1.0 / 0); 2026-12-03 55.8 / 1.4 / 4.4 (en 57.9).
	dev2Floors = map[string]floors{
		"all":  {right: 0.57, wrong: 0.015, falseHit: 0.045},
		LangZH: {right: 0.55, wrong: 0.015, falseHit: 0.005},
		LangEN: {right: 0.595, wrong: 0.02, falseHit: 0.09},
	}
	// test 50.0 / 2.2 / 2.2 (zh 39.5 / 2.5 / 4.4, en 61.1 / 1.8 / 0), from
	// 47.4 / 1.3 / 2.2; third round 49.6 / 1.7 / 1.5 (zh 38.7 / 1.7 / 2.9);
	// untermed 49.1 (en 60.2: one technical question lost its type). Dev
	// untermed: 56.7 (en 59.8); 57.2 (zh 54.5) once 说说你 and 先聊聊 ask
	// after a check-in (test unchanged); person: dev 57.7 (zh 55.4), test
	// unchanged.
	test2Floors = map[string]floors{
		"all":  {right: 0.49, wrong: 0.02, falseHit: 0.02},
		LangZH: {right: 0.385, wrong: 0.02, falseHit: 0.03},
		LangEN: {right: 0.60, wrong: 0.02, falseHit: 0.005},
	}
	// heldout3 (interviewer turns from whole mock-interview transcripts,
	// labelled by meaning afterwards; many terse topic-only turns, "ACID"):
	// dev 70.2 / 0.8 / 5.6 (zh 69.3 / 0 / 7.1, en 71.2 / 1.6 / 3.6), from
	// 69.0 / 0.8 / 4.8, third round 70.2 / 0.8 / 4.8 (zh 69.3 / 0 / 5.7);
	// test 68.7 / 0.4 / 3.3 (zh 74.6 / 0 / 4.8, en 63.4 / 0.8 / 1.7), from
	// 67.5 / 0 / 4.1. 2026-12-03: dev 72.2 / 0.8 / 5.6 (zh 72.4 / 0 / 5.7,
	// en 72.0 / 1.6 / 5.4: "…你还有问题吗, actually we're out of time…"
	// asks now, and hits); test unchanged. With the topic turns of that
	// day: dev 75.4 / 0.8 / 5.6 (zh 73.2, en 77.6), test 69.1 / 0.4 / 3.3
	// (en 64.1). Untermed: dev 77.8 / 0.8 / 5.6 (zh 74.0, en 81.6), test
	// 69.9 (en 65.6); dev 78.2 (zh 74.8) with 说说你 and 先聊聊. Person: dev
	// 78.6 (zh 75.6), test 70.7 (zh 75.4, en 66.4). Asks: test 70.7 / 0.4 /
	// 4.1 (zh 75.4 / 0 / 6.5: one Chinese negative more asks, and hits).
	dev3Floors = map[string]floors{
		"all":  {right: 0.78, wrong: 0.01, falseHit: 0.06},
		LangZH: {right: 0.75, wrong: 0.005, falseHit: 0.06},
		LangEN: {right: 0.815, wrong: 0.02, falseHit: 0.055},
	}
	test3Floors = map[string]floors{
		"all":  {right: 0.70, wrong: 0.005, falseHit: 0.045},
		LangZH: {right: 0.75, wrong: 0.005, falseHit: 0.07},
		LangEN: {right: 0.66, wrong: 0.01, falseHit: 0.02},
	}
	// heldout4 (written intent first; see TestHeldout4Dev): dev 82.5 / 0.5
	// / 4.0 (zh 85.0 / 0 / 0, en 80.0 / 1.0 / 8.0), from 81.5 / 1.0 / 6.0;
	// test 75.0 / 0.5 / 3.0 (zh 77.0 / 1.0 / 6.0, en 73.0 / 0 / 0), from
	// 72.0 / 0.5 / 5.0. 2026-12-03: dev 83.5 / 0.5 / 4.0 (zh 86.0, en
	// 81.0); test unchanged. Untermed: dev 84.0 (zh 87.0, en 81.0), test
	// 76.0 (zh 78.0, en 74.0). Person: dev 85.0 (zh 88.0, en 82.0), test
	// 77.0 (zh 78.0, en 76.0).
	dev4Floors = map[string]floors{
		"all":  {right: 0.845, wrong: 0.01, falseHit: 0.045},
		LangZH: {right: 0.875, wrong: 0.005, falseHit: 0.005},
		LangEN: {right: 0.815, wrong: 0.015, falseHit: 0.085},
	}
	test4Floors = map[string]floors{
		"all":  {right: 0.765, wrong: 0.01, falseHit: 0.035},
		LangZH: {right: 0.775, wrong: 0.015, falseHit: 0.065},
		LangEN: {right: 0.755, wrong: 0.005, falseHit: 0.005},
	}
	// heldout5 (bank-blind whole interviews; see TestHeldout5Dev): dev 42.3
	// / 5.1 / 4.1 (zh 46.7 / 8.9 / 6.1, en 36.4 / 0 / 2.4), from 38.5 / 5.1
	// / 5.4, third round 42.3 / 2.6 / 4.1 (zh 46.7 / 4.4 / 6.1); test 36.8
	// / 7.9 / 7.1 (zh 36.4 / 2.3 / 9.7, en 37.5 / 15.6 / 4.8), from 36.8 /
	// 9.2 / 11.3, third round 36.8 / 7.9 / 6.7 (zh 36.4 / 2.3 / 8.8).
	// 2026-12-03: dev 43.6 / 2.6 / 4.1 (en 39.4), test 38.2 / 7.9 / 6.7
	// (zh 38.6). Untermed: dev 44.9 (en 42.4), test 38.2 / 7.9 / 7.1 (en
	// 37.5 / 15.6 / 5.6).
	dev5Floors = map[string]floors{
		"all":  {right: 0.435, wrong: 0.03, falseHit: 0.045},
		LangZH: {right: 0.465, wrong: 0.045, falseHit: 0.065},
		LangEN: {right: 0.39, wrong: 0.005, falseHit: 0.025},
	}
	test5Floors = map[string]floors{
		"all":  {right: 0.38, wrong: 0.08, falseHit: 0.075},
		LangZH: {right: 0.385, wrong: 0.025, falseHit: 0.09},
		LangEN: {right: 0.37, wrong: 0.16, falseHit: 0.06},
	}
	// heldout6 (bank-blind interview guides said live; see
	// TestHeldout6Dev), scored first with the second round's rule: dev
	// 35.3 / 5.9 / 7.2 (zh 37.3 / 5.9 / 11.6, en 33.3 / 5.9 / 2.9); test
	// 36.3 / 8.8 / 3.8 (zh 43.1 / 13.7 / 6.1, en 29.4 / 3.9 / 1.5). Third
	// round: dev 33.3 / 4.9 / 7.2 (zh 33.3 / 3.9 / 11.6); test 35.3 / 8.8 /
	// 3.0 (zh 41.2 / 13.7 / 4.5). 2026-12-03: dev unchanged, test 37.3 /
	// 8.8 / 3.0 (en 33.3 / 3.9 / 1.5). Untermed: dev 34.3 (zh 35.3), test
	// 37.3 / 8.8 / 3.8 (en 33.3 / 3.9 / 3.0).
	dev6Floors = map[string]floors{
		"all":  {right: 0.33, wrong: 0.05, falseHit: 0.075},
		LangZH: {right: 0.33, wrong: 0.04, falseHit: 0.12},
		LangEN: {right: 0.33, wrong: 0.06, falseHit: 0.03},
	}
	// heldout7 (the final set's process, other writers; see
	// TestHeldout7Dev): its dev half scored first with the person rule,
	// 47.7 / 1.9 / 3.3 (zh 48.1 / 2.8 / 6.7, en 47.2 / 0.9 / 0); asks 54.7 /
	// 1.9 / 3.3 (zh 51.9, en 57.4). Its test half, scored once after
	// that: 55.7 / 1.9 / 6.0 (zh 56.2 / 1.0 / 9.8, en 55.1 / 2.8 / 2.4).
	dev7Floors = map[string]floors{
		"all":  {right: 0.54, wrong: 0.02, falseHit: 0.035},
		LangZH: {right: 0.515, wrong: 0.03, falseHit: 0.07},
		LangEN: {right: 0.57, wrong: 0.01, falseHit: 0.005},
	}
	test7Floors = map[string]floors{
		"all":  {right: 0.55, wrong: 0.02, falseHit: 0.065},
		LangZH: {right: 0.56, wrong: 0.015, falseHit: 0.10},
		LangEN: {right: 0.545, wrong: 0.03, falseHit: 0.025},
	}
	test6Floors = map[string]floors{
		"all":  {right: 0.37, wrong: 0.09, falseHit: 0.04},
		LangZH: {right: 0.41, wrong: 0.14, falseHit: 0.05},
		LangEN: {right: 0.33, wrong: 0.04, falseHit: 0.035},
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
