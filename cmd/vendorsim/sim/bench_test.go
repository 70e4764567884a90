package sim

import (
	"testing"

	"github.com/openai/openai-go/v3"
)

// BenchmarkStream measures whole streamed answers (about 70 chunks each)
// over loopback with no token delay: the Server's own cost per answer, and
// the ceiling of a load run.
func BenchmarkStream(b *testing.B) {
	h := newHarness(b, Options{TokenDelay: -1})
	p := chatParams("m", "Tell me about a time you disagreed with your manager.")
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	b.ReportAllocs()
	for b.Loop() {
		if res := readStream(b.Context(), h, p); res.err != nil {
			b.Fatal(res.err)
		}
	}
}

// BenchmarkEmbed measures one 256-dimension embedding of a question.
func BenchmarkEmbed(b *testing.B) {
	for b.Loop() {
		embed("Tell me about a time you disagreed with your manager and how it ended.", defaultEmbeddingDims)
	}
}
