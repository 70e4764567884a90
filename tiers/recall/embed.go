package recall

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
)

// embedderVersion names the offline embedder's feature scheme; change it
// whenever features or weights change, so stored vectors are never mixed.
const embedderVersion = "offline-hash-v1"

// defaultDim is the offline embedder's vector length. Dimension 0 holds the
// mass of features the bank never uses; the rest hold hashed bank features.
// 1024 keeps a query over the whole bank well under a millisecond and
// hashing collisions rare (signed hashing makes them cancel on average).
const defaultDim = 1024

// featureKind tells the offline embedder's feature families apart; each has
// its own weight.
type featureKind uint8

const (
	kindWord    featureKind = iota // English stem
	kindBigram                     // two adjacent English content stems
	kindChar                       // Chinese character
	kindChar2                      // two Chinese characters
	kindChar3                      // three Chinese characters
	kindConcept                    // a lexicon concept, in either language
	numKinds
)

// kindWeights scale each family. Concepts weigh most because they carry
// meaning across wordings and languages; single Chinese characters least
// because most are ambiguous alone.
var kindWeights = [numKinds]float64{
	kindWord:    1.0,
	kindBigram:  0.8,
	kindChar:    0.3,
	kindChar2:   1.0,
	kindChar3:   0.7,
	kindConcept: 1.6,
}

// oovShare scales the idf of a feature the bank never uses (which goes to
// dimension 0): off-topic words lower the similarity, but a little less than
// a rare bank word would, since fillers and lead-ins are often unseen words.
const oovShare = 0.7

// Embedder is the offline bilingual embedder: a feature-hashed, idf
// weighted bag of English stems and stem bigrams, Chinese character 1-3
// grams and lexicon concepts, returned as a unit vector. It is read-only
// after construction and safe for concurrent use.
type Embedder struct {
	dim    int
	lex    *lexicon
	idf    map[uint64]float64 // feature hash → idf, for features the bank uses
	oovIDF float64
}

// NewEmbedder builds the offline embedder, with idf computed over the
// bank's templates: a feature's document frequency is the number of
// templates whose wordings (canonical and paraphrases, both languages)
// contain it.
func NewEmbedder(b *Bank) (*Embedder, error) {
	lex, err := compileLexicon(conceptTable)
	if err != nil {
		return nil, err
	}
	e := &Embedder{dim: defaultDim, lex: lex, idf: make(map[uint64]float64)}
	df := make(map[uint64]int)
	for _, q := range b.Questions {
		seen := make(map[uint64]bool)
		for _, lang := range []string{LangZH, LangEN} {
			for _, w := range append([]string{q.Wording(lang)}, q.Paraphrases.In(lang)...) {
				for h := range e.features(w) {
					seen[h] = true
				}
			}
		}
		for h := range seen {
			df[h]++
		}
	}
	n := float64(b.Len())
	for h, d := range df {
		e.idf[h] = math.Log((n+1)/(float64(d)+1)) + 1
	}
	e.oovIDF = oovShare * (math.Log(n+1) + 1)
	return e, nil
}

// Version names the embedding scheme.
func (e *Embedder) Version() string { return embedderVersion }

// Func adapts Embed to chromem-go. It never returns nil vectors, so chromem
// never falls back to its OpenAI default.
func (e *Embedder) Func() func(ctx context.Context, text string) ([]float32, error) {
	return func(_ context.Context, text string) ([]float32, error) {
		return e.Embed(text), nil
	}
}

// Embed returns the unit vector of text. A text without any feature (empty,
// only fillers) gets dimension 0, which no bank wording uses, so it is
// similar to nothing.
func (e *Embedder) Embed(text string) []float32 {
	v := make([]float64, e.dim)
	var oov float64
	for h, f := range e.features(text) {
		w := (1 + math.Log(float64(f.tf))) * kindWeights[f.kind]
		idf, known := e.idf[h]
		if !known {
			oov += (w * e.oovIDF) * (w * e.oovIDF)
			continue
		}
		i := 1 + int(h%uint64(e.dim-1))
		if h>>63 == 1 {
			w = -w
		}
		v[i] += w * idf
	}
	v[0] = math.Sqrt(oov)
	return unit(v)
}

// unit scales v to length 1 as float32; the zero vector becomes the unit
// vector on dimension 0.
func unit(v []float64) []float32 {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, len(v))
	if sum == 0 {
		out[0] = 1
		return out
	}
	norm := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// featureCount is one feature's family and term frequency in a text.
type featureCount struct {
	kind featureKind
	tf   int
}

// features extracts the hashed features of text with their counts.
func (e *Embedder) features(text string) map[uint64]featureCount {
	fs := make(map[uint64]featureCount)
	add := func(kind featureKind, s string) {
		h := featureHash(kind, s)
		fc := fs[h]
		fc.kind = kind
		fc.tf++
		fs[h] = fc
	}
	addConcept := func(c int) { add(kindConcept, e.lex.names[c]) }
	for _, seg := range splitSegments(normalizeText(text)) {
		if seg.han {
			rs := []rune(seg.text)
			e.lex.matchZH(rs, addConcept)
			hanFeatures(rs, add)
			continue
		}
		stems := make([]string, len(seg.words))
		for i, w := range seg.words {
			stems[i] = stem(w)
		}
		e.lex.matchEN(stems, addConcept)
		wordFeatures(seg.words, stems, add)
	}
	return fs
}

// wordFeatures adds the stems of an English segment's content words and
// the bigrams of adjacent content words; fillers and stop words are skipped
// and bridged.
func wordFeatures(words, stems []string, add func(featureKind, string)) {
	prev := ""
	for i, w := range words {
		if stopWordsEN[w] {
			continue
		}
		add(kindWord, stems[i])
		if prev != "" {
			add(kindBigram, prev+" "+stems[i])
		}
		prev = stems[i]
	}
}

// hanFeatures adds character 1-, 2- and 3-grams of a Chinese run, after
// cutting it at fillers and particles so that no n-gram spans them.
func hanFeatures(rs []rune, add func(featureKind, string)) {
	for _, piece := range cutFillersZH(rs) {
		for i := range piece {
			if !stopCharsZH[piece[i]] {
				add(kindChar, string(piece[i]))
			}
			if i+2 <= len(piece) {
				add(kindChar2, string(piece[i:i+2]))
			}
			if i+3 <= len(piece) {
				add(kindChar3, string(piece[i:i+3]))
			}
		}
	}
}

// cutFillersZH splits a Chinese run at spoken fillers ("那个", "就是") and
// particles ("的", "吗"), dropping them.
func cutFillersZH(rs []rune) [][]rune {
	var pieces [][]rune
	start := 0
	for i := 0; i < len(rs); {
		n := fillerAt(rs, i)
		if n == 0 {
			i++
			continue
		}
		if i > start {
			pieces = append(pieces, rs[start:i])
		}
		i += n
		start = i
	}
	if start < len(rs) {
		pieces = append(pieces, rs[start:])
	}
	return pieces
}

// fillerAt returns the length in runes of the filler starting at rs[i], or 0.
func fillerAt(rs []rune, i int) int {
	for _, f := range fillersZH {
		if hasRunePrefix(rs[i:], f) {
			return len(f)
		}
	}
	if particlesZH[rs[i]] {
		return 1
	}
	return 0
}

func hasRunePrefix(rs, prefix []rune) bool {
	return len(rs) >= len(prefix) && equalRunes(rs[:len(prefix)], prefix)
}

// featureHash hashes a feature with its family (FNV-1a, stable across runs
// and machines, so vectors could be stored and compared later).
func featureHash(kind featureKind, s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte{byte(kind)})
	h.Write([]byte(s))
	return h.Sum64()
}

// stopWordsEN are English function words and spoken fillers: they add no
// feature of their own (concept terms still see them).
var stopWordsEN = setOf(strings.Fields(`
a an the and or but if so of to in on at for with about as by from into
over is are was were be been being am do does did done have has had i me my
mine myself we us our you your yours he she him his her it its they them
their this that these those there here what which who whom whose when where
why how can could would should will shall may might must just really very
um uh umm uhh erm er ah oh hmm mm okay ok alright right well like great
thanks thank cool sure yeah yes yep please let tell say said some any bit
little maybe also then now next go going get got one thing things kind sort
actually basically mean wanna gonna gotta quick quickly know gotcha awesome
perfect nice good fine sounds anyway anything something all not no out up
more most much lot lots ever every again still too than other
`))

// fillersZH are spoken Chinese fillers and politeness formulas, longest
// first, cut out before n-grams are taken.
var fillersZH = runesOf(strings.Fields(`
就是说 我想问 你能不能 能不能 可不可以 那个 这个 就是 然后 那么 好的 谢谢
一下 的话 请问 我想 可以 你能 麻烦 嗯嗯 对吧 是吧 好吧 接下来 下面
`))

// particlesZH are single-character particles and interjections, cut out
// like fillers.
var particlesZH = setOfRunes("的了吗呢吧啊呀嘛嗯呃哦哈噢诶")

// stopCharsZH add no unigram feature of their own, but stay inside n-grams.
var stopCharsZH = setOfRunes("你我他她它们是在有和与就也都很还这那个一不什么怎么样吗请说讲聊谈下")

func setOf(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func setOfRunes(s string) map[rune]bool {
	m := make(map[rune]bool)
	for _, r := range s {
		m[r] = true
	}
	return m
}

func runesOf(words []string) [][]rune {
	out := make([][]rune, len(words))
	for i, w := range words {
		out[i] = []rune(w)
	}
	return out
}
