package recall

import (
	"context"
	"math"
	"testing"
)

// FuzzMatch feeds arbitrary text, languages and seniorities to Match: it
// must not fail or panic, similarities stay within [0, 1], query vectors
// stay unit length, and a hit always carries an answer.
// go test -fuzz FuzzMatch -fuzztime 30s ./tiers/recall/
func FuzzMatch(f *testing.F) {
	s := fixtureStore(f, Config{}, nil)
	for _, seed := range []string{"", "?", "嗯", "What is your greatest weakness?", "ｗｈｙ　ｑｕｉｔ？", "你的weakness是什么", "can't won't I'm", "\x00\xff", "。。。？？？"} {
		f.Add(seed, "zh", "senior")
		f.Add(seed, "xx", "")
	}
	f.Fuzz(func(t *testing.T, text, lang, seniority string) {
		m, err := s.Match(context.Background(), text, lang, seniority)
		if err != nil {
			t.Fatal(err)
		}
		if m.Similarity < 0 || m.Similarity > 1.0001 || math.IsNaN(m.Similarity) {
			t.Fatalf("similarity %v out of range for %q", m.Similarity, text)
		}
		if m.Hit && m.Answer == "" {
			t.Fatalf("hit without an answer for %q", text)
		}
		var sum float64
		for _, x := range s.embed.EmbedQuery(text) {
			sum += float64(x) * float64(x)
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Fatalf("query vector of %q has squared norm %v", text, sum)
		}
	})
}
