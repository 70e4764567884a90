package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/upstream"
)

// twoEndpoints keeps chain "chat" to a then b.
func twoEndpoints(r *gwRig) {
	r.cfg.Chains[gwModel] = r.cfg.Chains[gwModel][:2]
}

// oneEndpoint keeps chain "chat" to a alone: the last one standing.
func oneEndpoint(r *gwRig) {
	r.cfg.Chains[gwModel] = r.cfg.Chains[gwModel][:1]
}

// TestGateway429RetryAfterIsHonoured: on the last endpoint standing, a
// short Retry-After is waited out and the same endpoint asked again.
func TestGateway429RetryAfterIsHonoured(t *testing.T) {
	r := newGatewayRig(t, oneEndpoint)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusTooManyRequests, RetryAfter: "0.05", FailNext: 1})
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyText, "a")
	if w := r.waits.all(); len(w) != 1 || w[0] != 50*time.Millisecond {
		t.Fatalf("waits %v, want the Retry-After of 50ms before the retry", w)
	}
	if a := settled(t, r.a, modelA); a.Requests != 2 {
		t.Fatalf("a saw %d requests: want the retry on a", a.Requests)
	}
}

// TestGateway429FailsOverAtOnceWhenAnotherIsHealthy: with a healthy
// endpoint left, even a short Retry-After is not waited out.
func TestGateway429FailsOverAtOnceWhenAnotherIsHealthy(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusTooManyRequests, RetryAfter: "0.05", FailNext: 1})
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyB, "b")
	if w := r.waits.all(); len(w) != 0 {
		t.Fatalf("waited %v with a healthy fallback", w)
	}
	if a := settled(t, r.a, modelA); a.Requests != 1 {
		t.Fatalf("a saw %d requests, want 1", a.Requests)
	}
}

func TestGateway429LongRetryAfterFailsOverAndCoolsDown(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusTooManyRequests, RetryAfter: "30"})
	for range 3 {
		wantAnswer(t, r.stream(t, chatParams(gwModel)), replyB, "b")
	}
	if w := r.waits.all(); len(w) != 0 {
		t.Fatalf("waited %v: a Retry-After above retry_after_max_ms must fail over at once", w)
	}
	// Never hammer: the later requests did not touch a during its
	// Retry-After.
	if a := settled(t, r.a, modelA); a.Requests != 1 {
		t.Fatalf("a saw %d requests, want 1", a.Requests)
	}
}

func TestGateway429PassedOnWhenNoFallback(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) { r.cfg.Chains[gwModel] = r.cfg.Chains[gwModel][:1] })
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusTooManyRequests, RetryAfter: "30"})
	for i := range 2 {
		_, h, err := r.complete(t, chatParams(gwModel))
		ae := apiError(t, err)
		if ae.StatusCode != http.StatusTooManyRequests || ae.Code != "rate_limit_exceeded" {
			t.Fatalf("request %d: status %d code %q", i, ae.StatusCode, ae.Code)
		}
		if ra := h.Get("Retry-After"); ra == "" || ra == "0" {
			t.Fatalf("request %d: Retry-After %q", i, ra)
		}
	}
	if a := settled(t, r.a, modelA); a.Requests != 1 {
		t.Fatalf("a saw %d requests while cooling down, want 1", a.Requests)
	}
}

func TestGateway429WithoutRetryAfterBacksOffThenFailsOver(t *testing.T) {
	const base = 40 * time.Millisecond
	r := newGatewayRig(t, func(r *gwRig) {
		oneEndpoint(r)
		r.cfg.BackoffMS = int(base / time.Millisecond)
		r.cfg.MaxAttempts = 3 // the older spelling of retries: 2
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusTooManyRequests})
	_, _, err := r.complete(t, chatParams(gwModel))
	if ae := apiError(t, err); ae.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("status %d, want the 429", ae.StatusCode)
	}
	if a := settled(t, r.a, modelA); a.Requests != 3 {
		t.Fatalf("a saw %d requests, want max_attempts = 3", a.Requests)
	}
	w := r.waits.all()
	if len(w) != 2 {
		t.Fatalf("waits %v, want 2 backoffs", w)
	}
	for i, d := range w {
		lo := base << i
		if d < lo || d >= 2*lo {
			t.Fatalf("backoff %d = %v, want in [%v, %v)", i+1, d, lo, 2*lo)
		}
	}
	if got := r.requests(t, "a", string(upstream.ClassRateLimited)); got != 3 {
		t.Fatalf("requests{a,rate_limited} = %v", got)
	}
}

func TestGatewayBackoffIsJittered(t *testing.T) {
	r := newGatewayRig(t, nil)
	seen := map[time.Duration]bool{}
	for range 20 {
		seen[r.gw.backoff(1)] = true
	}
	if len(seen) < 2 {
		t.Fatalf("20 backoffs took %d distinct values: no jitter", len(seen))
	}
}

func TestGateway500OnceIsRetriedOnce(t *testing.T) {
	r := newGatewayRig(t, oneEndpoint)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusInternalServerError, FailNext: 1})
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyText, "a")
	if a := settled(t, r.a, modelA); a.Requests != 2 {
		t.Fatalf("a saw %d requests", a.Requests)
	}
	if w := r.waits.all(); len(w) != 1 {
		t.Fatalf("waits %v, want one backoff", w)
	}
}

func TestGatewayAttemptsPerEndpointAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		retries *int
		want    int64
	}{{"default", nil, 2}, {"retries 0", new(0), 1}, {"retries 3", new(3), 4}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGatewayRig(t, func(r *gwRig) { oneEndpoint(r); r.cfg.Retries = tc.retries })
			r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusInternalServerError})
			_, _, err := r.complete(t, chatParams(gwModel))
			if ae := apiError(t, err); ae.StatusCode != http.StatusBadGateway {
				t.Fatalf("status %d", ae.StatusCode)
			}
			if a := settled(t, r.a, modelA); a.Requests != tc.want {
				t.Fatalf("a saw %d requests, want %d", a.Requests, tc.want)
			}
		})
	}
}

// TestGatewayFailsOverAtOnce covers the failures that are never retried
// on the same endpoint.
func TestGatewayFailsOverAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault vendorsim.Fault
		class upstream.Class
	}{
		{"503 persistent", vendorsim.Fault{Status: http.StatusServiceUnavailable}, upstream.ClassServer},
		{"connection reset", vendorsim.Fault{ResetBeforeHeaders: true}, upstream.ClassServer},
		{"402 quota", vendorsim.Fault{Status: http.StatusPaymentRequired}, upstream.ClassUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGatewayRig(t, twoEndpoints)
			r.a.Sim.SetFault(modelA, tc.fault)
			for range 2 {
				wantAnswer(t, r.stream(t, chatParams(gwModel)), replyB, "b")
			}
			if a := settled(t, r.a, modelA); a.Requests != 2 {
				t.Fatalf("a saw %d requests for 2 client requests: want one each", a.Requests)
			}
			if w := r.waits.all(); len(w) != 0 {
				t.Fatalf("waited %v before failing over", w)
			}
			if got := r.requests(t, "a", string(tc.class)); got != 2 {
				t.Fatalf("requests{a,%s} = %v", tc.class, got)
			}
		})
	}
}

func TestGatewayDNSFailureFailsOver(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		r.cfg.Chains[gwModel] = []Endpoint{
			{Endpoint: upstream.Endpoint{Name: "nowhere", BaseURL: "http://poise-gateway-test.invalid/v1", Model: modelA}},
			r.entry("b", r.b, modelB),
		}
	})
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyB, "b")
	if got := r.requests(t, "nowhere", string(upstream.ClassServer)); got != 1 {
		t.Fatalf("requests{nowhere,server} = %v", got)
	}
	if w := r.waits.all(); len(w) != 0 {
		t.Fatalf("waited %v before failing over", w)
	}
}

func TestGatewayNoResponseTimesOutThenFailsOverAtOnce(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		twoEndpoints(r)
		r.cfg.Chains[gwModel][0].TimeoutMS = 100
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{NoAnswer: true})
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyB, "b")
	// The silent endpoint was asked once, and its request was cancelled.
	a := r.a.WaitCounters(t, modelA, func(c vendorsim.Counters) bool { return c.InFlight == 0 })
	if a.Requests != 1 || a.Cancelled != 1 {
		t.Fatalf("a saw %+v, want one request, cancelled", a)
	}
	if got := r.requests(t, "a", string(upstream.ClassTimeout)); got != 1 {
		t.Fatalf("requests{a,timeout} = %v", got)
	}
}

func TestGatewaySlowFirstTokenFailsOver(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		twoEndpoints(r)
		r.cfg.Chains[gwModel][0].TimeoutMS = 10000
		r.cfg.Chains[gwModel][0].FirstTokenTimeoutMS = 100
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{FirstContentDelayMS: 5000})
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyB, "b")
	if a := settled(t, r.a, modelA); a.Requests != 1 || a.Cancelled != 1 {
		t.Fatalf("a saw %+v, want one request, cancelled", a)
	}
	if got := r.requests(t, "a", string(upstream.ClassTimeout)); got != 1 {
		t.Fatalf("requests{a,timeout} = %v", got)
	}
}

func TestGatewayContextLengthUsesLargerModel(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		r.cfg.Chains[gwModel][0].LargerModel = modelALong
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusBadRequest, Code: "context_length_exceeded"})
	s := r.stream(t, chatParams(gwModel))
	wantAnswer(t, s, replyText, "a")
	if s.models[len(s.models)-1] != modelALong {
		t.Fatalf("answered by model %q, want %q", s.models[len(s.models)-1], modelALong)
	}
	if a := settled(t, r.a, modelA); a.Requests != 1 {
		t.Fatalf("%s asked %d times", modelA, a.Requests)
	}
}

func TestGatewayContextLengthNeverSameModelAgain(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		// b serves the same model as a: after a's context_length it is
		// skipped, and c answers.
		r.cfg.Chains[gwModel][1].Model = modelA
		r.b.Sim.SetReply(modelA, replyB)
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusBadRequest, Code: "context_length_exceeded"})
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyText, "c")
	if b := r.b.Sim.Counters(modelA); b.Requests != 0 {
		t.Fatalf("the model that was too small was asked again on b: %+v", b)
	}

	t.Run("nothing larger: the provider's error", func(t *testing.T) {
		r.c.Sim.SetFault(modelC, vendorsim.Fault{Status: http.StatusBadRequest, Code: "context_length_exceeded"})
		_, _, err := r.complete(t, chatParams(gwModel))
		if ae := apiError(t, err); ae.StatusCode != http.StatusBadRequest || ae.Code != "context_length_exceeded" {
			t.Fatalf("status %d code %q", ae.StatusCode, ae.Code)
		}
	})
}

func TestGatewayContentFilterIsPassedOnNotRetried(t *testing.T) {
	r := newGatewayRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusBadRequest, Code: "content_filter"})
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			err = r.stream(t, chatParams(gwModel)).err
		} else {
			_, _, err = r.complete(t, chatParams(gwModel))
		}
		ae := apiError(t, err)
		if ae.StatusCode != http.StatusBadRequest || ae.Code != "content_filter" || ae.Param != "prompt" {
			t.Fatalf("stream %v: status %d code %q param %q", stream, ae.StatusCode, ae.Code, ae.Param)
		}
		// Azure's message links its documentation: free text that names
		// a host is replaced, keeping the status and the code.
		if strings.Contains(ae.RawJSON(), "microsoft.com") || !strings.Contains(ae.Message, "code content_filter") {
			t.Fatalf("stream %v: message %q, body %s", stream, ae.Message, ae.RawJSON())
		}
		// Azure's details (innererror) reach the client too.
		if !strings.Contains(ae.RawJSON(), "ResponsibleAIPolicyViolation") {
			t.Fatalf("stream %v: error body %s lacks innererror", stream, ae.RawJSON())
		}
	}
	if a, b := settled(t, r.a, modelA), r.b.Sim.Counters(modelB); a.Requests != 2 || b.Requests != 0 {
		t.Fatalf("a saw %d requests for 2, b %d: want no retry and no fail-over", a.Requests, b.Requests)
	}
	if got := r.metric(t, "poise_gateway_responses_total", map[string]string{"outcome": outcomeRefused}); got != 2 {
		t.Fatalf("responses{refused} = %v", got)
	}
}

func TestGatewayFilterFinishIsPassedOn(t *testing.T) {
	r := newGatewayRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{FilterFinish: true})
	s := r.stream(t, chatParams(gwModel))
	if s.err != nil || s.finish != "content_filter" || s.text == "" {
		t.Fatalf("err %v, finish %q, text %q", s.err, s.finish, s.text)
	}
	if b := r.b.Sim.Counters(modelB); b.Requests != 0 {
		t.Fatalf("failed over after a content filter: %+v", b)
	}
	c, _, err := r.complete(t, chatParams(gwModel))
	if err != nil || c.Choices[0].FinishReason != "content_filter" {
		t.Fatalf("non-streaming: %v, %+v", err, c)
	}
}
