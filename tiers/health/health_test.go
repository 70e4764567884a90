package health

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// testConfig: 1 s probes, 1 s base cooldown (capped at the interval),
// three passes to close.
func testConfig() Config {
	return Config{IntervalMS: 1000, RecoverAfter: 3, CooldownMS: 1000, L1DownAfter: 3, L1DownWindowMS: 10000,
		L2FailAfter: 5, L2FailWindowMS: 10000}
}

// simRig is a Center over two L1 vendors and the local model, all served
// by one vendorsim on the in-memory network. Build it inside a bubble.
type simRig struct {
	h      *Center
	sim    *vendorsim.Server
	sigs   <-chan level.Signal
	reg    *prometheus.Registry
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

const simURL = "http://sim:80/v1"

func newSimRig(t *testing.T, cfg Config, probe func(name string, l level.Level, model string, hc *http.Client) Probe, opts ...Option) *simRig {
	t.Helper()
	n := vendorsim.NewMemNet()
	sim := vendorsim.New(vendorsim.Options{TokenDelay: 5 * time.Millisecond})
	n.Serve("sim:80", sim)
	r := &simRig{sim: sim, reg: prometheus.NewRegistry()}
	probes := []Probe{probe("a", level.L1, "model-a", n.Client()), probe("b", level.L1, "model-b", n.Client()),
		probe("local", level.L2, "model-local", n.Client())}
	r.h = New(cfg, probes, zerolog.Nop(), NewMetrics(r.reg), opts...)
	sigs, unsub := r.h.Subscribe(64)
	r.sigs = sigs
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Go(func() { r.h.Run(ctx) })
	t.Cleanup(func() {
		unsub()
		cancel()
		r.wg.Wait()
		sim.Close()
		n.Close()
	})
	return r
}

func completionProbe(name string, l level.Level, model string, hc *http.Client) Probe {
	return CompletionProbe(name, l, upstream.Endpoint{Name: name, BaseURL: simURL, Model: model}, 500*time.Millisecond, hc)
}

func listProbe(name string, l level.Level, _ string, hc *http.Client) Probe {
	return ListProbe(name, l, simURL, "", hc)
}

// signals drains the signals received so far.
func (r *simRig) signals() []level.Signal {
	var out []level.Signal
	for {
		select {
		case s := <-r.sigs:
			out = append(out, s)
		default:
			return out
		}
	}
}

// failLive reports n live 503s for each backend, as answers would.
func (r *simRig) failLive(n int, backends ...string) {
	for range n {
		for _, b := range backends {
			r.h.Report(b, false, upstream.ClassServer)
		}
	}
}

// TestPartialOutageStaysDown: with completions failing (503) and the model
// list up, the completion probes keep L1 down for as long as it lasts —
// no L1 recovery, no flicker — and L1 comes back within recover_after
// trials of the heal. With the list probe the same outage flickers, which
// is why the completion probe is the default.
func TestPartialOutageStaysDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRig(t, testConfig(), completionProbe)
		synctest.Wait()
		r.sim.SetFault("model-a", vendorsim.Fault{Status: 503})
		r.sim.SetFault("model-b", vendorsim.Fault{Status: 503})
		r.failLive(3, "a", "b")
		time.Sleep(10 * time.Millisecond)
		if !r.h.Down(level.L1) || r.h.Supported() != level.L2 {
			t.Fatalf("after 3 live failures per vendor: L1 down %v, supported %v", r.h.Down(level.L1), r.h.Supported())
		}
		r.signals()
		time.Sleep(60 * time.Second)
		for _, s := range r.signals() {
			t.Fatalf("signal %+v during a partial outage; want none", s)
		}
		if got := gaugeValue(t, r.reg, "poise_circuit_state", map[string]string{"backend": "a", "state": "open"}); got != 1 {
			t.Fatalf("poise_circuit_state{a,open} = %v during the outage", got)
		}
		r.sim.ClearFaults()
		healed := time.Now()
		for r.h.Down(level.L1) {
			time.Sleep(100 * time.Millisecond)
		}
		// cooldown (capped at the interval) + recover_after trials 1 s apart.
		if took := time.Since(healed); took > 4*time.Second {
			t.Fatalf("L1 up %v after the heal, want within 4s", took)
		}
		if got := gaugeValue(t, r.reg, "poise_backend_up", map[string]string{"backend": "a"}); got != 1 {
			t.Fatalf("poise_backend_up{a} = %v after the heal", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := newSimRig(t, testConfig(), listProbe)
		synctest.Wait()
		r.sim.SetFault("model-a", vendorsim.Fault{Status: 503})
		r.sim.SetFault("model-b", vendorsim.Fault{Status: 503})
		r.failLive(3, "a", "b")
		time.Sleep(10 * time.Second)
		if r.h.Down(level.L1) {
			t.Fatal("with list probes L1 stayed down; the contrast this test documents is gone")
		}
	})
}

// TestSlowButAlive: a vendor whose first token comes within the probe's
// deadline passes; slower than that, its probe fails and it opens.
func TestSlowButAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRig(t, testConfig(), completionProbe)
		r.sim.SetFault("model-a", vendorsim.Fault{FirstTokenDelayMS: 400})
		time.Sleep(10 * time.Second)
		if r.h.Circuit("a") != Closed {
			t.Fatalf("slow-but-alive vendor: circuit %s, want closed", r.h.Circuit("a"))
		}
		r.sim.SetFault("model-a", vendorsim.Fault{FirstTokenDelayMS: 900})
		time.Sleep(5 * time.Second)
		if r.h.Circuit("a") == Closed {
			t.Fatal("a vendor slower than its first-token deadline kept a closed circuit")
		}
		if r.h.Down(level.L1) {
			t.Fatal("L1 down while vendor b is healthy")
		}
	})
}

// TestFlappingBackend: a backend that fails every trial for a while
// keeps its circuit open with a cooldown that grows to the cap, so it is
// tried ever less often; and the level climbs back only once.
func TestFlappingBackend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.IntervalMS, cfg.CooldownMS = 8000, 1000
		var fails atomic.Bool
		var trials atomic.Int64
		check := func(context.Context) error {
			trials.Add(1)
			if fails.Load() {
				return errors.New("503")
			}
			return nil
		}
		h := New(cfg, []Probe{{Name: "a", Level: level.L1, Check: check}}, zerolog.Nop(), nil)
		sigs, unsub := h.Subscribe(16)
		defer unsub()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { h.Run(ctx) })
		defer func() { cancel(); wg.Wait() }()
		fails.Store(true)
		for range 3 {
			h.Report("a", false, upstream.ClassServer)
		}
		time.Sleep(time.Millisecond)
		trials.Store(0)
		time.Sleep(40 * time.Second) // cooldowns 1+2+4+8+8+8+8 = 39 s: 7 trials at most
		if n := trials.Load(); n > 7 || h.Circuit("a") == Closed {
			t.Fatalf("%d trials in 40 s while failing, circuit %s; want at most 7, open", n, h.Circuit("a"))
		}
		fails.Store(false)
		time.Sleep(12 * time.Second)
		var events []string
		for len(sigs) > 0 {
			events = append(events, (<-sigs).Event)
		}
		if len(events) != 2 || events[0] != level.VendorAllDown || events[1] != level.Recovered {
			t.Fatalf("signals %v; want one down, one recovered", events)
		}
	})
}

// TestLiveTrialOneAtATime: Allow refuses while open, admits one live
// trial at a time once the cooldown is over (the probe may take a turn),
// and recover_after passing trials close the circuit.
func TestLiveTrialOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(testConfig(), []Probe{{Name: "ep", Level: level.None, Check: func(context.Context) error { return nil }}},
			zerolog.Nop(), nil)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { h.Run(ctx) })
		defer func() { cancel(); wg.Wait() }()
		for range 3 {
			h.Report("ep", false, upstream.ClassServer)
		}
		time.Sleep(time.Millisecond)
		if h.Allow("ep") {
			t.Fatal("allowed while open")
		}
		time.Sleep(time.Second)
		start, live := time.Now(), 0
		for h.Circuit("ep") != Closed {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("circuit %s 10 s after the cooldown", h.Circuit("ep"))
			}
			if h.Allow("ep") {
				if h.Circuit("ep") == HalfOpen && h.Allow("ep") {
					t.Fatal("a second trial was admitted while one is in flight")
				}
				live++
				h.Report("ep", true, upstream.ClassNone)
			}
			time.Sleep(time.Millisecond)
		}
		if live == 0 {
			t.Fatal("no live trial was admitted")
		}
	})
}

// TestReportNeverBlocks: with the health goroutine stuck behind a full
// queue, Report returns at once and counts the drop.
func TestReportNeverBlocks(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := New(testConfig(), []Probe{{Name: "a", Level: level.L1, Check: func(context.Context) error { return nil }}},
		zerolog.Nop(), NewMetrics(reg))
	h.running.Store(true) // as if Run were on, but nobody drains: the worst case
	for range reportQueue + 10 {
		h.Report("a", false, upstream.ClassServer)
	}
	if got := metricValue(t, reg, "poise_health_reports_dropped_total", map[string]string{}); got != 10 {
		t.Fatalf("dropped = %v, want 10", got)
	}
}

// flakyStore is a MemoryStore whose calls fail, or hang until their
// context ends, while told to.
type flakyStore struct {
	*MemoryStore
	fail, hang atomic.Bool
	calls      atomic.Int64
}

var errStore = errors.New("store down")

func (s *flakyStore) gate(ctx context.Context) error {
	s.calls.Add(1)
	if s.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	if s.fail.Load() {
		return errStore
	}
	return nil
}

func (s *flakyStore) Merge(ctx context.Context, rec BackendState) (BackendState, error) {
	if err := s.gate(ctx); err != nil {
		return BackendState{}, err
	}
	return s.MemoryStore.Merge(ctx, rec)
}

func (s *flakyStore) States(ctx context.Context) ([]BackendState, error) {
	if err := s.gate(ctx); err != nil {
		return nil, err
	}
	return s.MemoryStore.States(ctx)
}

// TestStoreAwayMidTrial: the shared store goes away while a circuit is
// on trial; the node judges alone (the trial closes the circuit), and
// shares its decision when the store returns.
func TestStoreAwayMidTrial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &flakyStore{MemoryStore: NewMemoryStore()}
		r := newSimRig(t, testConfig(), completionProbe, WithStore(store), WithNode("n1"))
		r.sim.SetFault("model-a", vendorsim.Fault{Status: 503})
		r.failLive(3, "a")
		time.Sleep(100 * time.Millisecond)
		if st, _ := store.MemoryStore.States(context.Background()); len(st) == 0 || findState(st, "a").Circuit != Open {
			t.Fatalf("shared before the outage: %+v; want a open", st)
		}
		r.sim.ClearFaults()
		time.Sleep(1100 * time.Millisecond) // the first trial has run
		store.hang.Store(true)
		time.Sleep(5 * time.Second)
		if r.h.Circuit("a") != Closed {
			t.Fatalf("circuit %s with the store hung, want closed by this node's trials", r.h.Circuit("a"))
		}
		store.hang.Store(false)
		time.Sleep(5 * time.Second)
		st, _ := store.MemoryStore.States(context.Background())
		if got := findState(st, "a"); got.Circuit != Closed || got.Node != "n1" {
			t.Fatalf("shared after the store returned: %+v; want closed by n1", got)
		}
	})
}

func findState(st []BackendState, name string) BackendState {
	for _, s := range st {
		if s.Name == name {
			return s
		}
	}
	return BackendState{}
}

// TestTwoNodesDisagree: node 1 cannot reach a backend that node 2 reaches
// fine. Node 1 opens the circuit, node 2 adopts it within one interval,
// node 2's trials pass and close it, and node 1 adopts that: both agree
// within one interval of each decision, and neither flaps faster than
// its live failures.
func TestTwoNodesDisagree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := NewMemoryStore()
		cfg := testConfig()
		ok := func(context.Context) error { return nil }
		bad := func(context.Context) error { return errors.New("no route") }
		n1 := New(cfg, []Probe{{Name: "a", Level: level.L1, Check: bad}}, zerolog.Nop(), nil, WithStore(store), WithNode("n1"))
		n2 := New(cfg, []Probe{{Name: "a", Level: level.L1, Check: ok}}, zerolog.Nop(), nil, WithStore(store), WithNode("n2"))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { n1.Run(ctx) })
		wg.Go(func() { n2.Run(ctx) })
		defer func() { cancel(); wg.Wait() }()
		var opened time.Time
		wait := func(what string, cond func() bool) {
			t.Helper()
			for start := time.Now(); !cond(); time.Sleep(50 * time.Millisecond) {
				if time.Since(start) > time.Minute {
					t.Fatalf("not within a minute: %s (n1 %s, n2 %s)", what, n1.Circuit("a"), n2.Circuit("a"))
				}
			}
		}
		wait("node 1 opens", func() bool { return n1.Circuit("a") != Closed })
		opened = time.Now()
		wait("node 2 adopts", func() bool { return n2.Circuit("a") != Closed })
		if d := time.Since(opened); d > time.Duration(cfg.IntervalMS)*time.Millisecond {
			t.Fatalf("node 2 adopted node 1's open after %v, want within one interval", d)
		}
		wait("node 2 closes on its trials", func() bool { return n2.Circuit("a") == Closed })
		closed := time.Now()
		for n1.Circuit("a") != Closed && time.Since(closed) < 10*time.Second {
			time.Sleep(50 * time.Millisecond)
		}
		if d := time.Since(closed); n1.Circuit("a") != Closed && d > time.Duration(cfg.IntervalMS)*time.Millisecond {
			t.Fatalf("node 1 still %s %v after node 2 closed the circuit", n1.Circuit("a"), d)
		}
	})
}
