package gateway

import (
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/upstream"
)

// Circuits is what the gateway needs of the health center: one circuit
// per key, asked before a target is tried and told how it went. A key is
// an endpoint's name, and for the entries of the "*" chain an endpoint and
// model pair (target.circuit), so that one failing model does not open
// the circuit of the others. Every Allow that returns true is followed by
// at least one Report (ClassCanceled when the target was not tried after
// all), so that a half-open circuit gets its trial back. Implementations
// are safe for concurrent use, and Report does not wait on I/O for long:
// it runs on the request path.
type Circuits interface {
	// Allow reports whether key's circuit lets a request through now:
	// closed, or half-open with a trial free (which the caller then takes).
	Allow(key string) bool
	// Report records how a request to key ended: ClassNone for success.
	Report(key string, class upstream.Class)
}

// HealthCircuits adapts the health center to Circuits. Every key gets a
// circuit there (the center makes one for a key it does not probe, such
// as an endpoint and model pair of the "*" chain): it opens after live
// failures, and once its cooldown is over Allow admits one live request
// at a time as its half-open trial; recover_after passing trials close it.
func HealthCircuits(h *health.Center) Circuits { return healthCircuits{h: h} }

type healthCircuits struct{ h *health.Center }

func (c healthCircuits) Allow(key string) bool { return c.h.Allow(key) }

func (c healthCircuits) Report(key string, class upstream.Class) {
	switch class {
	case upstream.ClassNone:
		c.h.ReportSuccess(key)
	case upstream.ClassCanceled:
		c.h.Release(key)
	default:
		c.h.Report(key, false, class)
	}
}

// noCircuits is the Circuits of a gateway without a health center: every
// circuit is closed.
type noCircuits struct{}

func (noCircuits) Allow(string) bool             { return true }
func (noCircuits) Report(string, upstream.Class) {}
