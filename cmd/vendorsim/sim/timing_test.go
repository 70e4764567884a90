package sim

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// bubble is a Server served over pipes inside a synctest bubble, with an
// openai-go client and a plain HTTP client.
type bubble struct {
	sim    *Server
	client openai.Client
	http   *http.Client
}

// newBubble starts the server; call it inside synctest.Test. Cleanup stops
// everything before the bubble ends.
func newBubble(t *testing.T, opts Options) *bubble {
	t.Helper()
	sim := New(opts)
	memnet := NewMemNet()
	memnet.Serve("sim:80", sim)
	t.Cleanup(func() {
		sim.Close()
		memnet.Close()
	})
	hc := memnet.Client()
	client := openai.NewClient(option.WithBaseURL("http://sim:80/v1"), option.WithAPIKey("sk-test"),
		option.WithMaxRetries(0), option.WithHTTPClient(hc))
	return &bubble{sim: sim, client: client, http: hc}
}

func TestStreamTiming(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, Options{FirstTokenDelay: 300 * time.Millisecond}) // default TokenDelay: 20ms
		want := pieces(defaultReply("m", "hi"))
		start := time.Now()
		stream := b.client.Chat.Completions.NewStreaming(t.Context(), chatParams("m", "hi"))
		defer stream.Close()
		var firstContent time.Duration
		n := 0
		for stream.Next() {
			if ch := stream.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				if n == 0 {
					firstContent = time.Since(start)
				}
				n++
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		total := time.Since(start)
		if firstContent != 300*time.Millisecond {
			t.Errorf("first content after %v, want the 300ms first-token delay", firstContent)
		}
		if wantTotal := 300*time.Millisecond + time.Duration(len(want)-1)*defaultTokenDelay; total != wantTotal || n != len(want) {
			t.Errorf("%d pieces in %v, want %d in %v", n, total, len(want), wantTotal)
		}
	})
}

func TestFaultFirstTokenDelayOverridesDefault(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, Options{FirstTokenDelay: time.Second, TokenDelay: 10 * time.Millisecond})
		b.sim.SetFault("fast", Fault{FirstTokenDelayMS: 50})
		b.sim.SetReply("fast", "one two three")
		start := time.Now()
		resp, err := b.client.Chat.Completions.New(t.Context(), chatParams("fast", "hi"))
		if err != nil {
			t.Fatal(err)
		}
		// non-streaming answers arrive when the whole stream would have ended
		if got, want := time.Since(start), 50*time.Millisecond+2*10*time.Millisecond; got != want || resp.Choices[0].Message.Content != "one two three" {
			t.Errorf("answer %q after %v, want after %v", resp.Choices[0].Message.Content, got, want)
		}
	})
}

func TestStallUntilClientTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, Options{})
		b.sim.SetFault("primary", Fault{StallAfter: 2})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		stream := b.client.Chat.Completions.NewStreaming(ctx, chatParams("primary", "hi"))
		var content strings.Builder
		for stream.Next() {
			if ch := stream.Current(); len(ch.Choices) > 0 {
				content.WriteString(ch.Choices[0].Delta.Content)
			}
		}
		_ = stream.Close()
		if !errors.Is(stream.Err(), context.DeadlineExceeded) || time.Since(start) != 5*time.Second {
			t.Errorf("stream ended with %v after %v, want the 5s deadline", stream.Err(), time.Since(start))
		}
		if len(pieces(content.String())) != 2 {
			t.Errorf("content before the stall = %q", content.String())
		}
		synctest.Wait() // the server notices the closed connection
		if c := b.sim.Counters("primary"); c != (Counters{Requests: 1, Cancelled: 1, Streams: 1}) {
			t.Errorf("counters = %+v", c)
		}
	})
}

// TestHedgedLoserIsCancelled is the hedging pattern other packages rely on:
// a slow primary and a backup race, the backup wins, the primary's request
// is cancelled and the Server counts it so.
func TestHedgedLoserIsCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, Options{})
		b.sim.SetFault("primary", Fault{FirstTokenDelayMS: 2000})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		winner := make(chan string, 2)
		race := func(model string) {
			stream := b.client.Chat.Completions.NewStreaming(ctx, chatParams(model, "hi"))
			defer stream.Close()
			for stream.Next() {
				if ch := stream.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
					winner <- model
					return
				}
			}
			winner <- ""
		}
		go race("primary")
		time.Sleep(800 * time.Millisecond) // hedge_after
		if c := b.sim.Counters("primary"); c.InFlight != 1 {
			t.Fatalf("primary is not in flight: %+v", c)
		}
		go race("backup")
		if w := <-winner; w != "backup" {
			t.Errorf("winner = %q", w)
		}
		cancel()
		<-winner
		synctest.Wait()
		if c := b.sim.Counters("primary"); c.Cancelled != 1 || c.InFlight != 0 {
			t.Errorf("primary counters = %+v", c)
		}
	})
}

func TestWhisperDecodesOneAtATime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, Options{InferenceDelay: 100 * time.Millisecond})
		start := time.Now()
		took := make(chan time.Duration, 2)
		for range 2 {
			req := inferenceRequest(t, t.Context(), "http://sim:80", makeWAV(0.1, 16000, 1, 16), nil)
			go func() {
				resp, err := b.http.Do(req)
				if err != nil {
					t.Errorf("inference: %v", err)
				} else {
					_ = resp.Body.Close()
				}
				took <- time.Since(start)
			}()
		}
		first, second := <-took, <-took
		if first != 100*time.Millisecond || second != 200*time.Millisecond {
			t.Errorf("answers after %v and %v, want 100ms and 200ms", first, second)
		}
	})
}

func TestInferenceDelayFault(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, Options{InferenceDelay: time.Second})
		b.sim.SetFault("whisper-1", Fault{InferenceDelayMS: 30})
		start := time.Now()
		_, err := b.client.Audio.Transcriptions.New(t.Context(), openai.AudioTranscriptionNewParams{
			File:  openai.File(strings.NewReader(string(makeWAV(0.1, 16000, 1, 16))), "a.wav", "audio/wav"),
			Model: openai.AudioModelWhisper1,
		})
		if err != nil || time.Since(start) != 30*time.Millisecond {
			t.Errorf("err %v after %v, want 30ms", err, time.Since(start))
		}
	})
}
