package coach

import (
	_ "embed"
	"math"
	"slices"

	"sync"

	"go.yaml.in/yaml/v3"
)

// trainingSet is the labelled training set of the type classifier,
// spoken interviewer utterances written scenario by scenario (its header
// says how); the dev and test halves never train it.
//
//go:embed testdata/types_train.yaml
var trainingSet []byte

// bayes is a multinomial naive Bayes model over an utterance's tokens
// (see tokens), built once from the training counts (see counted). It is
// read-only after training.
type bayes struct {
	types []Type               // the types trained, in Types' order
	prior []float64            // per type: log P(type)
	unk   []float64            // per type: log probability of a token the type never saw
	logp  map[string][]float64 // per token, per type: log P(token | type), unk where the type never saw it
}

// bayesCounts are what the naive Bayes model is built from: the training
// set's counts. The server builds its model from them (model), and the
// page's offline coach builds the same model from the copy served in
// types.json (web/static/coach.js), so that both type a question alike.
type bayesCounts struct {
	Types  []Type           `json:"types"`  // the types trained, in Types' order
	Docs   []int            `json:"docs"`   // per type: training utterances
	Totals []int            `json:"totals"` // per type: tokens
	Tokens map[string][]int `json:"tokens"` // per token: (index into Types, count) pairs
	Alpha  float64          `json:"alpha"`  // additive smoothing (bayesAlpha)
}

// counted counts trainingSet once; a training set that does not decode
// gives nil, and Classify then runs on the rules alone.
var counted = sync.OnceValue(func() *bayesCounts {
	var set []struct {
		Lang string `yaml:"lang"`
		Type Type   `yaml:"type"`
		Text string `yaml:"text"`
	}
	if err := yaml.Unmarshal(trainingSet, &set); err != nil || len(set) == 0 {
		return nil
	}
	bc := &bayesCounts{Tokens: map[string][]int{}, Alpha: bayesAlpha}
	present := map[Type]bool{}
	for _, l := range set {
		present[l.Type] = true
	}
	index := map[Type]int{}
	for _, t := range Types {
		if present[t] {
			index[t] = len(bc.Types)
			bc.Types = append(bc.Types, t)
		}
	}
	bc.Docs = make([]int, len(bc.Types))
	bc.Totals = make([]int, len(bc.Types))
	perToken := map[string]map[int]int{}
	for _, l := range set {
		i, ok := index[l.Type]
		if !ok {
			continue // a type Classify does not know
		}
		bc.Docs[i]++
		for _, tok := range tokens(l.Text) {
			if perToken[tok] == nil {
				perToken[tok] = map[int]int{}
			}
			perToken[tok][i]++
			bc.Totals[i]++
		}
	}
	for tok, byType := range perToken {
		var pairs []int
		for i := range bc.Types {
			if n := byType[i]; n > 0 {
				pairs = append(pairs, i, n)
			}
		}
		bc.Tokens[tok] = pairs
	}
	return bc
})

// model builds the naive Bayes model from the training counts on first
// use; nil when there are none.
var model = sync.OnceValue(func() *bayes {
	bc := counted()
	if bc == nil {
		return nil
	}
	var docs int
	for _, d := range bc.Docs {
		docs += d
	}
	m := &bayes{types: bc.Types, logp: map[string][]float64{}}
	v := float64(len(bc.Tokens))
	for i := range bc.Types {
		m.prior = append(m.prior, math.Log(float64(bc.Docs[i])/float64(docs)))
		m.unk = append(m.unk, math.Log(bc.Alpha/(float64(bc.Totals[i])+bc.Alpha*v)))
	}
	for tok, pairs := range bc.Tokens {
		row := slices.Clone(m.unk)
		for k := 0; k+1 < len(pairs); k += 2 {
			i, n := pairs[k], float64(pairs[k+1])
			row[i] = math.Log((n + bc.Alpha) / (float64(bc.Totals[i]) + bc.Alpha*v))
		}
		m.logp[tok] = row
	}
	return m
})

// bayesAlpha is the additive smoothing of the naive Bayes model.
const bayesAlpha = 0.3

// classify returns the most probable type of text, its log-odds over
// Behavioural (0 when it is Behavioural), and false when the model is
// missing.
func (m *bayes) classify(text string) (Type, float64, bool) {
	if m == nil || len(m.types) == 0 {
		return "", 0, false
	}
	var buf [16]float64
	scores := append(buf[:0], m.prior...)
	for _, tok := range tokens(text) {
		row, ok := m.logp[tok]
		if !ok {
			row = m.unk
		}
		for i, p := range row {
			scores[i] += p
		}
	}
	best, behavioural := 0, 0
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
		if m.types[i] == Behavioural {
			behavioural = i
		}
	}
	return m.types[best], scores[best] - scores[behavioural], true
}

// tokens are the naive Bayes features of text: English words and word
// bigrams, Chinese characters and character bigrams, and the rules' cues
// (a question, a technical term, the candidate's experience, addressing
// the candidate) as pseudo-words.
func tokens(text string) []string {
	c := newCues(text)
	var out []string
	prev := "^"
	for _, w := range c.words {
		out = append(out, w, prev+"_"+w)
		prev = w
	}
	var rs []rune
	for _, r := range c.text {
		if r >= 0x4E00 && r <= 0x9FFF {
			rs = append(rs, r)
			continue
		}
		rs = appendHan(&out, rs)
	}
	appendHan(&out, rs)
	for _, cue := range [...]struct {
		name string
		on   bool
	}{{"#q", c.question}, {"#tech", c.tech}, {"#self", c.self}, {"#you", c.address}} {
		if cue.on { // in a fixed order, so that the scores' sums are the page's (coach.js)
			out = append(out, cue.name, cue.name, cue.name)
		}
	}
	return out
}

// appendHan adds the characters and character bigrams of a Chinese run
// to out and returns the run emptied.
func appendHan(out *[]string, rs []rune) []rune {
	for i := range rs {
		*out = append(*out, string(rs[i]))
		if i+1 < len(rs) {
			*out = append(*out, string(rs[i:i+2]))
		}
	}

	return rs[:0]
}
