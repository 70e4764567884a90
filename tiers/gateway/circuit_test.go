package gateway

import (
	"net/http"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/cmd/vendorsim/sim/simtest"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
)

// TestGatewayFlappingEndpointCircuit takes endpoint a down for a minute
// and back up: its circuit opens after circuitOpensAfter live failures,
// the fallback serves while it is open (a gets no traffic), the probes
// keep failing during the outage; once a is back, a passing probe round
// makes it half-open, the next request is its trial, and with that
// health.recover_after (2) passes close it.
func TestGatewayFlappingEndpointCircuit(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	round := func(d time.Duration) {
		t.Helper()
		r.clock.Advance(d) // at least the rig's health.interval_ms: a new probe round
		r.health.CheckNow(t.Context())
	}
	aRequests := func() int64 { return settled(t, r.a, modelA).Requests }
	up := func() float64 { return r.metric(t, "poise_backend_up", map[string]string{"backend": "a"}) }

	// Probes pass before the outage: a is up and serves.
	round(time.Second)
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyText, "a")

	// The outage: a answers 503 and fails its probes.
	r.a.Sim.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: http.StatusServiceUnavailable, HealthDown: true})
	for range circuitOpensAfter {
		wantAnswer(t, r.stream(t, chatParams(gwModel)), replyB, "b")
	}
	if r.health.BackendUp("a") || up() != 0 {
		t.Fatalf("after %d failures a's circuit is not open (up metric %v)", circuitOpensAfter, up())
	}
	before := aRequests()
	for range 10 { // a minute of probe rounds and traffic
		round(6 * time.Second)
		wantAnswer(t, r.stream(t, chatParams(gwModel)), replyB, "b")
	}
	if got := aRequests(); got != before {
		t.Fatalf("a got %d requests while its circuit was open", got-before)
	}
	if r.health.BackendUp("a") {
		t.Fatal("a failing its probes closed its circuit")
	}

	// a is back. One passing probe round makes the circuit half-open, not
	// closed (recover_after is 2) ...
	r.a.Sim.ClearFaults()
	round(time.Second)
	if r.health.BackendUp("a") {
		t.Fatal("the circuit closed after one passing probe; recover_after is 2")
	}
	// ... and the next request is its half-open trial: a answers it, and
	// that second pass closes the circuit, so traffic returns to a.
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyText, "a")
	if !r.health.BackendUp("a") || up() != 1 {
		t.Fatal("a passing probe round and a passing trial did not close the circuit")
	}
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyText, "a")
}

// TestGatewayOpenCircuitIsTriedLast shows that an open circuit does not
// make an endpoint unusable: when everything else fails, it is tried.
func TestGatewayOpenCircuitIsTriedLast(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	for range circuitOpensAfter {
		r.health.ReportResult(level.None, "a", upstream.ClassServer)
	}
	if r.health.BackendUp("a") {
		t.Fatal("a is not down")
	}
	r.b.Sim.SetFault(modelB, vendorsim.Fault{Status: http.StatusServiceUnavailable})
	wantAnswer(t, r.stream(t, chatParams(gwModel)), replyText, "a")
	// b, the last healthy endpoint, was retried once before a was tried.
	if b := settled(t, r.b, modelB); b.Requests != 2 {
		t.Fatalf("b saw %+v: the healthy-looking endpoint comes first", b)
	}
}

func TestGatewayEndpointsAreProbed(t *testing.T) {
	r := newGatewayRig(t, nil)
	r.health.CheckNow(t.Context())
	for _, h := range []simtest.Host{r.a, r.b, r.c} {
		if c := h.Sim.Counters(""); c.Probes != 1 {
			t.Fatalf("host %s probed %d times, want 1", h.URL, c.Probes)
		}
	}
	// Gateway endpoints are backends of no level: they never make a level
	// configured, so sessions are not affected by them.
	if r.health.Supported() != level.L4 {
		t.Fatalf("Supported() = %v with only gateway endpoints", r.health.Supported())
	}
}

// circuitOpensAfter is the health center's rule: three consecutive
// failures mark a backend down.
const circuitOpensAfter = 3
