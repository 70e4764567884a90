package gateway

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/level"
)

// testTimeout bounds every wait in these tests; nothing comes close.
const testTimeout = 10 * time.Second

// The models of the simulated hosts.
const (
	modelA     = "model-a"
	modelALong = "model-a-128k"
	modelB     = "model-b"
)

// replyText is what the simulated models answer unless told otherwise, so
// that a continuation on another model can be checked word for word.
const replyText = "Situation: our checkout service kept timing out during a sale. " +
	"Task: I owned the fix. Action: I profiled the database calls, added a cache " +
	"and rolled it out behind a flag. Result: p99 latency fell by sixty percent."

// simHost is one simulated vendor behind a real HTTP server.
type simHost struct {
	sim *vendorsim.Server
	url string // base URL, ending in /v1
}

func newSimHost(t *testing.T) simHost {
	t.Helper()
	sim := vendorsim.New(vendorsim.Options{TokenDelay: 2 * time.Millisecond})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() {
		sim.Close() // release held requests so that srv.Close does not wait for them
		srv.Close()
	})
	return simHost{sim: sim, url: srv.URL + "/v1"}
}

// waitCounters waits until cond holds for model's counters on h.
func (h simHost) waitCounters(t *testing.T, model string, cond func(vendorsim.Counters) bool) vendorsim.Counters {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	c, err := h.sim.WaitFor(ctx, model, cond)
	if err != nil {
		t.Fatalf("counters of %q never matched: last %+v", model, c)
	}
	return c
}

// endpointProbes probes every endpoint of cfg, as cmd/poise does.
func endpointProbes(t testing.TB, cfg Config) []health.Probe {
	t.Helper()
	eps, err := cfg.Resolved()
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	var out []health.Probe
	for _, e := range eps {
		out = append(out, health.ListProbe(e.Name, level.None, e.BaseURL, e.APIKey, http.DefaultClient))
	}
	return out
}

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
