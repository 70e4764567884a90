package recall

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// observation is one held-out item's raw match: the decision rule's inputs
// before any threshold.
type observation struct {
	lang, want string // want: the template asked; "" for a negative
	got        string
	sim, lead  float64
}

// observe matches every item of hs with no threshold and no margin.
func observe(t *testing.T, s *Store, hs heldoutSet) []observation {
	t.Helper()
	raw := *s
	raw.thresholds = map[string]float64{LangZH: 0, LangEN: 0}
	raw.margins = map[string]float64{LangZH: 0, LangEN: 0}
	var obs []observation
	add := func(it heldoutItem) {
		m, err := raw.match(t.Context(), it.Text, it.Lang, Mid, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Hit {
			m.TemplateID = ""
		}
		obs = append(obs, observation{lang: scriptOf(it.Text), want: it.ID, got: m.TemplateID, sim: m.Similarity, lead: m.Margin})
	}
	for _, p := range hs.Positives {
		add(p)
	}
	for _, n := range hs.Negatives {
		add(n)
	}
	return obs
}

// decide applies a threshold and a margin to observations of one language
// and returns the scores.
func decide(obs []observation, lang string, threshold, margin float64) scores {
	var sc scores
	for _, o := range obs {
		if o.lang != lang {
			continue
		}
		hit := o.got != "" && o.sim >= threshold && o.lead >= margin
		if o.want == "" {
			sc.falseHit.add(hit)
			continue
		}
		sc.right.add(hit && o.got == o.want)
		sc.wrong.add(hit && o.got != o.want)
	}
	return sc
}

// TestCalibration prints, per language, right, wrong and false-hit rates
// on the two dev halves (heldout_dev.yaml, heldout2_dev.yaml, and both
// together) over a grid of thresholds and margins, the data
// DefaultThresholds and DefaultMargins were chosen from.
// go test -run Calibration -v ./tiers/recall/
func TestCalibration(t *testing.T) {
	t.Parallel()
	s, err := NewStore(realBank(t), Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dev := observe(t, s, loadHeldout(t, "heldout_dev.yaml"))
	dev2 := observe(t, s, loadHeldout(t, "heldout2_dev.yaml"))
	both := append(slices.Clone(dev), dev2...)
	for _, lang := range []string{LangZH, LangEN} {
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s: threshold margin  dev right wrong false   dev2 right wrong false   both right wrong false\n", lang)
		for th := 0.08; th <= 0.301; th += 0.005 {
			for _, mg := range []float64{0, 0.01, 0.02, 0.025, 0.03, 0.05} {
				mark := ""
				if math.Abs(th-DefaultThresholds[lang]) < 1e-9 && mg == DefaultMargins[lang] {
					mark = "  <- default"
				}
				fmt.Fprintf(&b, "   %.3f  %.2f", th, mg)
				for _, obs := range [][]observation{dev, dev2, both} {
					sc := decide(obs, lang, th, mg)
					fmt.Fprintf(&b, "   %5.1f%% %5.1f%% %5.1f%%", 100*sc.right.frac(), 100*sc.wrong.frac(), 100*sc.falseHit.frac())
				}
				fmt.Fprintf(&b, "%s\n", mark)
			}
		}
		t.Log(b.String())
	}
}
