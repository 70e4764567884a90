package sim

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

func TestErrorStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		fault      Fault
		wantCode   string
		wantType   string
		wantInBody string
	}{
		{"rate limited", Fault{Status: 429, RetryAfter: "7"}, "rate_limit_exceeded", "requests", "Rate limit reached"},
		{"quota", Fault{Status: 429, Code: "insufficient_quota"}, "insufficient_quota", "insufficient_quota", "exceeded your current quota"},
		{"server error", Fault{Status: 500}, "", "server_error", "The server had an error"},
		{"overloaded", Fault{Status: 503, RetryAfter: "1"}, "", "server_error", "overloaded"},
		{"billing", Fault{Status: 402}, "insufficient_quota", "insufficient_quota", "quota"},
		{"model not found", Fault{Status: 404}, "model_not_found", "invalid_request_error", "does not exist"},
		{"context length", Fault{Status: 400, Code: "context_length_exceeded"}, "context_length_exceeded", "invalid_request_error", "maximum context length"},
		{"azure filter", Fault{Status: 400, Code: "content_filter"}, "content_filter", "", "content management policy"},
		{"policy", Fault{Status: 400, Code: "content_policy_violation"}, "content_policy_violation", "invalid_request_error", "safety system"},
		{"bad request", Fault{Status: 400}, "", "invalid_request_error", "Bad Request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, fastOptions)
			ctx := testContext(t)
			h.sim.SetFault("gpt-4o-mini", tt.fault)
			for _, stream := range []bool{false, true} {
				var err error
				if stream {
					err = readStream(ctx, h, chatParams("gpt-4o-mini", "hi")).err
				} else {
					_, err = h.client.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi"))
				}
				var ae *openai.Error
				if !errors.As(err, &ae) {
					t.Fatalf("stream=%v: err = %v (%T), want *openai.Error", stream, err, err)
				}
				if ae.StatusCode != tt.fault.Status || ae.Code != tt.wantCode || ae.Type != tt.wantType || !strings.Contains(ae.Message, tt.wantInBody) {
					t.Errorf("stream=%v: status %d code %q type %q message %q", stream, ae.StatusCode, ae.Code, ae.Type, ae.Message)
				}
				if ct := ae.Response.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q", ct)
				}
				if got := ae.Response.Header.Get("Retry-After"); got != tt.fault.RetryAfter {
					t.Errorf("Retry-After = %q, want %q", got, tt.fault.RetryAfter)
				}
			}
			c := h.waitCounters(t, "gpt-4o-mini", settled)
			if c != (Counters{Requests: 2, Failed: 2, Streams: 1}) {
				t.Errorf("counters = %+v", c)
			}
		})
	}
}

func TestErrorBodyShape(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{Status: 500})
	status, ctype, body := do(t, h.srv.Client(), jsonRequest(t, ctx, "POST", h.srv.URL+"/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	want := `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`
	if status != 500 || ctype != "application/json" || body != want {
		t.Errorf("got %d %q %s\nwant %s", status, ctype, body, want)
	}
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{Status: 503, FailNext: 2})
	var statuses []int
	for range 4 {
		_, err := h.client.Chat.Completions.New(ctx, chatParams("m", "hi"))
		var ae *openai.Error
		switch {
		case err == nil:
			statuses = append(statuses, 200)
		case errors.As(err, &ae):
			statuses = append(statuses, ae.StatusCode)
		default:
			t.Fatalf("New: %v", err)
		}
	}
	if want := []int{503, 503, 200, 200}; !slices.Equal(statuses, want) {
		t.Errorf("statuses = %v, want %v", statuses, want)
	}
	if f := h.sim.Faults(); len(f) != 0 {
		t.Errorf("faults after FailNext ran out: %+v", f)
	}
}

func TestAnyModelFault(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault(AnyModel, Fault{Status: 500})
	h.sim.SetFault("healthy", Fault{FirstTokenDelayMS: 1}) // its own fault replaces "*"
	if _, err := h.client.Chat.Completions.New(ctx, chatParams("whatever", "hi")); err == nil {
		t.Error(`the "*" fault did not apply to a model without its own`)
	}
	if _, err := h.client.Chat.Completions.New(ctx, chatParams("healthy", "hi")); err != nil {
		t.Errorf(`a model with its own fault got the "*" one: %v`, err)
	}
	h.sim.ClearFaults()
	if _, err := h.client.Chat.Completions.New(ctx, chatParams("whatever", "hi")); err != nil {
		t.Errorf("after ClearFaults: %v", err)
	}
}

// TestPartialOutage: a Status fault without HealthDown is a partial
// outage, as a real deployment overloaded with 503s or out of quota shows
// it: every completion (streamed or not) fails while GET /v1/models,
// GET /v1/models/{m} and /health answer 200, so only a probe that asks for
// a completion sees it.
func TestPartialOutage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault(AnyModel, Fault{Status: http.StatusServiceUnavailable})
	var ae *openai.Error
	if _, err := h.client.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi")); !errors.As(err, &ae) || ae.StatusCode != 503 {
		t.Fatalf("completion: %v, want a 503", err)
	}
	if r := readStream(ctx, h, chatParams("gpt-4o-mini", "hi")); !errors.As(r.err, &ae) || ae.StatusCode != 503 || r.content != "" {
		t.Fatalf("streamed completion: %q, %v, want a 503", r.content, r.err)
	}
	page, err := h.client.Models.List(ctx)
	if err != nil || !slices.ContainsFunc(page.Data, func(m openai.Model) bool { return m.ID == "gpt-4o-mini" }) {
		t.Fatalf("model list during the partial outage: %v", err)
	}
	if m, err := h.client.Models.Get(ctx, "gpt-4o-mini"); err != nil || m.ID != "gpt-4o-mini" {
		t.Fatalf("model lookup during the partial outage: %v", err)
	}
	if status, _, body := do(t, h.srv.Client(), jsonRequest(t, ctx, "GET", h.srv.URL+"/health", "")); status != 200 {
		t.Fatalf("/health during the partial outage: %d %s", status, body)
	}
	if c := h.waitCounters(t, "gpt-4o-mini", settled); c.Requests != 2 || c.Failed != 2 || c.Probes != 1 {
		t.Fatalf("counters = %+v, want 2 failed requests and 1 probe", c)
	}
	h.sim.ClearFaults()
	if _, err := h.client.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi")); err != nil {
		t.Fatalf("after the outage cleared: %v", err)
	}
}

func TestStallCountsCancelled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	h.sim.SetFault("primary", Fault{StallAfter: 3})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	res := readStream(ctx, h, chatParams("primary", "Tell me about yourself."))
	if !errors.Is(res.err, context.DeadlineExceeded) {
		t.Errorf("stream error = %v, want the deadline", res.err)
	}
	if want := strings.Join(pieces(defaultReply("primary", "Tell me about yourself."))[:3], ""); res.content != want {
		t.Errorf("content before the stall = %q, want %q", res.content, want)
	}
	c := h.waitCounters(t, "primary", settled)
	if c != (Counters{Requests: 1, Cancelled: 1, Streams: 1}) {
		t.Errorf("counters = %+v", c)
	}
}

func TestNoAnswerCountsCancelled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	h.sim.SetFault("m", Fault{NoAnswer: true})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := h.client.Chat.Completions.New(ctx, chatParams("m", "hi"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
	c := h.waitCounters(t, "m", settled)
	if c.Cancelled != 1 {
		t.Errorf("counters = %+v", c)
	}
}

func TestCloseReleasesHeldRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{StallAfter: 1})
	done := make(chan streamResult, 1)
	go func() { done <- readStream(ctx, h, chatParams("m", "hi")) }()
	h.waitCounters(t, "m", func(c Counters) bool { return c.InFlight == 1 })
	h.sim.Close()
	res := <-done
	if res.err == nil {
		t.Error("a stream released by Close ended cleanly; want a broken stream")
	}
	if c := h.waitCounters(t, "m", settled); c.Failed != 1 {
		t.Errorf("counters = %+v", c)
	}
}

func TestCutStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{CutAfter: 4})
	res := readStream(ctx, h, chatParams("m", "hi"))
	if res.err == nil {
		t.Fatal("cut stream ended without error")
	}
	if len(pieces(res.content)) != 4 {
		t.Errorf("content before the cut = %q, want 4 pieces", res.content)
	}
	if res.acc.Choices[0].FinishReason != "" {
		t.Errorf("cut stream has finish_reason %q", res.acc.Choices[0].FinishReason)
	}
	if c := h.waitCounters(t, "m", settled); c.Failed != 1 {
		t.Errorf("counters = %+v", c)
	}

	_, err := h.client.Chat.Completions.New(ctx, chatParams("m", "hi"))
	if err == nil {
		t.Error("cut non-streaming answer parsed")
	}
}

func TestMalformedChunk(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{MalformedAt: 2})
	res := readStream(ctx, h, chatParams("m", "hi"))
	if res.err == nil {
		t.Fatal("malformed stream ended without error")
	}
	var se *ssestream.StreamError
	if errors.As(res.err, &se) {
		t.Errorf("malformed JSON surfaced as a stream error event: %v", se)
	}
	if len(pieces(res.content)) != 1 {
		t.Errorf("content before the bad chunk = %q, want 1 piece", res.content)
	}
	if c := h.waitCounters(t, "m", settled); c.Failed != 1 {
		t.Errorf("counters = %+v", c)
	}
	if _, err := h.client.Chat.Completions.New(ctx, chatParams("m", "hi")); err == nil {
		t.Error("malformed non-streaming answer parsed")
	}
}

func TestErrorEventMidStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{ErrorAfter: 2})
	res := readStream(ctx, h, chatParams("m", "hi"))
	var se *ssestream.StreamError
	if !errors.As(res.err, &se) || !strings.Contains(string(se.Event.Data), `"type":"server_error"`) {
		t.Fatalf("err = %v (%T), want *ssestream.StreamError with a server_error", res.err, res.err)
	}
	if len(pieces(res.content)) != 2 {
		t.Errorf("content before the error = %q", res.content)
	}
	_, err := h.client.Chat.Completions.New(ctx, chatParams("m", "hi"))
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.Type != "server_error" {
		t.Errorf("non-streaming: %v", err)
	}
}

func TestNoDone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{NoDone: true})
	res := readStream(ctx, h, chatParams("m", "hi"))
	if res.err != nil {
		t.Fatalf("stream: %v", res.err)
	}
	if res.acc.Choices[0].FinishReason != "stop" || res.acc.Choices[0].Message.Content != defaultReply("m", "hi") {
		t.Errorf("finish %q content %q", res.acc.Choices[0].FinishReason, res.acc.Choices[0].Message.Content)
	}
	raw := rawStream(t, h, ctx, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if strings.Contains(raw, "[DONE]") || !strings.Contains(raw, `"finish_reason":"stop"`) {
		t.Errorf("raw stream:\n%s", raw)
	}
}

func TestFilterFinish(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{FilterFinish: true})
	res := readStream(ctx, h, chatParams("m", "hi"))
	if res.err != nil {
		t.Fatalf("stream: %v", res.err)
	}
	if fr := res.acc.Choices[0].FinishReason; fr != "content_filter" {
		t.Errorf("finish_reason = %q", fr)
	}
	if n := len(pieces(res.content)); n != filterFinishChunks {
		t.Errorf("%d pieces before the filter, want %d", n, filterFinishChunks)
	}
	resp, err := h.client.Chat.Completions.New(ctx, chatParams("m", "hi"))
	if err != nil || resp.Choices[0].FinishReason != "content_filter" {
		t.Errorf("non-streaming: %v %+v", err, resp)
	}
}

func TestResetBeforeHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{ResetBeforeHeaders: true})
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			err = readStream(ctx, h, chatParams("m", "hi")).err
		} else {
			_, err = h.client.Chat.Completions.New(ctx, chatParams("m", "hi"))
		}
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("stream=%v: err = %v, want a connection reset", stream, err)
		}
	}
	if c := h.waitCounters(t, "m", settled); c.Failed != 2 {
		t.Errorf("counters = %+v", c)
	}
}

func TestFaultsOnEmbeddingsAndTranscriptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("text-embedding-3-small", Fault{Status: 429, RetryAfter: "2"})
	_, err := h.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: openai.EmbeddingModelTextEmbedding3Small,
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello")},
	})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.Response.Header.Get("Retry-After") != "2" {
		t.Errorf("embeddings err = %v", err)
	}
	h.sim.SetFault("whisper-1", Fault{Status: 500})
	_, err = h.client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File:  openai.File(strings.NewReader(string(makeWAV(0.5, 16000, 1, 16))), "clip.wav", "audio/wav"),
		Model: openai.AudioModelWhisper1,
	})
	if !errors.As(err, &ae) || ae.StatusCode != 500 {
		t.Errorf("transcription err = %v", err)
	}
}

func TestFirstTokenDelayHoldsHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	h.sim.SetFault("slow", Fault{FirstTokenDelayMS: 60_000})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req := jsonRequest(t, ctx, "POST", h.srv.URL+"/v1/chat/completions", `{"model":"slow","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	resp, err := h.srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("headers arrived before the first-token delay")
	}
	if c := h.waitCounters(t, "slow", settled); c.Cancelled != 1 {
		t.Errorf("counters = %+v", c)
	}
}

// rawStream posts body and returns the raw response body.
func rawStream(t *testing.T, h *harness, ctx context.Context, body string) string {
	t.Helper()
	status, ctype, raw := do(t, h.srv.Client(), jsonRequest(t, ctx, http.MethodPost, h.srv.URL+"/v1/chat/completions", body))
	if status != 200 || ctype != "text/event-stream; charset=utf-8" {
		t.Fatalf("status %d type %q", status, ctype)
	}
	return raw
}
