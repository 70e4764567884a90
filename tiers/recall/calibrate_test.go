package recall

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/poise-dev/poise/coach"
)

// observation is one held-out item's raw match: the decision rule's inputs
// before any threshold.
type observation struct {
	lang, want string // want: the template asked; "" for a negative
	got        string // "" when the utterance's type or Asks allows no template
	typ        coach.Type
	ev         evidence
}

// observe matches every item of hs with the lexical matcher, before the
// decision rule.
func observe(t *testing.T, s *Store, hs heldoutSet) []observation {
	t.Helper()
	var obs []observation
	add := func(it heldoutItem) {
		o := observation{lang: scriptOf(it.Text), want: it.ID, typ: coach.Classify(it.Text, it.Lang)}
		if kind, ok := family(o.typ); ok && coach.Asks(it.Text) {
			o.got, o.ev = s.nearest(s.cols[collectionKey(o.lang, kind)], it.Text)
		}
		obs = append(obs, o)
	}
	for _, p := range hs.Positives {
		add(p)
	}
	for _, n := range hs.Negatives {
		add(n)
	}
	return obs
}

// decide applies the rule of a store with thresholds th, margins mg and
// whole-turn rules w to observations of one language and returns the
// scores.
func decide(obs []observation, lang string, th, mg float64, w wholeTurn) scores {
	return decideTopic(obs, lang, th, mg, w, defaultTopicShare)
}

// decideTopic is decide with a topic share other than the default.
func decideTopic(obs []observation, lang string, th, mg float64, w wholeTurn, topic float64) scores {
	s := &Store{thresholds: map[string]float64{lang: th}, margins: map[string]float64{lang: mg},
		wholeTurn: map[string]wholeTurn{lang: w}, topicShare: topic}
	return tally(obs, lang, func(o observation) bool { return s.hit(lang, o.typ, o.ev) })
}

// ceiling scores obs of one language as if every best template the type
// and Asks gates let through were a hit: its right hits are the most any
// decision rule can give on this ranking.
func ceiling(obs []observation, lang string) scores {
	return tally(obs, lang, func(observation) bool { return true })
}

// cells formats sc as one sweep cell: right, wrong and false-hit percent.
func (sc scores) cells() string {
	return fmt.Sprintf("   %5.1f %4.1f %4.1f", 100*sc.right.frac(), 100*sc.wrong.frac(), 100*sc.falseHit.frac())
}

// tally scores the observations of one language that have a best
// template, with hit deciding which of them are hits.
func tally(obs []observation, lang string, hit func(observation) bool) scores {
	var sc scores
	for _, o := range obs {
		if o.lang != lang {
			continue
		}
		h := o.got != "" && hit(o)
		if o.want == "" {
			sc.falseHit.add(h)
			continue
		}
		sc.right.add(h && o.got == o.want)
		sc.wrong.add(h && o.got != o.want)
	}
	return sc
}

// TestCalibration prints, per language, right, wrong and false-hit rates
// on the dev halves (see devSets) over grids of each part of the decision rule,
// the others at their defaults: the data DefaultThresholds, DefaultMargins
// and wholeTurns were chosen from.
// go test -run Calibration -v ./tiers/recall/
func TestCalibration(t *testing.T) {
	t.Parallel()
	s, err := NewStore(realBank(t), Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sets [][]observation
	var names []string
	for _, name := range devSets(t) {
		sets = append(sets, observe(t, s, loadHeldout(t, name)))
		names = append(names, strings.TrimSuffix(name, ".yaml"))
	}
	row := func(b *strings.Builder, lang string, th, mg float64, w wholeTurn, mark bool) {
		for _, obs := range sets {
			b.WriteString(decide(obs, lang, th, mg, w).cells())
		}
		if mark {
			b.WriteString("  <- default")
		}
		b.WriteString("\n")
	}
	for _, lang := range []string{LangZH, LangEN} {
		th0, mg0, w0 := DefaultThresholds[lang], DefaultMargins[lang], wholeTurns[lang]
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s (right wrong false on %s)\nevery best template taken", lang, strings.Join(names, ", "))
		for _, obs := range sets {
			b.WriteString(ceiling(obs, lang).cells())
		}
		b.WriteString("  <- the most right hits any rule on this ranking can give\nthreshold margin\n")
		for th := 0.08; th <= 0.201; th += 0.01 {
			for _, mg := range []float64{0, 0.01, 0.025, 0.04} {
				fmt.Fprintf(&b, "   %.3f  %.3f", th, mg)
				row(&b, lang, th, mg, w0, math.Abs(th-th0) < 1e-9 && mg == mg0)
			}
		}
		b.WriteString("cover coverMargin\n")
		for _, cv := range []float64{0.3, 0.35, 0.4, 0.45, 0.5, 2} {
			for _, cm := range []float64{0.01, 0.02, 0.035, 0.05} {
				w := w0
				w.cover, w.coverMargin = cv, cm
				fmt.Fprintf(&b, "   %.3f  %.3f", cv, cm)
				row(&b, lang, th0, mg0, w, w == w0)
			}
		}
		b.WriteString("minCover (every hit)\n")
		for _, mc := range []float64{0, 0.15, 0.2, 0.22, 0.25, 0.28, 0.3, 0.35} {
			w := w0
			w.minCover = mc
			fmt.Fprintf(&b, "   %.3f       ", mc)
			row(&b, lang, th0, mg0, w, w == w0)
		}
		b.WriteString("topicShare (technical questions)\n")
		for _, ts := range []float64{0, 0.5, 0.55, 0.6, 0.62, 0.65, 0.7, 0.75} {
			fmt.Fprintf(&b, "   %.3f       ", ts)
			for _, obs := range sets {
				b.WriteString(decideTopic(obs, lang, th0, mg0, w0, ts).cells())
			}
			if ts == defaultTopicShare {
				b.WriteString("  <- default")
			}
			b.WriteString("\n")
		}
		b.WriteString("followThreshold followMargin\n")
		for _, ft := range []float64{0.12, 0.16, 0.18, 0.2, 0.24, 0.28, 2} {
			for _, fm := range []float64{0.02, 0.05} {
				w := w0
				w.followThreshold, w.followMargin = ft, fm
				fmt.Fprintf(&b, "   %.3f  %.3f", ft, fm)
				row(&b, lang, th0, mg0, w, w == w0)
			}
		}
		t.Log(b.String())
	}
}

// devSets names the held-out dev halves in testdata, oldest first: the
// sets the decision rule is tuned on (their test halves never are).
func devSets(t *testing.T) []string {
	t.Helper()
	return []string{"heldout_dev.yaml", "heldout2_dev.yaml", "heldout3_dev.yaml", "heldout4_dev.yaml", "heldout5_dev.yaml", "heldout6_dev.yaml", "heldout7_dev.yaml"}
}

// TestParaphraseCurve prints the ranking's ceiling (see ceiling) on the
// dev halves when each template keeps only its first k paraphrases per
// language, then all of them: whether more wordings of the kind the bank
// holds would still raise it. docs/benchmarks.md says they no longer do on
// the whole: from 8 to 12 the right hits of a language, averaged over the
// dev halves, may rise by at most flatGain (a half of about fifty
// positives moves by 4 points with two of them, so one half alone is
// printed, not judged). go test -run ParaphraseCurve -v ./tiers/recall/
func TestParaphraseCurve(t *testing.T) {
	t.Parallel()
	const flatGain = 0.03
	var b strings.Builder
	fmt.Fprintf(&b, "\nparaphrases  zh right wrong false on %s; then en", strings.Join(devSets(t), ", "))
	const all = math.MaxInt
	right := map[int][]float64{} // k → right share per language and dev half
	for _, k := range []int{4, 8, 12, 16, all} {
		bank := ownBank(t)
		for _, q := range bank.Questions {
			q.Paraphrases.ZH = q.Paraphrases.ZH[:min(k, len(q.Paraphrases.ZH))]
			q.Paraphrases.EN = q.Paraphrases.EN[:min(k, len(q.Paraphrases.EN))]
		}
		s, err := NewStore(bank, Config{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var obs [][]observation
		for _, name := range devSets(t) {
			obs = append(obs, observe(t, s, loadHeldout(t, name)))
		}
		if k == all {
			b.WriteString("\n  all       ")
		} else {
			fmt.Fprintf(&b, "\n  %2d        ", k)
		}
		for _, lang := range []string{LangZH, LangEN} {
			for _, o := range obs {
				sc := ceiling(o, lang)
				right[k] = append(right[k], sc.right.frac())
				b.WriteString(sc.cells())
			}
			b.WriteString("  |")
		}
	}
	t.Log(b.String())
	halves := len(devSets(t))
	for l, lang := range []string{LangZH, LangEN} {
		var gain float64
		for i := l * halves; i < (l+1)*halves; i++ {
			gain += right[12][i] - right[8][i]
		}
		if gain /= float64(halves); gain > flatGain {
			t.Errorf("%s: 8 → 12 paraphrases raise the ceiling by %.1f points over the dev halves, over %.0f: docs/benchmarks.md no longer holds",
				lang, 100*gain, 100*flatGain)
		}
	}
}
