package asr

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// testCircuits are Circuits as the health center keeps them, reduced to
// what the pool sees: a backend's circuit opens after three failures in a
// row reported for it, or when the test opens it (a failing probe), and
// closes when the test closes it (passing trials). The center itself
// lives in tiers, which captions never import; cmd/poise wires the two.
type testCircuits struct {
	mu    sync.Mutex
	open  map[string]bool
	fails map[string]int
}

func newTestCircuits() *testCircuits {
	return &testCircuits{open: map[string]bool{}, fails: map[string]int{}}
}

func (c *testCircuits) BackendUp(backend string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.open[backend]
}

func (c *testCircuits) Report(backend string, ok bool, class string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		c.fails[backend] = 0
		return
	}
	if c.fails[backend]++; c.fails[backend] >= 3 {
		c.open[backend] = true
	}
}

func (c *testCircuits) set(backend string, open bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open[backend], c.fails[backend] = open, 0
}

// TestPoolRoutesByTheWhisperCircuit: with shared circuits, a whisper
// server whose circuit is open (its probes failed) is passed over for
// finals before any caption pays a failed request there: the cloud takes
// them and the captions say degraded; a partial still tries it as the last
// resort. Once the circuit closes, finals go back to whisper. Live
// failures reach the circuits too: failing finals open one without a
// probe.
func TestPoolRoutesByTheWhisperCircuit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const whisperName = "whisper@whisper-0:80"
		circuits := newTestCircuits()
		r := newRig(t, rigOptions{cloud: true, cfg: Config{RetryMs: 1000}, circuits: func(*vendorsim.MemNet) Circuits { return circuits }})
		whisper := r.sims[0]
		requests := func() int64 { return whisper.Counters(vendorsim.WhisperModel).Requests }
		final := func(wantSource string) {
			t.Helper()
			text, source, err := r.pool.Recognize(t.Context(), second(1), "en", false)
			if err != nil || text == "" || source != wantSource {
				t.Fatalf("final: %q from %q, %v; want a transcript from %s", text, source, err, wantSource)
			}
		}

		circuits.set(whisperName, true) // its probes failed
		if !r.pool.Backends()[0].Up {
			t.Fatal("want whisper's circuit open by its probes while the pool has seen no failure")
		}
		before := requests()
		final(SourceCloud)
		if got := requests() - before; got != 0 {
			t.Fatalf("whisper got %d requests with its circuit open and the cloud up", got)
		}
		if st, _ := r.pool.State(); st != StateDegraded {
			t.Fatalf("captions %q with whisper's circuit open and the cloud answering, want degraded", st)
		}

		if text, source, err := r.pool.Recognize(t.Context(), second(1), "en", true); err != nil || source != SourceWhisper || text == "" {
			t.Fatalf("partial with the circuit open: %q from %q, %v; want whisper as the last resort", text, source, err)
		}
		circuits.set(whisperName, false) // its trials passed
		final(SourceWhisper)
		if st, _ := r.pool.State(); st != StateLive {
			t.Fatalf("captions %q with whisper back, want live", st)
		}

		whisper.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500})
		for range 3 { // live failures; the pool's own health retries after retry_ms
			final(SourceCloud)
			time.Sleep(time.Second)
		}
		if circuits.BackendUp(whisperName) {
			t.Fatal("three failed finals on whisper did not reach its circuit")
		}
		if _, _, err := r.pool.Recognize(t.Context(), second(1), "en", true); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("partial with whisper failing: %v, want ErrUnavailable", err)
		}
	})
}
