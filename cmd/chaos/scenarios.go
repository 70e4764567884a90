package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// scenario is one named, seeded, repeatable fault story.
type scenario struct {
	name  string
	about string // one line for the report
	// ci marks the scenarios of the short run (cmd/chaos's go test).
	ci       bool
	nodes    int  // poise nodes; 0 means 1
	redis    bool // start a redis-server and point the nodes at it
	demo     bool // run poise -demo (faults through its ops API)
	config   func(*poiseConfig)
	down     []string       // backends down from the start
	mix      []load.Profile // session profiles in turn; default suiteMix
	duration time.Duration  // of traffic; a drain follows
	steps    []step
	chart    bool // draw sessions per level over time
	// expect lists what the scenario must show for its fault to have
	// bitten (a transition, a resume, a fallback source); nil: nothing.
	expect func(o *outcome, res *load.Result) []string
	// faultFrom and faultUntil bound the fault, so -outage can stretch
	// it; zero: its length is fixed.
	faultFrom, faultUntil time.Duration
}

// everySession expects each opened session to have made the transition
// key ("L1→L2 (vendor_all_down)") at least once.
func everySession(keys ...string) func(*outcome, *load.Result) []string {
	return func(o *outcome, res *load.Result) []string {
		var miss []string
		for _, k := range keys {
			if got := o.Transitions[k]; got < o.Opened {
				miss = append(miss, fmt.Sprintf("expected %s for every session, saw %d of %d", k, got, o.Opened))
			}
		}
		return miss
	}
}

// exactly expects each opened session to have made the transitions keys,
// in this order, and no other: for a fault that should move a session
// once and back once, any more is flapping.
func exactly(keys ...string) func(*outcome, *load.Result) []string {
	want := strings.Join(keys, ", ")
	return func(o *outcome, res *load.Result) []string {
		bySession := map[int][]string{}
		for _, l := range res.Levels {
			bySession[l.Session] = append(bySession[l.Session], fmt.Sprintf("%s→%s (%s)", l.From, l.To, l.Reason))
		}
		good, example := 0, ""
		for id, got := range bySession {
			if s := strings.Join(got, ", "); s == want {
				good++
			} else if example == "" {
				example = fmt.Sprintf("; session %d: %s", id, s)
			}
		}
		if good < o.Opened {
			return []string{fmt.Sprintf("expected exactly %s for every session, %d of %d did%s", want, good, o.Opened, example)}
		}
		return nil
	}
}

// resumed expects at least one session to have resumed after its node
// died.
func resumed(o *outcome, res *load.Result) []string {
	n := 0
	for _, rc := range res.Reconnects {
		if rc.Resumed {
			n++
		}
	}
	if n == 0 {
		return []string{"expected sessions to resume on the surviving node, none did"}
	}
	return nil
}

// captionsFrom expects finals from a caption source whose name starts
// with prefix.
func captionsFrom(prefix string) func(*outcome, *load.Result) []string {
	return func(o *outcome, res *load.Result) []string {
		for src, n := range o.Summary.CaptionSources {
			if strings.HasPrefix(src, prefix) && n > 0 {
				return nil
			}
		}
		return []string{fmt.Sprintf("expected captions from %s, got %v", prefix, o.Summary.CaptionSources)}
	}
}

// stepKind says how a step counts for the report: the first fault step
// starts the fault window, the last clear step ends it.
type stepKind int

const (
	stepFault stepKind = iota
	stepClear
)

// step is one action at a time after traffic started.
type step struct {
	at   time.Duration
	what string
	kind stepKind
	do   func(ctx context.Context, e *env) error
}

// Session profiles of the suite.
var (
	typist   = load.Profile{Name: "typist", Typed: true, QuestionGap: 4 * time.Second}
	listener = load.Profile{Name: "listener", Audio: true, AutoAnswer: true}
	suiteMix = []load.Profile{typist, typist, listener}
)

// Faults the scenarios use.
var (
	outage  = vendorsim.Fault{Status: 503, HealthDown: true}
	partial = vendorsim.Fault{Status: 503} // completions fail; the model list and /health answer
	limited = vendorsim.Fault{Status: 429, RetryAfter: "1", FailNext: 12}
)

func faultOn(at time.Duration, what, simName, model string, f vendorsim.Fault) step {
	return step{at: at, what: what, kind: stepFault, do: func(ctx context.Context, e *env) error {
		return e.fault(ctx, simName, model, f)
	}}
}

func clearAt(at time.Duration, what string, sims ...string) step {
	return step{at: at, what: what, kind: stepClear, do: func(ctx context.Context, e *env) error {
		return e.clear(ctx, sims...)
	}}
}

func demoStep(at time.Duration, kind stepKind, what string, on bool, faults ...string) step {
	return step{at: at, what: what, kind: kind, do: func(ctx context.Context, e *env) error {
		for _, f := range faults {
			if err := e.demoFault(ctx, f, on); err != nil {
				return err
			}
		}
		return nil
	}}
}

// lasting returns sc with its fault window (faultFrom to faultUntil)
// stretched to last d, and every later step and the end moved with it. A
// scenario without a window, or d of 0, is returned as it is.
func (sc scenario) lasting(d time.Duration) scenario {
	if d <= 0 || sc.faultUntil == 0 {
		return sc
	}
	shift := d - (sc.faultUntil - sc.faultFrom)
	steps := make([]step, len(sc.steps))
	for i, st := range sc.steps {
		if st.at >= sc.faultUntil {
			st.at += shift
		}
		steps[i] = st
	}
	sc.steps = steps
	sc.duration += shift
	sc.faultUntil += shift
	return sc
}

// scenarios is the suite, in the order it runs.
var scenarios = []scenario{
	{
		name: "l1-outage", about: "both L1 vendors answer 503 and fail probes (a regional outage), then recover",
		ci: true, chart: true, duration: 24 * time.Second, faultFrom: 3 * time.Second, faultUntil: 13 * time.Second,
		expect: everySession("L1→L2 (vendor_all_down)", "L2→L1 (recovered)"),
		steps: []step{
			faultOn(3*time.Second, "vendor-a: 503 + probes down", simVendorA, "*", outage),
			faultOn(3*time.Second, "vendor-b: 503 + probes down", simVendorB, "*", outage),
			clearAt(13*time.Second, "both vendors recover", simVendorA, simVendorB),
		},
	},
	{
		name: "rate-limit-429", about: "429 bursts with Retry-After: 1 on the primary, then on both vendors",
		ci: true, duration: 16 * time.Second,
		steps: []step{
			faultOn(2*time.Second, "vendor-a: next 12 requests 429", simVendorA, "*", limited),
			faultOn(6*time.Second, "vendor-a: next 12 requests 429", simVendorA, "*", limited),
			faultOn(10*time.Second, "vendor-a: next 12 requests 429", simVendorA, "*", limited),
			faultOn(10*time.Second, "vendor-b: next 12 requests 429", simVendorB, "*", limited),
			clearAt(13*time.Second, "bursts over", simVendorA, simVendorB),
		},
	},
	{
		name: "partial-outage", about: "both L1 vendors answer 503 to every completion while their model list answers 200 (an overloaded deployment), then recover",
		ci: true, duration: 24 * time.Second, faultFrom: 3 * time.Second, faultUntil: 13 * time.Second,
		expect: exactly("L1→L2 (vendor_all_down)", "L2→L1 (recovered)"),
		steps: []step{
			faultOn(3*time.Second, "vendor-a: completions 503, model list 200", simVendorA, "*", partial),
			faultOn(3*time.Second, "vendor-b: completions 503, model list 200", simVendorB, "*", partial),
			clearAt(13*time.Second, "both vendors recover", simVendorA, simVendorB),
		},
	},
	{
		name: "quota-402", about: "the primary vendor's quota is exhausted (402 insufficient_quota)",
		duration: 14 * time.Second,
		steps: []step{
			faultOn(2*time.Second, "vendor-a: 402 insufficient_quota", simVendorA, "*", vendorsim.Fault{Status: 402, Code: "insufficient_quota"}),
			clearAt(10*time.Second, "quota topped up", simVendorA),
		},
	},
	{
		name: "model-404", about: "the primary's model is deprecated (404 model_not_found)",
		duration: 14 * time.Second,
		steps: []step{
			faultOn(2*time.Second, "vendor-a: gpt-4o-mini 404", simVendorA, modelA, vendorsim.Fault{Status: 404, Code: "model_not_found"}),
			clearAt(10*time.Second, "model restored", simVendorA),
		},
	},
	{
		name: "dns-failure", about: "the primary vendor's host does not resolve (base_url http://vendor-a.invalid/v1) for the whole run",
		duration: 12 * time.Second, down: []string{simVendorA},
		config: func(c *poiseConfig) {
			c.L1.Vendors[0].BaseURL = "http://vendor-a.invalid/v1"
		},
	},
	{
		name: "slow-first-token", about: "first tokens slow on the primary (1.1 s), then on both (1.1 s and 1.4 s)",
		duration: 16 * time.Second,
		steps: []step{
			faultOn(2*time.Second, "vendor-a: first token after 1100 ms", simVendorA, "*", vendorsim.Fault{FirstTokenDelayMS: 1100}),
			faultOn(7*time.Second, "vendor-b: first token after 1400 ms", simVendorB, "*", vendorsim.Fault{FirstTokenDelayMS: 1400}),
			clearAt(12*time.Second, "latency back to normal", simVendorA, simVendorB),
		},
	},
	{
		name: "stream-stall", about: "the primary's streams stall after 3 chunks",
		duration: 14 * time.Second,
		steps: []step{
			faultOn(2*time.Second, "vendor-a: stall after 3 chunks", simVendorA, "*", vendorsim.Fault{StallAfter: 3}),
			clearAt(10*time.Second, "streams flow", simVendorA),
		},
	},
	{
		name: "stream-cut", about: "the primary's streams are cut (connection closed) after 3 chunks",
		ci: true, duration: 14 * time.Second,
		steps: []step{
			faultOn(2*time.Second, "vendor-a: cut after 3 chunks", simVendorA, "*", vendorsim.Fault{CutAfter: 3}),
			clearAt(10*time.Second, "streams complete", simVendorA),
		},
	},
	{
		name: "local-timeout", about: "L1 is down and the local model (L2) stops answering within its 2 s timeout",
		ci: true, duration: 22 * time.Second, expect: everySession("L1→L2 (vendor_all_down)", "L2→L3 (local_failing)"),
		steps: []step{
			faultOn(2*time.Second, "vendor-a: 503 + probes down", simVendorA, "*", outage),
			faultOn(2*time.Second, "vendor-b: 503 + probes down", simVendorB, "*", outage),
			faultOn(6*time.Second, "local: first token after 3000 ms", simLocal, "*", vendorsim.Fault{FirstTokenDelayMS: 3000}),
			clearAt(14*time.Second, "all recover", simVendorA, simVendorB, simLocal),
		},
	},
	{
		name: "templates-down", about: "poise -demo: L1 down, L2 slow, then the template store fails (its demo fault)",
		demo: true, duration: 22 * time.Second, expect: everySession("L3→L4 (templates_failing)"),
		steps: []step{
			demoStep(2*time.Second, stepFault, "l1_down + l2_slow", true, "l1_down", "l2_slow"),
			demoStep(7*time.Second, stepFault, "templates_down", true, "templates_down"),
			demoStep(14*time.Second, stepClear, "all faults off", false, "templates_down", "l2_slow", "l1_down"),
		},
	},
	{
		name: "whisper-down", about: "the whisper server fails (500, probes down); the cloud speech-to-text takes the finals",
		mix: []load.Profile{listener, typist}, duration: 24 * time.Second, expect: captionsFrom("cloud"),
		steps: []step{
			faultOn(3*time.Second, "whisper: 500 + probes down", simWhisper, "*", vendorsim.Fault{Status: 500, HealthDown: true}),
			clearAt(15*time.Second, "whisper back", simWhisper),
		},
	},
	{
		name: "redis-down", about: "two nodes share Redis; redis-server is killed, then restarted empty",
		redis: true, nodes: 2, duration: 16 * time.Second,
		steps: []step{
			{at: 3 * time.Second, what: "redis-server killed", kind: stepFault, do: func(ctx context.Context, e *env) error { return e.stopRedis() }},
			{at: 11 * time.Second, what: "redis-server restarted", kind: stepClear, do: func(ctx context.Context, e *env) error { return e.startRedis(ctx) }},
		},
	},
	{
		name: "node-killed", about: "two nodes share Redis; one is killed (SIGKILL) and its sessions resume on the other",
		ci: true, redis: true, nodes: 2, duration: 14 * time.Second, expect: resumed,
		steps: []step{
			{at: 4 * time.Second, what: "node-2 killed", kind: stepFault, do: func(ctx context.Context, e *env) error { return e.killNode(ctx, 1) }},
		},
	},
}

// scaled returns sc with its duration and step times multiplied by f
// (f <= 0 means 1).
func (sc scenario) scaled(f float64) scenario {
	if f <= 0 || f == 1 {
		return sc
	}
	scale := func(d time.Duration) time.Duration {
		return time.Duration(float64(d) * f).Round(100 * time.Millisecond)
	}
	sc.duration = scale(sc.duration)
	steps := make([]step, len(sc.steps))
	for i, st := range sc.steps {
		st.at = scale(st.at)
		steps[i] = st
	}
	sc.steps = steps
	return sc
}
