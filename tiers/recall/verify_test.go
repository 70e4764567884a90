package recall

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// sample is one dev item whose type and Asks let a template through: the
// verifier's inputs and whether the best template is the one asked.
type sample struct {
	x     [nInputs]float64
	right bool
}

// samples returns the items of obs that have a best template the
// verifier decides on: the design margin refuses some before it (see
// refused).
func samples(obs []observation) []sample {
	var out []sample
	for _, o := range obs {
		if o.got != "" && !refused(o.lang, o.rule, o.ev) {
			out = append(out, sample{x: inputs(o.lang, o.rule, o.ev), right: o.want != "" && o.got == o.want})
		}
	}
	return out
}

// verifierRidge is the fit's L2 penalty on the weights.
const verifierRidge = 1.0

// fitVerifier fits the logistic model to ss by Newton's method (the
// log-likelihood with verifierRidge is strictly concave, so 30 steps
// reach its maximum to machine precision) and returns the weights and the
// cut: the log-odds of the sample at which right hits minus verifierLoss
// times the others, counted from the most probable sample down, peak.
func fitVerifier(ss []sample) (w [nInputs]float64, cut float64) {
	for range 30 {
		var g [nInputs]float64
		var h [nInputs][nInputs]float64
		for _, s := range ss {
			p := 1 / (1 + math.Exp(-logit(w, s.x)))
			y := 0.0
			if s.right {
				y = 1
			}
			for j := range nInputs {
				g[j] += (p - y) * s.x[j]
				for k := range nInputs {
					h[j][k] += p * (1 - p) * s.x[j] * s.x[k]
				}
			}
		}
		for j := range nInputs {
			g[j] += verifierRidge * w[j]
			h[j][j] += verifierRidge
		}
		d := solve(h, g)
		for j := range nInputs {
			w[j] -= d[j]
		}
	}
	z := make([]float64, len(ss))
	order := make([]int, len(ss))
	for i, s := range ss {
		z[i], order[i] = logit(w, s.x), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(z[b], z[a]) }) // most probable first
	cut = math.Inf(1)
	var v, best float64
	for _, i := range order {
		if ss[i].right {
			v++
		} else {
			v -= verifierLoss
		}
		if v > best {
			best, cut = v, z[i]
		}
	}
	return w, cut
}

// solve returns x with a·x = b, by Gauss–Jordan elimination with partial
// pivoting.
func solve(a [nInputs][nInputs]float64, b [nInputs]float64) [nInputs]float64 {
	for c := range nInputs {
		p := c
		for r := c + 1; r < nInputs; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p], b[c], b[p] = a[p], a[c], b[p], b[c]
		for r := range nInputs {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k < nInputs; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	var x [nInputs]float64
	for i := range x {
		x[i] = b[i] / a[i][i]
	}
	return x
}

// devSamples observes every dev half with the real bank.
func devSamples(t *testing.T) (sets [][]observation, all []sample) {
	t.Helper()
	s, err := NewStore(realBank(t), Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range devSets(t) {
		obs := observe(t, s, loadHeldout(t, name))
		sets = append(sets, obs)
		all = append(all, samples(obs)...)
	}
	return sets, all
}

// TestVerifierWeights refits the verifier on the dev halves and fails
// when the shipped weights or cut differ from the fit: they must be what
// the data gives. On a change of the bank, the features or a dev half,
// paste what it prints into verify_weights.go.
// go test -run VerifierWeights -v ./tiers/recall/
func TestVerifierWeights(t *testing.T) {
	t.Parallel()
	_, all := devSamples(t)
	w, cut := fitVerifier(all)
	var b strings.Builder
	b.WriteString("var verifierWeights = [nInputs]float64{\n")
	for i, v := range w {
		fmt.Fprintf(&b, "\t%.10g,", v)
		if i%4 == 3 || i == nInputs-1 {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "}\n\nconst verifierCut = %.10g\n", cut)
	t.Logf("fitted on %d dev samples:\n%s", len(all), b.String())
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(b)) }
	for i := range w {
		if !near(verifierWeights[i], w[i]) {
			t.Errorf("weight %d: shipped %.10g, the dev halves give %.10g", i, verifierWeights[i], w[i])
		}
	}
	if !near(verifierCut, cut) {
		t.Errorf("cut: shipped %.10g, the dev halves give %.10g", verifierCut, cut)
	}
}
