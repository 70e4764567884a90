package session

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// latencies collects durations and reports their percentiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B, name string) {
	slices.Sort(l)
	at := func(p int) float64 { return float64(l[(len(l)-1)*p/100]) / 1e6 }
	b.ReportMetric(at(50), name+"-p50-ms")
	b.ReportMetric(at(99), name+"-p99-ms")
}

// BenchmarkEngineAddedLatency compares, over b.N sequential questions, the
// time from a question sent over the WebSocket to its first answer token
// with the time to the first content chunk of a direct openai-go stream to
// the same simulated vendor. Run with -benchtime 1000x.
func BenchmarkEngineAddedLatency(b *testing.B) {
	st := newStack(b, stackOptions{})
	c, _ := st.start(b, "en")
	client := openai.NewClient(option.WithBaseURL(st.aURL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	var direct, viaPoise latencies
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model: "model-a", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Why this company?")}})
		for stream.Next() {
			if ch := stream.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				direct = append(direct, time.Since(t0))
				break
			}
		}
		stream.Close()

		id := fmt.Sprintf("b%d", i)
		t0 = time.Now()
		c.send(map[string]any{"type": "question", "id": id, "text": "Why this company?"})
		for m := c.read(); m.str("type") != "answer_delta" || m.str("id") != id; m = c.read() {
		}
		viaPoise = append(viaPoise, time.Since(t0))
	}
	b.StopTimer()
	direct.report(b, "direct")
	viaPoise.report(b, "poise")
}

// BenchmarkFirstContentL1Down measures time to first useful content over
// b.N questions while every L1 vendor is down, from the outage's start (the
// first questions fall through before the health center knows). Run with
// -benchtime 1000x.
func BenchmarkFirstContentL1Down(b *testing.B) {
	st := newStack(b, stackOptions{})
	down := vendorsim.Fault{Status: 503, HealthDown: true}
	st.a.SetFault(vendorsim.AnyModel, down)
	st.b.SetFault(vendorsim.AnyModel, down)
	c, _ := st.start(b, "en")
	var first latencies
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("b%d", i)
		t0 := time.Now()
		c.send(map[string]any{"type": "question", "id": id, "text": "How do you handle pressure?"})
		for {
			m := c.read()
			if typ := m.str("type"); (typ == "answer_start" || typ == "coach") && m.str("id") == id {
				break
			}
		}
		first = append(first, time.Since(t0))
	}
	b.StopTimer()
	first.report(b, "first-content")
}
