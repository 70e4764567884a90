package recall

import "math"

// BM25 constants of the lexical index: k1 saturates a feature's term
// frequency, b normalises by the wording's length.
const (
	bm25K1 = 1.2
	bm25B  = 0.5
)

// lexical is a BM25 inverted index over the features of a set of
// wordings (the offline embedder's features: English stems, stem
// bigrams and word n-grams, Chinese character n-grams, lexicon concepts).
// It generates a query's candidates and scores them; it is read-only
// after newLexical.
type lexical struct {
	postings map[uint64][]posting // feature → wordings that have it
	idf      map[uint64]float64
	docLen   []float64 // weighted feature mass per wording
	docMass  []float64 // idf-weighted feature mass per wording (see cover)
	avgLen   float64
	maxIDF   float64 // idf of a feature in one wording only
	weights  [numKinds]float64
}

type posting struct {
	doc int32
	tf  float32
}

// newLexical indexes docs (each wording's features) with weights per
// feature family.
func newLexical(docs []map[uint64]featureCount, weights [numKinds]float64) *lexical {
	lx := &lexical{postings: make(map[uint64][]posting), idf: make(map[uint64]float64),
		docLen: make([]float64, len(docs)), docMass: make([]float64, len(docs)), weights: weights}
	var total float64
	for i, fs := range docs {
		for h, f := range fs {
			lx.postings[h] = append(lx.postings[h], posting{doc: int32(i), tf: float32(f.tf)})
			lx.docLen[i] += f.tf * weights[f.kind]
		}
		total += lx.docLen[i]
	}
	n := float64(len(docs))
	lx.avgLen = max(total/max(n, 1), 1)
	for h, ps := range lx.postings {
		df := float64(len(ps))
		lx.idf[h] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	lx.maxIDF = math.Log(1 + (n-0.5)/1.5)
	for i, fs := range docs {
		for h, f := range fs {
			lx.docMass[i] += sublinear(f.tf) * weights[f.kind] * lx.idf[h]
		}
	}
	return lx
}

// score adds to acc (one slot per wording) the BM25 score of every
// wording sharing a feature with the query fs, to cov the idf mass of
// the features they share (see coverage) and to rare the highest idf of
// them (a single Chinese character left out), appends each wording it
// first touches to touched, and returns touched and the query's best possible
// score: every feature matched at saturation, a feature the index never
// saw at maxIDF, so that words no wording uses lower the normalised score.
// It reads only the postings of the query's features.
func (lx *lexical) score(fs map[uint64]featureCount, acc, cov, rare []float64, touched []int32) (best float64, _ []int32) {
	for h, f := range fs {
		qw := sublinear(f.tf) * lx.weights[f.kind]
		idf, ok := lx.idf[h]
		if !ok {
			best += qw * lx.maxIDF
			continue
		}
		best += qw * idf
		for _, p := range lx.postings[h] {
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*lx.docLen[p.doc]/lx.avgLen)
			if acc[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			acc[p.doc] += qw * idf * tf * (bm25K1 + 1) / (tf + norm)
			cov[p.doc] += min(sublinear(f.tf), sublinear(tf)) * lx.weights[f.kind] * idf
			if f.kind != kindChar {
				rare[p.doc] = max(rare[p.doc], idf)
			}
		}
	}
	return best * (bm25K1 + 1), touched
}

// coverSmoothing is idf mass added to every wording's own in coverage, so
// that a short wording of two or three features is not covered by any
// utterance that shares them.
const coverSmoothing = 20

// coverage is the share of wording d's idf-weighted feature mass that a
// query shares (cov[d] from score), smoothed by coverSmoothing: near 1
// when an utterance contains all of one wording, however much else it
// says. A whole interviewer turn ("OK, thanks. We run a logistics platform
// here... so how would you...?") dilutes the normalised BM25 score by its
// length, but not this.
func (lx *lexical) coverage(d int32, shared float64) float64 {
	return shared / (lx.docMass[d] + coverSmoothing)
}
