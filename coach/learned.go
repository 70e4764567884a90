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
// (see tokens), trained once from trainingSet. It is read-only after
// training.
type bayes struct {
	types []Type               // the types trained, in Types' order
	prior []float64            // per type: log P(type)
	unk   []float64            // per type: log probability of a token the type never saw
	logp  map[string][]float64 // per token, per type: log P(token | type), unk where the type never saw it
}

// model trains the naive Bayes model on first use; a training set that
// does not decode leaves it nil and Classify on the rules alone.
var model = sync.OnceValue(func() *bayes {
	var set []struct {
		Lang string `yaml:"lang"`
		Type Type   `yaml:"type"`
		Text string `yaml:"text"`
	}
	if err := yaml.Unmarshal(trainingSet, &set); err != nil || len(set) == 0 {
		return nil
	}
	counts := map[Type]map[string]float64{}
	totals := map[Type]float64{}
	docs := map[Type]float64{}
	vocab := map[string]bool{}
	for _, l := range set {
		if counts[l.Type] == nil {
			counts[l.Type] = map[string]float64{}
		}
		docs[l.Type]++
		for _, tok := range tokens(l.Text) {
			counts[l.Type][tok]++
			totals[l.Type]++
			vocab[tok] = true
		}
	}
	m := &bayes{logp: map[string][]float64{}}
	v := float64(len(vocab))
	for _, t := range Types {
		if counts[t] == nil {
			continue
		}
		m.types = append(m.types, t)
		m.prior = append(m.prior, math.Log(docs[t]/float64(len(set))))
		m.unk = append(m.unk, math.Log(bayesAlpha/(totals[t]+bayesAlpha*v)))
	}
	for tok := range vocab {
		row := slices.Clone(m.unk)
		for i, t := range m.types {
			if n, ok := counts[t][tok]; ok {
				row[i] = math.Log((n + bayesAlpha) / (totals[t] + bayesAlpha*v))
			}
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
	for name, on := range map[string]bool{"#q": c.question, "#tech": c.tech, "#self": c.self, "#you": c.address} {
		if on {
			out = append(out, name, name, name)
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
