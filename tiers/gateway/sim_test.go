package gateway

import (
	"bytes"
	"net/http"
	"sync"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/cmd/vendorsim/sim/simtest"
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

// newSimHost serves a simulated vendor until the test ends.
func newSimHost(t *testing.T) simtest.Host {
	t.Helper()
	return simtest.Start(t, vendorsim.Options{TokenDelay: 2 * time.Millisecond})
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
