package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/upstream"
)

// prefillB makes b continue cut answers, with the same reply as a so that
// a continuation can be checked word for word.
func prefillB(r *gwRig) {
	r.cfg.Chains[gwModel][1].Prefill = true
	r.b.Sim.SetReply(modelB, replyText)
}

func TestGatewayCutStreamContinuesOnPrefillFallback(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault vendorsim.Fault
	}{
		{"cut", vendorsim.Fault{CutAfter: 5}},
		{"stall", vendorsim.Fault{StallAfter: 5}},
		{"error event", vendorsim.Fault{ErrorAfter: 5}},
		{"malformed chunk", vendorsim.Fault{MalformedAt: 5}},
		{"no finish, no [DONE]", vendorsim.Fault{CutAfter: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGatewayRig(t, func(r *gwRig) {
				prefillB(r)
				r.cfg.Chains[gwModel][0].StallMS = 100
			})
			r.a.Sim.SetFault(modelA, tc.fault)
			s := r.stream(t, chatParams(gwModel))
			// The whole answer, once: a's part, then b's continuation.
			wantAnswer(t, s, replyText, "b")
			if s.header.Get(headerEndpoint) != "a" {
				t.Fatalf("the answer started on %q, want a", s.header.Get(headerEndpoint))
			}
			if b := settled(t, r.b, modelB); b.Requests != 1 || b.Completed != 1 {
				t.Fatalf("b saw %+v", b)
			}
			// a was asked once more first (retries 1): it regenerated its
			// answer, the part the client had held back, and was cut again.
			if got := r.requests(t, "a", string(upstream.ClassCut)); got != 2 {
				t.Fatalf("requests{a,cut} = %v", got)
			}
			if s.usage == nil || s.usage.CompletionTokens == 0 {
				t.Fatalf("usage %+v", s.usage)
			}
			if got := r.metric(t, "poise_gateway_responses_total", map[string]string{"outcome": outcomeContinued}); got != 1 {
				t.Fatalf("responses{continued} = %v", got)
			}
		})
	}
}

// TestGatewayCutStreamDivergingFallbackEndsWithErrorEvent: a cut stream
// (a keeps cutting) goes to b, which refuses nothing but regenerates a
// different answer: the client gets the partial answer, then an in-band
// error naming the cut, and no [DONE].
func TestGatewayCutStreamDivergingFallbackEndsWithErrorEvent(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{CutAfter: 5})
	s := r.stream(t, chatParams(gwModel))
	se := streamError(t, s.err)
	if data := string(se.Event.Data); !strings.Contains(data, `"stream_cut"`) || !strings.Contains(data, "cut (a:") {
		t.Fatalf("error event %s", se.Event.Data)
	}
	// Never a truncated answer that looks complete: no finish_reason, no
	// [DONE] (openai-go returns nil after [DONE]); never b's words.
	if s.finish != "" || s.text == "" || !strings.HasPrefix(replyText, s.text) || s.text == replyText {
		t.Fatalf("text %q finish %q: want a strict prefix of the answer and no finish", s.text, s.finish)
	}
	if b := settled(t, r.b, modelB); b.Requests != 1 {
		t.Fatalf("b saw %+v", b)
	}
	if got := r.metric(t, "poise_gateway_responses_total", map[string]string{"outcome": outcomeCut}); got != 1 {
		t.Fatalf("responses{cut} = %v", got)
	}
}

func TestGatewayCutBeforeAnythingSentRestartsCleanly(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{CutAfter: 5})
	c, h, err := r.complete(t, chatParams(gwModel))
	if err != nil {
		t.Fatal(err)
	}
	// Not streaming: nothing had reached the client, so b starts afresh
	// and none of a's words are in the answer.
	if got := c.Choices[0].Message.Content; got != replyB || c.Model != modelB || h.Get(headerEndpoint) != "b" {
		t.Fatalf("answer %q from %q (%s), want b's own answer", got, c.Model, h.Get(headerEndpoint))
	}
}

func TestGatewayCutNonStreamingContinuesOnPrefill(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		prefillB(r)
		r.cfg.Chains[gwModel][0].StallMS = 100
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{StallAfter: 4})
	c, _, err := r.complete(t, chatParams(gwModel))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != replyText || c.Choices[0].FinishReason != "stop" {
		t.Fatalf("answer %q (%s)", got, c.Choices[0].FinishReason)
	}
}

func TestGatewayMalformedFirstChunkRestartsCleanly(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{MalformedAt: 1, FailNext: 1})
	s := r.stream(t, chatParams(gwModel))
	wantAnswer(t, s, replyB, "b")
	if s.header.Get(headerEndpoint) != "b" {
		t.Fatalf("answer headed by %q", s.header.Get(headerEndpoint))
	}
	// The process is healthy: the next request is served by a again.
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyText, "a")
}

// TestGatewayMalformedAnswerChunkIsACut: an undecodable event that looks
// like an answer chunk may have carried words, so it is not skipped: it
// cuts the stream, and a's second try (it regenerates the same answer)
// completes it without repeating a word.
func TestGatewayMalformedAnswerChunkIsACut(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{MalformedAt: 4, FailNext: 1})
	s := r.stream(t, chatParams(gwModel))
	wantAnswer(t, s, replyText, "a")
	if got := r.metric(t, "poise_upstream_bad_events_total", map[string]string{"backend": "a"}); got != 1 {
		t.Fatalf("bad_events{a} = %v", got)
	}
	if b := r.b.Sim.Counters(modelB); b.Requests != 0 {
		t.Fatalf("b saw %+v", b)
	}
}

func TestGatewayStreamWithoutDoneIsFinalisedPromptly(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		twoEndpoints(r)
		r.cfg.Chains[gwModel][0].StallMS = 60000 // a stall cannot be what ends it
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{NoDone: true})
	// Bounded well below the stall timeout: a gateway waiting for [DONE]
	// would fail here rather than pass late.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	s := r.streamCtx(ctx, chatParams(gwModel))
	wantAnswer(t, s, replyText, "a")
	if s.usage == nil {
		t.Fatal("no usage")
	}
	if b := r.b.Sim.Counters(modelB); b.Requests != 0 {
		t.Fatalf("b saw %+v", b)
	}
}
