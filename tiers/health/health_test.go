package health

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// fakeClock is an injected clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// switchProbe is a probe whose result the test sets.
type switchProbe struct {
	mu    sync.Mutex
	err   error
	calls atomic.Int64
}

func (p *switchProbe) set(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = err
}

func (p *switchProbe) check(context.Context) error {
	p.calls.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

var errProbe = errors.New("probe: 503")

// testHealthConfig uses small numbers: 1 s probe rounds, 10 s windows.
func testHealthConfig() Config {
	return Config{IntervalMS: 1000, RecoverAfter: 3, L1DownAfter: 3, L1DownWindowMS: 10000, L2FailAfter: 5, L2FailWindowMS: 10000}
}

// healthRig is a Health over func probes for two vendors, the local model
// and the templates, with an injected clock.
type healthRig struct {
	h                 *Center
	clock             *fakeClock
	a, b, local, tmpl *switchProbe
	signals           <-chan level.Signal
}

func newHealthRig(t *testing.T, m *Metrics, opts ...Option) *healthRig {
	t.Helper()
	r := &healthRig{clock: newFakeClock(), a: &switchProbe{}, b: &switchProbe{}, local: &switchProbe{}, tmpl: &switchProbe{}}
	probes := []Probe{
		{Name: "a", Level: level.L1, Check: r.a.check},
		{Name: "b", Level: level.L1, Check: r.b.check},
		{Name: "local", Level: level.L2, Check: r.local.check},
		{Name: "templates", Level: level.L3, Check: r.tmpl.check},
	}
	r.h = New(testHealthConfig(), probes, zerolog.Nop(), m, append([]Option{WithClock(r.clock.Now)}, opts...)...)
	sigs, cancel := r.h.Subscribe(16)
	t.Cleanup(cancel)
	r.signals = sigs
	return r
}

// round advances the clock to the next probe round and probes once.
func (r *healthRig) round(t *testing.T) {
	t.Helper()
	r.clock.Advance(time.Second)
	r.h.CheckNow(t.Context())
}

// expectSignal fails unless the next signal is want.
func (r *healthRig) expectSignal(t *testing.T, want level.Signal) {
	t.Helper()
	select {
	case got := <-r.signals:
		if got != want {
			t.Fatalf("signal %+v, want %+v", got, want)
		}
	default:
		t.Fatalf("no signal, want %+v", want)
	}
}

// expectNoSignal fails if a signal is pending.
func (r *healthRig) expectNoSignal(t *testing.T) {
	t.Helper()
	select {
	case got := <-r.signals:
		t.Fatalf("unexpected signal %+v", got)
	default:
	}
}

func TestHealthAllDownEventsTakeL1Down(t *testing.T) {
	r := newHealthRig(t, nil)
	if got := r.h.Supported(); got != level.L1 {
		t.Fatalf("Supported() = %v at start, want L1", got)
	}
	for i := range 2 {
		r.h.ReportAllDown()
		r.clock.Advance(2 * time.Second)
		if r.h.Down(level.L1) {
			t.Fatalf("L1 down after %d all-down events, want 3", i+1)
		}
	}
	r.expectNoSignal(t)
	r.h.ReportAllDown()
	if !r.h.Down(level.L1) {
		t.Fatal("L1 not down after 3 all-down events within the window")
	}
	r.expectSignal(t, level.Signal{Event: level.VendorAllDown, Level: level.L1})
	if got := r.h.Supported(); got != level.L2 {
		t.Fatalf("Supported() = %v, want L2", got)
	}
}

func TestHealthAllDownEventsOutsideWindow(t *testing.T) {
	r := newHealthRig(t, nil)
	for range 3 {
		r.h.ReportAllDown()
		r.clock.Advance(6 * time.Second) // the window is 10 s: never 3 inside it
	}
	if r.h.Down(level.L1) {
		t.Fatal("L1 down from events spread beyond the window")
	}
	r.expectNoSignal(t)
}

func TestHealthLocalTimeoutsTakeL2Down(t *testing.T) {
	r := newHealthRig(t, nil)
	// Classes that do not count against health change nothing.
	for _, c := range []upstream.Class{upstream.ClassNone, upstream.ClassCanceled, upstream.ClassContextLength, upstream.ClassBadRequest, upstream.ClassRefused} {
		r.h.ReportResult(level.L2, "local", c)
	}
	for i := range 4 {
		r.h.ReportResult(level.L2, "local", upstream.ClassTimeout)
		if r.h.Down(level.L2) {
			t.Fatalf("L2 down after %d timeouts, want 5", i+1)
		}
	}
	r.expectNoSignal(t)
	r.h.ReportResult(level.L2, "local", upstream.ClassTimeout)
	if !r.h.Down(level.L2) {
		t.Fatal("L2 not down after 5 timeouts")
	}
	r.expectSignal(t, level.Signal{Event: level.LocalFailing, Level: level.L2})
}

func TestHealthRecoveryNeedsConsecutivePasses(t *testing.T) {
	r := newHealthRig(t, nil)
	for range 3 {
		r.h.ReportAllDown()
	}
	r.expectSignal(t, level.Signal{Event: level.VendorAllDown, Level: level.L1})

	// pass, fail, pass, pass: the fail restarts the count, so not yet.
	r.round(t)
	r.a.set(errProbe)
	r.b.set(errProbe)
	r.round(t)
	r.a.set(nil)
	r.b.set(nil)
	r.round(t)
	r.round(t)
	if !r.h.Down(level.L1) {
		t.Fatal("L1 up after pass, fail, pass, pass; the fail must restart the count")
	}
	r.expectNoSignal(t)
	r.round(t) // the third pass after the fail
	if r.h.Down(level.L1) {
		t.Fatal("L1 still down after 3 consecutive passing rounds")
	}
	r.expectSignal(t, level.Signal{Event: level.Recovered, Level: level.L1})

	// The old events were cleared: one new all-down event is not a fourth.
	r.h.ReportAllDown()
	if r.h.Down(level.L1) {
		t.Fatal("L1 down again from events counted before the recovery")
	}
}

func TestHealthOneVendorPassingIsAPassingRound(t *testing.T) {
	r := newHealthRig(t, nil)
	for range 3 {
		r.h.ReportAllDown()
	}
	r.a.set(errProbe) // b alone keeps level.L1 usable
	for range 3 {
		r.round(t)
	}
	if r.h.Down(level.L1) {
		t.Fatal("L1 still down although vendor b passed 3 rounds")
	}
}

func TestHealthProbeRoundsTakeLevelsDown(t *testing.T) {
	r := newHealthRig(t, nil)
	r.a.set(errProbe)
	r.b.set(errProbe)
	r.local.set(errProbe)
	r.round(t)
	r.round(t)
	if r.h.Down(level.L1) || r.h.Down(level.L2) {
		t.Fatal("a level went down after 2 failed probe rounds, want 3")
	}
	r.round(t)
	if !r.h.Down(level.L1) || !r.h.Down(level.L2) {
		t.Fatalf("after 3 failed rounds: L1 down %v, L2 down %v; want both", r.h.Down(level.L1), r.h.Down(level.L2))
	}
	if got := r.h.Supported(); got != level.L3 {
		t.Fatalf("Supported() = %v, want L3", got)
	}
	r.tmpl.set(errProbe)
	r.round(t)
	if got := r.h.Supported(); got != level.L4 {
		t.Fatalf("Supported() = %v after a template probe failure, want L4", got)
	}
}

func TestHealthTemplateFailureTakesL3Down(t *testing.T) {
	r := newHealthRig(t, nil)
	r.h.ReportResult(level.L3, "templates", upstream.ClassServer)
	if !r.h.Down(level.L3) {
		t.Fatal("L3 not down after a template failure")
	}
	r.expectSignal(t, level.Signal{Event: level.TemplatesFailing, Level: level.L3})
	for range 3 {
		r.round(t)
	}
	if r.h.Down(level.L3) {
		t.Fatal("L3 still down after 3 passing template probes")
	}
	r.expectSignal(t, level.Signal{Event: level.Recovered, Level: level.L3})
}

func TestHealthBackendStateAndMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := newHealthRig(t, NewMetrics(reg))
	r.a.set(errProbe)
	for range 3 {
		r.round(t)
	}
	if r.h.BackendUp("a") || !r.h.BackendUp("b") {
		t.Fatalf("BackendUp a=%v b=%v, want false, true", r.h.BackendUp("a"), r.h.BackendUp("b"))
	}
	var a BackendState
	for _, st := range r.h.Backends() {
		if st.Name == "a" {
			a = st
		}
	}
	if a.State != StateDown || !a.UpdatedAt.Equal(r.clock.Now()) {
		t.Fatalf("backend a = %+v, want down, updated now", a)
	}
	if got := gaugeValue(t, reg, "poise_backend_up", map[string]string{"backend": "a"}); got != 0 {
		t.Fatalf("poise_backend_up{backend=a} = %v, want 0", got)
	}
	if got := gaugeValue(t, reg, "poise_backend_up", map[string]string{"backend": "b"}); got != 1 {
		t.Fatalf("poise_backend_up{backend=b} = %v, want 1", got)
	}
	// Live failures count too, and 3 passing probes bring it back.
	r.a.set(nil)
	for range 3 {
		r.round(t)
	}
	if !r.h.BackendUp("a") {
		t.Fatal("backend a still down after 3 passing probes")
	}
	for range 3 {
		r.h.ReportResult(level.L1, "b", upstream.ClassServer)
	}
	if r.h.BackendUp("b") {
		t.Fatal("backend b up after 3 live server errors")
	}
}

func TestHealthSubscribeNeverBlocks(t *testing.T) {
	h := New(testHealthConfig(), []Probe{{Name: "a", Level: level.L1, Check: func(context.Context) error { return nil }}}, zerolog.Nop(), nil)
	slow, cancelSlow := h.Subscribe(1)
	fast, cancelFast := h.Subscribe(4)
	defer cancelFast()
	for range 3 {
		h.ReportAllDown()
	}
	h.ReportResult(level.L3, "templates", upstream.ClassServer) // a second signal: level.L3 down
	if got := len(fast); got != 2 {
		t.Fatalf("fast subscriber has %d signals, want 2", got)
	}
	if got := len(slow); got != 1 {
		t.Fatalf("slow subscriber has %d signals, want 1 (the rest dropped)", got)
	}
	cancelSlow()
	cancelSlow() // idempotent
	<-slow       // the buffered signal
	if _, open := <-slow; open {
		t.Fatal("channel still open after cancel")
	}
}

func TestMemoryStoreEventsAreIdempotent(t *testing.T) {
	s := NewMemoryStore()
	ctx := t.Context()
	at := time.Unix(100, 0)
	n1, _ := s.AddEvent(ctx, "k", "probe:7", at, time.Minute)
	n2, _ := s.AddEvent(ctx, "k", "probe:7", at, time.Minute) // another node, same round
	n3, _ := s.AddEvent(ctx, "k", "node1-1", at.Add(2*time.Minute), time.Minute)
	if n1 != 1 || n2 != 1 || n3 != 1 {
		t.Fatalf("counts %d %d %d, want 1 1 1 (dedup, then the old one expired)", n1, n2, n3)
	}
}

func TestHealthSharedStoreAcrossNodes(t *testing.T) {
	store := NewMemoryStore()
	clock := newFakeClock()
	probe := &switchProbe{}
	mk := func(node string) *Center {
		return New(testHealthConfig(), []Probe{{Name: "a", Level: level.L1, Check: probe.check}}, zerolog.Nop(), nil,
			WithStore(store), WithClock(clock.Now), WithNode(node))
	}
	n1, n2 := mk("n1"), mk("n2")
	// Events from two nodes add up.
	n1.ReportAllDown()
	n2.ReportAllDown()
	n1.ReportAllDown()
	if !n1.Down(level.L1) {
		t.Fatal("node 1 did not take L1 down after 3 events from two nodes")
	}
	// Both nodes probe the same rounds: 3 passing rounds, not 6 passes.
	// Node 2 learns that L1 is down from the shared state.
	for i := range 3 {
		clock.Advance(time.Second)
		n1.CheckNow(t.Context())
		n2.CheckNow(t.Context())
		if i < 2 && (!n1.Down(level.L1) || !n2.Down(level.L1)) {
			t.Fatalf("after %d rounds probed by two nodes: node 1 down %v, node 2 down %v; want both (no double count)",
				i+1, n1.Down(level.L1), n2.Down(level.L1))
		}
	}
	if n1.Down(level.L1) || n2.Down(level.L1) {
		t.Fatal("L1 still down after 3 passing rounds")
	}
}

func TestHealthRunProbesOnSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &switchProbe{}
		h := New(testHealthConfig(), []Probe{
			{Name: "a", Level: level.L1, Check: p.check},
		}, zerolog.Nop(), nil)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- h.Run(ctx) }()
		// Probes at 0 s, then every 1 s plus up to 0.1 s of jitter: by
		// 3.5 s exactly 4 (the 4th is due by 3.3 s, the 5th not before 4 s).
		time.Sleep(3500 * time.Millisecond)
		synctest.Wait()
		if got := p.calls.Load(); got != 4 {
			t.Errorf("%d probes by 3.5 s, want 4", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run() = %v, want nil", err)
		}
	})
}

// TestHealthLiveSuccessClearsFailStreak: failures spread between
// successful requests never add up to a down backend, but three in a row
// still do, and a down backend climbs back only through its probes.
func TestHealthLiveSuccessClearsFailStreak(t *testing.T) {
	r := newHealthRig(t, nil)
	for range 3 {
		r.h.ReportResult(level.L1, "b", upstream.ClassServer)
		r.h.ReportResult(level.L1, "b", upstream.ClassServer)
		r.h.ReportSuccess("b")
		r.clock.Advance(time.Minute)
	}
	if !r.h.BackendUp("b") {
		t.Fatal("backend b down after failures that were each followed by a success")
	}
	for range 3 {
		r.h.ReportResult(level.L1, "b", upstream.ClassServer)
	}
	if r.h.BackendUp("b") {
		t.Fatal("backend b up after 3 live failures in a row")
	}
	r.h.ReportSuccess("b")
	if r.h.BackendUp("b") {
		t.Fatal("a live success brought a down backend back; only probes may")
	}
}
