package tiers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/cmd/vendorsim/sim/simtest"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
)

func TestAnswerFromPrimary(t *testing.T) {
	r := newRig(t, nil)
	a := r.ask(t, Request{})
	if !a.out.Answered || a.out.Level != L1 || a.out.Source != "a" || a.end().Reason != ReasonDone {
		t.Fatalf("outcome %+v, end %+v; want L1 from a, done", a.out, a.end())
	}
	if a.text() != replyText {
		t.Fatalf("text %q, want the full reply", a.text())
	}
	if got := r.b.Sim.Counters(modelB).Requests; got != 0 {
		t.Fatalf("backup got %d requests; hedge_after is 5 s", got)
	}
	if got := r.requests(t, "a", "ok"); got != 1 {
		t.Fatalf("requests{a,ok} = %v, want 1", got)
	}
	if got := metricValue(t, r.reg, "poise_answer_first_content_seconds", map[string]string{"level": "L1"}); got != 1 {
		t.Fatalf("first-content observations at L1 = %v, want 1", got)
	}
}

// TestPrimaryFaultsFallToBackup covers each fallbackable class before the
// first token: the backup answers at once, the primary's class is counted.
func TestPrimaryFaultsFallToBackup(t *testing.T) {
	tests := []struct {
		name  string
		fault vendorsim.Fault
		class upstream.Class
	}{
		{"429 rate_limited without Retry-After", vendorsim.Fault{Status: 429}, upstream.ClassRateLimited},
		{"429 Retry-After beyond the budget", vendorsim.Fault{Status: 429, RetryAfter: "30"}, upstream.ClassRateLimited},
		{"500 server", vendorsim.Fault{Status: 500}, upstream.ClassServer},
		{"503 server", vendorsim.Fault{Status: 503}, upstream.ClassServer},
		{"reset before headers: server", vendorsim.Fault{ResetBeforeHeaders: true}, upstream.ClassServer},
		{"malformed first chunk: server", vendorsim.Fault{MalformedAt: 1}, upstream.ClassServer},
		{"no answer: timeout", vendorsim.Fault{NoAnswer: true}, upstream.ClassTimeout},
		{"slow first token: timeout", vendorsim.Fault{FirstTokenDelayMS: 2000}, upstream.ClassTimeout},
		{"404 model_not_found: unavailable", vendorsim.Fault{Status: 404}, upstream.ClassUnavailable},
		{"402 billing: unavailable", vendorsim.Fault{Status: 402}, upstream.ClassUnavailable},
		{"429 insufficient_quota: unavailable", vendorsim.Fault{Status: 429, Code: "insufficient_quota"}, upstream.ClassUnavailable},
		{"context_length without a larger model", vendorsim.Fault{Status: 400, Code: "context_length_exceeded"}, upstream.ClassContextLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			r.a.Sim.SetFault(modelA, tc.fault)
			a := r.ask(t, Request{})
			if a.out.Source != "b" || a.out.Level != L1 || a.end().Reason != ReasonDone || a.text() != replyText {
				t.Fatalf("outcome %+v, end %+v, text %q; want L1 from b, done, full text", a.out, a.end(), a.text())
			}
			if got := r.requests(t, "a", string(tc.class)); got != 1 {
				t.Fatalf("requests{a,%s} = %v, want 1", tc.class, got)
			}
			if got := r.a.Sim.Counters(modelA).Requests; got != 1 {
				t.Fatalf("primary got %d requests, want 1 (no retries)", got)
			}
			if a.took > 4*time.Second { // hedge_after is 5 s
				t.Fatalf("took %v: the backup was not fired at once", a.took)
			}
		})
	}
}

func TestContextLengthMovesToLargerModel(t *testing.T) {
	r := newRig(t, func(c *Config) { c.L1.Vendors[0].LargerModel = modelALong })
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 400, Code: "context_length_exceeded"})
	a := r.ask(t, Request{})
	if a.out.Source != "a" || a.text() != replyText {
		t.Fatalf("outcome %+v, text %q; want vendor a's larger model", a.out, a.text())
	}
	if got := r.a.Sim.Counters(modelA).Requests; got != 1 {
		t.Fatalf("the small model got %d requests; never the same model again", got)
	}
	r.a.WaitCounters(t, modelALong, func(c vendorsim.Counters) bool { return c.Completed == 1 })
	if got := r.b.Sim.Counters(modelB).Requests; got != 0 {
		t.Fatalf("backup got %d requests, want 0", got)
	}
	if !r.health.BackendUp("a") || r.requests(t, "a", "context_length") != 1 {
		t.Fatal("context_length must be counted by class but not against health")
	}
}

func TestRefusedTriesNoOtherModel(t *testing.T) {
	for _, code := range []string{"content_filter", "content_policy_violation"} {
		t.Run(code, func(t *testing.T) {
			r := newRig(t, nil)
			r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 400, Code: code})
			a := r.ask(t, Request{})
			if a.out.Answered || r.requests(t, "a", "refused") != 1 {
				t.Fatalf("outcome %+v; want refused, not answered (the session shows the coach)", a.out)
			}
			if b, l := r.b.Sim.Counters(modelB).Requests, r.local.Sim.Counters(modelLocal).Requests; b+l != 0 {
				t.Fatalf("other models asked after a refusal: backup %d, local %d", b, l)
			}
			if r.tpl.callCount() != 0 {
				t.Fatal("templates asked after a refusal")
			}
		})
	}
}

func TestFilterFinishAfterFirstTokenEndsCut(t *testing.T) {
	r := newRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{FilterFinish: true})
	a := r.ask(t, Request{})
	if !a.out.Answered || r.requests(t, "a", "refused") != 1 || a.end().Reason != ReasonCut {
		t.Fatalf("outcome %+v, end %+v; want answered, refused, cut", a.out, a.end())
	}
	if got := r.b.Sim.Counters(modelB).Requests; got != 0 {
		t.Fatalf("backup got %d requests after a content filter", got)
	}
}

func TestBadRequestStopsModelsButTemplatesAnswer(t *testing.T) {
	r := newRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 400, Code: "invalid_value"})
	a := r.ask(t, Request{Profile: Profile{Lang: "en", Seniority: "mid"}})
	if !a.out.Answered || a.out.Level != L3 || a.out.Source != tplID || r.requests(t, "a", "bad_request") != 1 {
		t.Fatalf("outcome %+v; want L3 from %s after a bad_request", a.out, tplID)
	}
	if a.start().Note != templateNoteEN {
		t.Fatalf("note %q, want the default English note", a.start().Note)
	}
	if b, l := r.b.Sim.Counters(modelB).Requests, r.local.Sim.Counters(modelLocal).Requests; b+l != 0 {
		t.Fatalf("other models asked after a bad_request: backup %d, local %d", b, l)
	}
	logs := r.logs.String()
	if !strings.Contains(logs, `"level":"error"`) || !strings.Contains(logs, `"code":"invalid_value"`) || !strings.Contains(logs, `"status":400`) {
		t.Fatalf("bad_request not logged as our bug with its code: %s", logs)
	}
	if strings.Contains(logs, "sk-a") {
		t.Fatal("an API key reached the log")
	}
}

// TestCutContinuesOnPrefillSource covers a stream that dies after its
// first token, three ways: the rest comes from the backup, which accepts
// the partial answer as an assistant prefill.
func TestCutContinuesOnPrefillSource(t *testing.T) {
	tests := []struct {
		name  string
		fault vendorsim.Fault
	}{
		{"connection cut", vendorsim.Fault{CutAfter: 3}},
		{"error event mid-stream", vendorsim.Fault{ErrorAfter: 3}},
		{"stall", vendorsim.Fault{StallAfter: 3}}, // StallMS 300 on a in this test
		{"malformed chunk mid-stream", vendorsim.Fault{MalformedAt: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, func(c *Config) {
				c.L1.Vendors[0].StallMS = 300
				c.L1.Vendors[1].Prefill = true
			})
			r.a.Sim.SetFault(modelA, tc.fault)
			a := r.ask(t, Request{})
			if a.out.Source != "a" || a.end().Reason != ReasonDone || r.requests(t, "a", "cut") != 1 {
				t.Fatalf("outcome %+v, end %+v; want started by a, continued to done, class cut", a.out, a.end())
			}
			if a.text() != replyText {
				t.Fatalf("text %q\nwant %q", a.text(), replyText)
			}
			r.b.WaitCounters(t, modelB, func(c vendorsim.Counters) bool { return c.Completed == 1 && c.Requests == 1 })
			if got := r.requests(t, "a", "cut"); got != 1 {
				t.Fatalf("requests{a,cut} = %v, want 1", got)
			}
		})
	}
}

func TestCutWithoutPrefillSourceEndsCut(t *testing.T) {
	r := newRig(t, nil) // no source accepts a prefill
	r.a.Sim.SetFault(modelA, vendorsim.Fault{CutAfter: 3})
	a := r.ask(t, Request{})
	if a.out.Source != "a" || a.end().Reason != ReasonCut || !a.out.Cut {
		t.Fatalf("outcome %+v, end %+v; want cut", a.out, a.end())
	}
	if got := a.text(); got == "" || len(got) >= len(replyText) || !strings.HasPrefix(replyText, got) {
		t.Fatalf("text %q: want a strict prefix of the reply", got)
	}
	if got := r.b.Sim.Counters(modelB).Requests; got != 0 {
		t.Fatalf("backup asked %d times without accepting a prefill", got)
	}
}

func TestNoDoneIsComplete(t *testing.T) {
	r := newRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{NoDone: true})
	a := r.ask(t, Request{})
	if a.out.Source != "a" || a.end().Reason != ReasonDone || a.text() != replyText {
		t.Fatalf("outcome %+v, end %+v, text %q; want a complete answer from a", a.out, a.end(), a.text())
	}
}

func TestRetryAfterThatFitsIsHonoured(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.SLAms = 3000
		c.L1.Vendors = c.L1.Vendors[:1] // no backup: the retry is the only way on L1
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 429, RetryAfter: "1", FailNext: 1})
	a := r.ask(t, Request{})
	if a.out.Level != L1 || a.out.Source != "a" || a.text() != replyText {
		t.Fatalf("outcome %+v; want L1 from a after its Retry-After", a.out)
	}
	if got := r.a.Sim.Counters(modelA).Requests; got != 2 {
		t.Fatalf("vendor a got %d requests, want 2", got)
	}
	if a.firstAt < time.Second {
		t.Fatalf("first token after %v: the Retry-After of 1 s was not honoured", a.firstAt)
	}
	if got := r.local.Sim.Counters(modelLocal).Requests; got != 0 {
		t.Fatalf("local asked %d times while the retry fitted", got)
	}
}

func TestRetryAfterBeyondBudgetFallsThrough(t *testing.T) {
	r := newRig(t, func(c *Config) { c.L1.Vendors = c.L1.Vendors[:1] })
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 429, RetryAfter: "5"})
	a := r.ask(t, Request{})
	if a.out.Level != L2 || a.out.Source != "local" {
		t.Fatalf("outcome %+v; want L2 at once", a.out)
	}
	if a.took > 4*time.Second { // the Retry-After is 5 s
		t.Fatalf("took %v: waited for a Retry-After beyond the budget", a.took)
	}
}

func TestL1DownFallsToLocal(t *testing.T) {
	r := newRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 503})
	r.b.Sim.SetFault(modelB, vendorsim.Fault{Status: 500})
	a := r.ask(t, Request{})
	if a.out.Level != L2 || a.out.Source != "local" || a.text() != replyText || a.start().Level != L2 {
		t.Fatalf("outcome %+v; want L2 from local", a.out)
	}
}

func TestLocalTimeoutFallsToTemplates(t *testing.T) {
	r := newRig(t, func(c *Config) { c.L1.Vendors = nil })
	r.local.Sim.SetFault(modelLocal, vendorsim.Fault{NoAnswer: true})
	a := r.ask(t, Request{Question: "说说你和同事发生冲突的经历", Profile: Profile{Lang: "zh"}})
	if a.out.Level != L3 || a.out.Source != tplID || r.requests(t, "local", "timeout") != 1 {
		t.Fatalf("outcome %+v; want L3 after the local timeout", a.out)
	}
	if a.start().Note != templateNoteZH {
		t.Fatalf("note %q, want the Chinese default", a.start().Note)
	}
}

func TestBulkheadFullFallsThroughAtOnce(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.L1.Vendors = nil
		c.L2.MaxInFlight = 1
	})
	release, ok := r.engine.acquireLocal() // another question holds the only slot
	if !ok {
		t.Fatal("could not take the free slot")
	}
	defer release()
	a := r.ask(t, Request{})
	if a.out.Level != L3 {
		t.Fatalf("outcome %+v; want L3 when the bulkhead is full", a.out)
	}
	if got := r.local.Sim.Counters(modelLocal).Requests; got != 0 {
		t.Fatalf("local got %d requests through a full bulkhead", got)
	}
	if got := metricValue(t, r.reg, "poise_backend_shed_total", map[string]string{"backend": "local"}); got != 1 {
		t.Fatalf("shed = %v, want 1", got)
	}
	release()
	if a := r.ask(t, Request{}); a.out.Level != L2 {
		t.Fatalf("outcome %+v after the slot was freed; want L2", a.out)
	}
}

func TestNothingAnswersMeansCoach(t *testing.T) {
	r := newRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 503})
	r.b.Sim.SetFault(modelB, vendorsim.Fault{Status: 503})
	r.local.Sim.SetFault(modelLocal, vendorsim.Fault{Status: 503})
	r.tpl.miss = true
	a := r.ask(t, Request{})
	if a.out.Answered || r.requests(t, "local", "server") != 1 {
		t.Fatalf("outcome %+v; want not answered (coach), last class server", a.out)
	}
}

func TestTemplateErrorTakesL3Down(t *testing.T) {
	r := newRig(t, func(c *Config) { c.L1.Vendors = nil; c.L2.BaseURL = "" })
	r.tpl.err = errors.New("chromem: query failed")
	a := r.ask(t, Request{})
	if a.out.Answered {
		t.Fatalf("outcome %+v; want not answered", a.out)
	}
	if got := r.nextSignal(t); got != (Signal{Event: level.TemplatesFailing, Level: L3}) {
		t.Fatalf("signal %+v, want templates_failing", got)
	}
	if r.health.Supported() != L4 {
		t.Fatalf("Supported() = %v, want L4", r.health.Supported())
	}
}

func TestLevelAndHealthSkipSources(t *testing.T) {
	r := newRig(t, nil)
	a := r.ask(t, Request{Level: L2})
	if a.out.Level != L2 || r.a.Sim.Counters(modelA).Requests != 0 {
		t.Fatalf("outcome %+v, vendor a asked %d times; want L2 without L1", a.out, r.a.Sim.Counters(modelA).Requests)
	}
	a = r.ask(t, Request{Level: L3})
	if a.out.Level != L3 || r.local.Sim.Counters(modelLocal).Requests != 1 {
		t.Fatalf("outcome %+v; want L3 without a second local request", a.out)
	}
	if a := r.ask(t, Request{Level: L4}); a.out.Answered {
		t.Fatalf("outcome %+v at L4; want the coach", a.out)
	}
}

// TestLiveAllDownEventsTakeL1Down: three questions on which both vendors
// fail make one all-down event each; then L1 is skipped for everyone.
func TestLiveAllDownEventsTakeL1Down(t *testing.T) {
	r := newRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 503})
	r.b.Sim.SetFault(modelB, vendorsim.Fault{Status: 502})
	for i := range 3 {
		if a := r.ask(t, Request{}); a.out.Level != L2 {
			t.Fatalf("question %d: outcome %+v; want L2", i+1, a.out)
		}
	}
	if got := r.nextSignal(t); got != (Signal{Event: level.VendorAllDown, Level: L1}) {
		t.Fatalf("signal %+v, want vendor_all_down", got)
	}
	if got := r.health.Supported(); got != L2 {
		t.Fatalf("Supported() = %v, want L2", got)
	}
	before := r.a.Sim.Counters(modelA).Requests + r.b.Sim.Counters(modelB).Requests
	if a := r.ask(t, Request{Level: L1}); a.out.Level != L2 {
		t.Fatalf("outcome %+v; want L2", a.out)
	}
	if after := r.a.Sim.Counters(modelA).Requests + r.b.Sim.Counters(modelB).Requests; after != before {
		t.Fatal("a known L1 outage was paid again")
	}
}

// TestNonCountingFailuresAreNotAllDown: a vendor failing with
// context_length does not make the question an all-down event.
func TestNonCountingFailuresAreNotAllDown(t *testing.T) {
	r := newRig(t, nil)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 400, Code: "context_length_exceeded"})
	r.b.Sim.SetFault(modelB, vendorsim.Fault{Status: 503})
	for range 3 {
		r.ask(t, Request{})
	}
	if r.health.Down(L1) {
		t.Fatal("L1 down although vendor a only reported context_length")
	}
}

func TestLocalTimeoutsTakeL2Down(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.L1.Vendors = nil
		c.L2.TimeoutMS = 50
	})
	r.local.Sim.SetFault(modelLocal, vendorsim.Fault{NoAnswer: true})
	for i := range 5 {
		if a := r.ask(t, Request{}); a.out.Level != L3 {
			t.Fatalf("question %d: outcome %+v; want L3", i+1, a.out)
		}
	}
	if got := r.nextSignal(t); got != (Signal{Event: level.LocalFailing, Level: L2}) {
		t.Fatalf("signal %+v, want local_failing", got)
	}
	before := r.local.Sim.Counters(modelLocal).Requests
	r.ask(t, Request{Level: L2})
	if got := r.local.Sim.Counters(modelLocal).Requests; got != before {
		t.Fatal("the local model was asked after L2 went down")
	}
}

func TestAnswerStopsPromptlyOnCancel(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.L1.FirstTokenTimeoutMS = 5000
		c.L1.HedgeAfterMS = 10
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{NoAnswer: true})
	r.b.Sim.SetFault(modelB, vendorsim.Fault{NoAnswer: true})
	ctx, cancel := context.WithCancel(t.Context())
	cancelled := make(chan time.Time, 1)
	waitCountersAsync(t, r.b, modelB, func(c vendorsim.Counters) bool { return c.Requests == 1 }, func() {
		cancelled <- time.Now()
		cancel()
	})
	a := r.askCtx(t, ctx, Request{})
	if a.out.Answered {
		t.Fatalf("outcome %+v after cancel", a.out)
	}
	if after := time.Since(<-cancelled); after > 4*time.Second { // the first-token timeout is 5 s
		t.Fatalf("Answer returned %v after its ctx was cancelled", after)
	}
	r.a.WaitCounters(t, modelA, func(c vendorsim.Counters) bool { return c.Cancelled == 1 })
	r.b.WaitCounters(t, modelB, func(c vendorsim.Counters) bool { return c.Cancelled == 1 })
	if got := r.local.Sim.Counters(modelLocal).Requests; got != 0 {
		t.Fatalf("local asked %d times after the caller cancelled", got)
	}
	if r.health.Down(L1) || r.requests(t, "a", "timeout") != 0 {
		t.Fatal("our own cancellation was counted as a failure")
	}
}

// waitCountersAsync calls then once cond holds for model's counters on h,
// from a goroutine the test waits for.
func waitCountersAsync(t *testing.T, h simtest.Host, model string, cond func(vendorsim.Counters) bool, then func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, _ = h.Sim.WaitFor(ctx, model, cond)
		then()
	}()
	t.Cleanup(func() { <-done })
}

// TestHTTPProbesFollowVendorHealth: the default probes (GET /v1/models)
// fail while both vendors report HealthDown: 3 failed rounds take L1 down;
// 3 passing rounds bring it back.
func TestHTTPProbesFollowVendorHealth(t *testing.T) {
	r := newRig(t, nil)
	round := func() {
		r.clock.Advance(time.Second)
		r.health.CheckNow(t.Context())
	}
	r.a.Sim.SetFault(vendorsim.AnyModel, vendorsim.Fault{HealthDown: true})
	r.b.Sim.SetFault(vendorsim.AnyModel, vendorsim.Fault{HealthDown: true})
	for range 3 {
		round()
	}
	if got := r.nextSignal(t); got != (Signal{Event: level.VendorAllDown, Level: L1}) {
		t.Fatalf("signal %+v, want vendor_all_down", got)
	}
	if got := r.health.Supported(); got != L2 {
		t.Fatalf("Supported() = %v, want L2", got)
	}
	if got := r.a.Sim.Counters(vendorsim.AnyModel).Probes; got != 3 {
		t.Fatalf("vendor a probed %d times, want 3", got)
	}
	r.a.Sim.ClearFaults()
	for range 3 {
		round()
	}
	if got := r.nextSignal(t); got != (Signal{Event: level.Recovered, Level: L1}) {
		t.Fatalf("signal %+v, want recovered", got)
	}
	if r.health.BackendUp("b") {
		t.Fatal("vendor b up although its probes still fail")
	}
}
