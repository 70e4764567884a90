package coach

import (
	_ "embed"
	"math"

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
	prior map[Type]float64
	logp  map[Type]map[string]float64
	unk   map[Type]float64 // log probability of a token the type never saw
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
	m := &bayes{prior: map[Type]float64{}, logp: map[Type]map[string]float64{}, unk: map[Type]float64{}}
	v := float64(len(vocab))
	for t, c := range counts {
		m.prior[t] = math.Log(docs[t] / float64(len(set)))
		m.logp[t] = make(map[string]float64, len(c))
		for tok, n := range c {
			m.logp[t][tok] = math.Log((n + bayesAlpha) / (totals[t] + bayesAlpha*v))
		}
		m.unk[t] = math.Log(bayesAlpha / (totals[t] + bayesAlpha*v))
	}
	return m
})

// bayesAlpha is the additive smoothing of the naive Bayes model.
const bayesAlpha = 0.3

// classify returns the most probable type of text, and false when the
// model is missing.
func (m *bayes) classify(text string) (Type, bool) {
	if m == nil {
		return "", false
	}
	toks := tokens(text)
	best, bestScore := Type(""), math.Inf(-1)
	for _, t := range Types {
		lp, ok := m.logp[t]
		if !ok {
			continue
		}
		s := m.prior[t]
		for _, tok := range toks {
			if p, ok := lp[tok]; ok {
				s += p
			} else {
				s += m.unk[t]
			}
		}
		if s > bestScore {
			best, bestScore = t, s
		}
	}
	return best, best != ""
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
