package tiers

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/cmd/vendorsim/sim/simtest"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/health/healthtest"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// testTimeout bounds every wait in these tests; nothing comes close.
const testTimeout = 10 * time.Second

// The models of the test rig; each vendor has its own simulated host.
const (
	modelA     = "model-a"
	modelALong = "model-a-128k"
	modelB     = "model-b"
	modelLocal = "local-model"
	tplID      = "behavioral-conflict-mid"
)

// replyText is what every simulated model answers, so that a continuation
// on another model can be checked word for word.
const replyText = "Situation: our checkout service kept timing out during a sale. " +
	"Task: I owned the fix. Action: I profiled the database calls, added a cache " +
	"and rolled it out behind a flag. Result: p99 latency fell by sixty percent."

// newSimHost serves a simulated vendor until the test ends.
func newSimHost(t *testing.T) simtest.Host {
	t.Helper()
	return simtest.Start(t, vendorsim.Options{TokenDelay: 2 * time.Millisecond})
}

// fakeTemplates stands in for template recall (its own package is tested
// on its own); it answers every question with one template unless told
// otherwise.
type fakeTemplates struct {
	mu    sync.Mutex
	miss  bool
	err   error
	calls int
}

func (f *fakeTemplates) Match(ctx context.Context, text, lang, seniority string) (TemplateMatch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return TemplateMatch{}, f.err
	}
	if f.miss {
		return TemplateMatch{Similarity: 0.4}, nil
	}
	return TemplateMatch{Hit: true, Similarity: 0.9, ID: tplID, Question: "Tell me about a conflict.",
		Answer: "Situation: ... Task: ... Action: ... Result: ..."}, nil
}

func (f *fakeTemplates) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// rig is an engine over two simulated vendors (a, b), a simulated local
// model and fake templates, with a real health center and metrics.
type rig struct {
	a, b, local simtest.Host
	tpl         *fakeTemplates
	cfg         Config
	health      *health.Center
	engine      *Engine
	reg         *prometheus.Registry
	logs        *syncBuffer
	signals     <-chan Signal
	clock       *healthtest.Clock // the health center's; probe rounds move with it
}

// newRig builds the rig; adjust changes the config before the engine is
// made. By default the backup is fired only on a failure (hedge_after 5 s),
// and timeouts are 1 s: long enough for a loaded 2-core machine, short
// enough for the tests that wait for them.
func newRig(t *testing.T, adjust func(*Config)) *rig {
	t.Helper()
	r := &rig{a: newSimHost(t), b: newSimHost(t), local: newSimHost(t), tpl: &fakeTemplates{},
		reg: prometheus.NewPedanticRegistry(), logs: &syncBuffer{}, clock: healthtest.NewClock()}
	for _, h := range []struct {
		host  simtest.Host
		model string
	}{{r.a, modelA}, {r.a, modelALong}, {r.b, modelB}, {r.local, modelLocal}} {
		h.host.Sim.SetReply(h.model, replyText)
	}
	r.cfg = Config{
		SLAms:  1500,
		Health: HealthConfig{IntervalMS: 1000, RecoverAfter: 3},
		L1: L1Config{Mode: ModeHedge, HedgeAfterMS: 5000, FirstTokenTimeoutMS: 1000, DownAfter: 3, DownWindowMS: 60000,
			Vendors: []upstream.Endpoint{
				{Name: "a", BaseURL: r.a.URL, APIKey: "sk-a", Model: modelA},
				{Name: "b", BaseURL: r.b.URL, APIKey: "sk-b", Model: modelB},
			}},
		L2: L2Config{Name: "local", BaseURL: r.local.URL, Model: modelLocal, TimeoutMS: 1000, FailAfter: 5},
	}
	if adjust != nil {
		adjust(&r.cfg)
	}
	if err := r.cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	log := zerolog.New(r.logs)
	requests := upstream.NewMetrics(r.reg)
	m := NewMetrics(r.reg, requests)
	r.health = health.New(healthConfig(r.cfg), healthProbes(r.cfg), log, health.NewMetrics(r.reg), health.WithClock(r.clock.Now))
	sigs, cancel := r.health.Subscribe(16)
	t.Cleanup(cancel)
	r.signals = sigs
	r.engine = NewEngine(r.cfg, r.health, r.tpl, log, m)
	t.Cleanup(r.engine.Close)
	return r
}

// answer is one Answer call's events and what they tell.
type answer struct {
	events  []Event
	out     outcome       // read from events
	firstAt time.Duration // from the call to the first Delta
	took    time.Duration
}

// start, text and end read a well-formed stream; see checkShape.
func (a answer) start() Event { return a.events[0] }
func (a answer) end() Event   { return a.events[len(a.events)-1] }
func (a answer) text() string {
	var b strings.Builder
	for _, ev := range a.events {
		if ev.Kind == EventDelta {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// ask runs one question at req.Level (L1 when zero) and checks the shape
// of its events.
func (r *rig) ask(t *testing.T, req Request) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	return r.askCtx(t, ctx, req)
}

func (r *rig) askCtx(t *testing.T, ctx context.Context, req Request) answer {
	t.Helper()
	return r.askHook(t, ctx, req, nil)
}

// askHook is askCtx with a hook that sees each event as it is emitted, on
// Answer's goroutine.
func (r *rig) askHook(t *testing.T, ctx context.Context, req Request, hook func(Event)) answer {
	t.Helper()
	if req.Question == "" {
		req.Question = "Tell me about a time you fixed a production outage."
	}
	if req.ID == "" {
		req.ID = "q1"
	}
	var a answer
	began := time.Now()
	r.engine.Answer(ctx, req, func(ev Event) {
		if ev.Kind == EventDelta && a.firstAt == 0 {
			a.firstAt = time.Since(began)
		}
		a.events = append(a.events, ev)
		if hook != nil {
			hook(ev)
		}
	})
	a.took = time.Since(began)
	a.out = outcomeOf(a.events)
	checkShape(t, a, ctx.Err() != nil)
	return a
}

// outcome is how an answer ended, as its events tell it.
type outcome struct {
	Answered   bool   // a Start was emitted
	Level      Level  // Start's
	Source     string // Start's
	Cut        bool   // End's reason is cut
	OverBudget []string
}

func outcomeOf(events []Event) outcome {
	var o outcome
	for _, ev := range events {
		switch ev.Kind {
		case EventStart:
			o.Answered, o.Level, o.Source, o.OverBudget = true, ev.Level, ev.Source, ev.OverBudget
		case EventEnd:
			o.Cut, o.OverBudget = ev.Reason == ReasonCut, ev.OverBudget
		}
	}
	return o
}

// checkShape fails unless the events are one Start, Deltas, one End (or
// one End with ReasonNone when not answered). A cancelled answer may lack
// its End.
func checkShape(t *testing.T, a answer, cancelled bool) {
	t.Helper()
	if !a.out.Answered {
		switch {
		case len(a.events) == 0 && cancelled:
		case len(a.events) != 1 || a.events[0].Kind != EventEnd || a.events[0].Reason != ReasonNone:
			t.Fatalf("not answered, yet events %+v; want one End %q", a.events, ReasonNone)
		}
		return
	}
	if len(a.events) == 0 || a.events[0].Kind != EventStart {
		t.Fatalf("answered, but the first event is not Start: %+v", a.events)
	}
	last := len(a.events) - 1
	for i, ev := range a.events[1:] {
		i++
		switch {
		case ev.Kind == EventDelta && i < last:
		case ev.Kind == EventDelta && i == last && cancelled:
		case ev.Kind == EventEnd && i == last:
			if ev.Reason != ReasonDone && ev.Reason != ReasonCut {
				t.Fatalf("End reason %q", ev.Reason)
			}
		default:
			t.Fatalf("event %d of %d is %+v: want Deltas then one End", i, last, ev)
		}
	}
}

// requests returns poise_backend_requests_total{backend,class}.
func (r *rig) requests(t *testing.T, backend string, class string) float64 {
	t.Helper()
	return max(metricValue(t, r.reg, "poise_backend_requests_total", map[string]string{"backend": backend, "class": class}), 0)
}

// nextSignal returns the next health signal, failing if none is pending.
func (r *rig) nextSignal(t *testing.T) Signal {
	t.Helper()
	select {
	case s := <-r.signals:
		return s
	default:
		t.Fatal("no health signal")
		return Signal{}
	}
}

// healthConfig is the health center's part of cfg, as cmd/poise wires it.
func healthConfig(cfg Config) health.Config {
	return health.Config{IntervalMS: cfg.Health.IntervalMS, RecoverAfter: cfg.Health.RecoverAfter,
		L1DownAfter: cfg.L1.DownAfter, L1DownWindowMS: cfg.L1.DownWindowMS,
		L2FailAfter: cfg.L2.FailAfter, L2FailWindowMS: cfg.L2.FailWindowMS}
}

// healthProbes probes cfg's vendors and local model as cmd/poise does,
// and passes the templates' check.
func healthProbes(cfg Config) []health.Probe {
	hc := upstream.NewHTTPClient()
	var out []health.Probe
	for _, v := range cfg.L1.Vendors {
		out = append(out, health.ListProbe(v.Name, L1, v.BaseURL, v.APIKey, hc))
	}
	if l2 := cfg.WithDefaults().L2; l2.BaseURL != "" {
		out = append(out, health.CompletionProbe(l2.Name, L2, l2.Endpoint(), ms(l2.TimeoutMS), hc))
	}
	return append(out, health.Probe{Name: TemplatesBackend, Level: L3, Check: func(context.Context) error { return nil }})
}
