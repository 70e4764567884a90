// Package simtest serves a vendorsim Server to a test over real HTTP, as
// one simulated vendor host, and waits on its counters.
package simtest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// waitLimit bounds WaitCounters; nothing a test waits for comes close.
const waitLimit = 10 * time.Second

// Host is one simulated vendor behind a real HTTP server.
type Host struct {
	Sim *vendorsim.Server
	URL string // base URL, ending in /v1
}

// Start serves a Server made with opts until the test ends; then it
// releases held requests (so that the server's Close does not wait for
// them) and closes the server.
func Start(t testing.TB, opts vendorsim.Options) Host {
	t.Helper()
	sim := vendorsim.New(opts)
	srv := httptest.NewServer(sim)
	t.Cleanup(func() {
		sim.Close()
		srv.Close()
	})
	return Host{Sim: sim, URL: srv.URL + "/v1"}
}

// WaitCounters waits, at most 10 s, until cond holds for model's counters
// on h, and fails the test when they never do.
func (h Host) WaitCounters(t testing.TB, model string, cond func(vendorsim.Counters) bool) vendorsim.Counters {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, err := h.Sim.WaitFor(ctx, model, cond)
	if err != nil {
		t.Fatalf("counters of %q never matched: last %+v", model, c)
	}
	return c
}
