package recall

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestStem(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{"manage", "managing", "managed", "management"},
		{"manager", "managers"},
		{"leave", "leaving", "leaves"},
		{"motivate", "motivated", "motivation", "motivates"},
		{"company", "companies"},
		{"plan", "planning", "plans", "planned"},
		{"weakness", "weaknesses"},
		{"conflict", "conflicts"},
	}
	for _, g := range groups {
		want := stem(g[0])
		for _, w := range g[1:] {
			if got := stem(w); got != want {
				t.Errorf("stem(%q) = %q, want %q like stem(%q)", w, got, want, g[0])
			}
		}
	}
	for _, w := range []string{"process", "focus", "analysis", "yes", "team", "other", "together"} {
		if got := stem(w); got != w {
			t.Errorf("stem(%q) = %q, want it unchanged", w, got)
		}
	}
}

func TestSplitSegments(t *testing.T) {
	t.Parallel()
	segs := splitSegments(normalizeText("ＯＫ，what’s your 缺点? Don't worry. 你好"))
	var got []string
	for _, s := range segs {
		if s.han {
			got = append(got, "zh:"+s.text)
		} else {
			got = append(got, "en:"+strings.Join(s.words, " "))
		}
	}
	want := []string{"en:ok what your", "zh:缺点", "en:do not worry", "zh:你好"}
	if !slices.Equal(got, want) {
		t.Errorf("segments = %q, want %q", got, want)
	}
}

func TestCompileLexiconRejects(t *testing.T) {
	t.Parallel()
	for _, table := range []string{
		"a = weakness | 缺点\na = strength",
		"a = 缺点weakness",
		"no equals sign",
		"a = weakness | ",
	} {
		if _, err := compileLexicon(table); err == nil {
			t.Errorf("compileLexicon(%q) succeeded, want an error", table)
		}
	}
}

// TestLexiconTermsMatch checks that every term of the concept table is
// found in a sentence that contains it, so no term is dead because of how
// text is tokenized.
func TestLexiconTermsMatch(t *testing.T) {
	t.Parallel()
	lx, err := compileLexicon(conceptTable)
	if err != nil {
		t.Fatal(err)
	}
	e := &Embedder{lex: lx}
	for line := range strings.Lines(conceptTable) {
		name, terms, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		for term := range strings.SplitSeq(terms, "|") {
			term = strings.TrimSpace(term)
			text := "so, " + term + " then?"
			if countHan(term) > 0 {
				text = "嗯，" + term + "呢？"
			}
			if _, ok := e.features(text)[featureHash(kindConcept, name)]; !ok {
				t.Errorf("concept %s: term %q not found in %q", name, term, text)
			}
		}
	}
}

func TestEmbedUnitVectors(t *testing.T) {
	t.Parallel()
	e, err := NewEmbedder(fixtureBank(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "   ", "嗯嗯", "um, uh", "What is your greatest weakness?", "你最大的缺点是什么？", "zzz qqq", "混合 mixed 文本"} {
		for name, v := range map[string][]float32{"EmbedQuery": e.EmbedQuery(text), "EmbedDocument": e.EmbedDocument(text)} {
			if len(v) != defaultDim {
				t.Fatalf("%s(%q): %d dims, want %d", name, text, len(v), defaultDim)
			}
			var sum float64
			for _, x := range v {
				sum += float64(x) * float64(x)
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("%s(%q): squared norm %v, want 1", name, text, sum)
			}
		}
	}
	for _, text := range []string{"um, uh", "zzz qqq", "嗯嗯"} {
		v := e.EmbedQuery(text)
		if i := slices.IndexFunc(v[firstConceptDim:], func(x float32) bool { return x != 0 }); i >= 0 {
			t.Errorf("EmbedQuery(%q) has bank feature %d: fillers and unknown words must match nothing", text, i)
		}
	}
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

// TestEmbedSimilarityOrder checks the embedder's sense of meaning on pairs
// that share few words: a paraphrase must be nearer than an unrelated
// question, in each language and across languages (through concepts).
func TestEmbedSimilarityOrder(t *testing.T) {
	t.Parallel()
	e, err := NewEmbedder(fixtureBank(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ anchor, near, far string }{
		{"What is your greatest weakness?", "Which area do you still need to improve?", "Why do you want to leave your current job?"},
		{"你最大的缺点是什么？", "你有哪些短板？", "你为什么想离开现在的公司？"},
		{"Why do you want to leave your current job?", "为什么要从现在的公司离职？", "What is your greatest weakness?"},
		{"请简单介绍一下你自己。", "Introduce yourself, please.", "你最大的缺点是什么？"},
	}
	for _, tt := range tests {
		a := e.EmbedDocument(tt.anchor)
		near, far := cosine(a, e.EmbedQuery(tt.near)), cosine(a, e.EmbedQuery(tt.far))
		if near <= far {
			t.Errorf("%q: near %q = %.3f, far %q = %.3f; want near > far", tt.anchor, tt.near, near, tt.far, far)
		}
	}
	if got := cosine(e.EmbedQuery("Why quit now?"), e.EmbedQuery("why QUIT now?")); got < 0.999 {
		t.Errorf("case changed the vector: cosine %.4f", got)
	}
	if got := cosine(e.EmbedQuery("ｗｈｙ ｑｕｉｔ？"), e.EmbedQuery("why quit?")); got < 0.999 {
		t.Errorf("full-width letters changed the vector: cosine %.4f", got)
	}
}

func TestFeatureHashesAgree(t *testing.T) {
	t.Parallel()
	if bigramHash("manag", "team") != featureHash(kindBigram, "manag team") {
		t.Error("bigramHash differs from featureHash of the joined bigram")
	}
	rs := []rune("缺点é")
	if runesHash(kindChar3, rs) != featureHash(kindChar3, string(rs)) {
		t.Error("runesHash differs from featureHash of the string")
	}
}

func TestCountEN(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"": 0, "Hi, I'm [name] - a well-known dev.": 7, "我是[姓名]": 2} {
		if got := countEN(s); got != want {
			t.Errorf("countEN(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestGramFeaturesHashTheMarkedWord checks that gramFeatures hashes each
// n-gram of "<word>" as featureHash would the n-gram itself.
func TestGramFeaturesHashTheMarkedWord(t *testing.T) {
	for _, w := range []string{"a", "go", "lead", "leadership"} {
		var got []uint64
		gramFeatures(w, func(k featureKind, h uint64, _ int) {
			if k != kindGram {
				t.Errorf("%q: feature of kind %d", w, k)
			}
			got = append(got, h)
		})
		var want []uint64
		for g := "<" + w + ">"; len(g) >= gramLen; g = g[1:] {
			want = append(want, featureHash(kindGram, g[:gramLen]))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: %d grams %x, want %d %x", w, len(got), got, len(want), want)
		}
	}
}
