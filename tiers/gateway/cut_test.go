package gateway

import (
	"strings"
	"testing"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/upstream"
)

// sixtyWords is a 60-word answer: 60 content chunks from vendorsim.
const sixtyWords = "Situation: during our biggest sale of the year the checkout service kept timing out. " +
	"Task: as the engineer on call I owned the fix and the follow-up. Action: I profiled the database calls, " +
	"found one slow query per basket, added a read-through cache with a short expiry and rolled it out behind a flag. " +
	"Result: p99 fell by sixty percent."

// cutRig is the rig with a and b both answering sixtyWords, a cutting its
// stream after 40 words on every request, and adjust applied to b's entry.
func cutRig(t *testing.T, adjust func(r *gwRig)) *gwRig {
	t.Helper()
	r := newGatewayRig(t, func(r *gwRig) {
		twoEndpoints(r)
		r.a.Sim.SetReply(modelA, sixtyWords)
		r.b.Sim.SetReply(modelB, sixtyWords)
		if adjust != nil {
			adjust(r)
		}
	})
	if n := len(strings.Fields(sixtyWords)); n != 60 {
		t.Fatalf("the reply has %d words", n)
	}
	r.a.Sim.SetFault(modelA, vendorsim.Fault{CutAfter: 40})
	return r
}

func TestGatewayCutAfter40Of60(t *testing.T) {
	for _, tc := range []struct {
		name   string
		adjust func(r *gwRig)
	}{
		{"fallback accepts a prefill", func(r *gwRig) { r.cfg.Chains[gwModel][1].Prefill = true }},
		{"fallback declares prefill but rejects it with 400", func(r *gwRig) {
			r.cfg.Chains[gwModel][1].Prefill = true
			r.b.Sim.SetFault(modelB, vendorsim.Fault{RejectPrefill: true})
		}},
		{"fallback without prefill regenerates the same text", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cutRig(t, tc.adjust)
			s := r.stream(t, chatParams(gwModel))
			// Whole, and every word once: the text is exactly the answer.
			wantAnswer(t, s, sixtyWords, "b")
			if s.header.Get(headerEndpoint) != "a" {
				t.Fatalf("started on %q", s.header.Get(headerEndpoint))
			}
			if b := settled(t, r.b, modelB); b.Completed != 1 {
				t.Fatalf("b saw %+v", b)
			}
			if got := r.metric(t, "poise_gateway_responses_total", map[string]string{"outcome": outcomeContinued}); got != 1 {
				t.Fatalf("responses{continued} = %v", got)
			}
			// The prefill b refused is not held against it.
			if got := r.requests(t, "b", string(upstream.ClassBadRequest)); got != 0 {
				t.Fatalf("requests{b,bad_request} = %v", got)
			}
		})
	}
}

func TestGatewayCutAfter40Of60DivergingFallback(t *testing.T) {
	r := cutRig(t, func(r *gwRig) { r.b.Sim.SetReply(modelB, replyB) })
	s := r.stream(t, chatParams(gwModel))
	se := streamError(t, s.err) // an in-band error, so no [DONE] came
	if !strings.Contains(string(se.Event.Data), `"stream_cut"`) {
		t.Fatalf("error event %s", se.Event.Data)
	}
	want := strings.Join(strings.Fields(sixtyWords)[:40], " ")
	if s.text != want || s.finish != "" {
		t.Fatalf("text %q (finish %q), want a's 40 words and no finish", s.text, s.finish)
	}
}

// TestGatewayOneMalformedEventArrivesWhole: an undecodable event amid a
// complete answer is skipped and counted; the answer is whole.
func TestGatewayOneMalformedEventArrivesWhole(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{GarbageAfter: 10})
	s := r.stream(t, chatParams(gwModel))
	wantAnswer(t, s, replyText, "a")
	if got := r.metric(t, "poise_upstream_bad_events_total", map[string]string{"backend": "a"}); got != 1 {
		t.Fatalf("bad_events{a} = %v", got)
	}
	if a := settled(t, r.a, modelA); a.Requests != 1 {
		t.Fatalf("a saw %+v", a)
	}
	if strings.Count(r.logs.String(), "undecodable stream event") != 1 {
		t.Fatalf("want one log line for the stream, logs:\n%s", r.logs.String())
	}
}

// TestGatewayWildcardChainHasPerModelCircuits: one model failing on a "*"
// chain's primary opens its own circuit only: the other models are still
// served by the primary, and the failing one goes to the fallback first.
func TestGatewayWildcardChainHasPerModelCircuits(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		r.cfg.Chains[AnyModelChain] = []Endpoint{r.entry("wall-{model}", r.a, "{model}"), r.entry("b", r.b, "{model}")}
	})
	for _, m := range []string{"good", "bad"} {
		r.a.Sim.SetReply(m, replyText)
		r.b.Sim.SetReply(m, replyB)
	}
	r.a.Sim.SetFault("bad", vendorsim.Fault{Status: 500})
	for range circuitOpensAfter {
		wantAnswer(t, r.stream(t, chatParams("bad")), replyB, "b")
	}
	if r.health.BackendUp("wall-bad") {
		t.Fatal("the failing model's circuit is not open")
	}
	before := settled(t, r.a, "bad").Requests
	for range 3 {
		wantAnswer(t, r.stream(t, chatParams("good")), replyText, "wall-good")
		wantAnswer(t, r.stream(t, chatParams("bad")), replyB, "b")
	}
	if got := settled(t, r.a, "bad").Requests; got != before {
		t.Fatalf("the open circuit's model got %d more requests on a", got-before)
	}
	if !r.health.BackendUp("wall-good") {
		t.Fatal("the healthy model's circuit opened")
	}
}
