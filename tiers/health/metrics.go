package health

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the health center's Prometheus metrics. A nil *Metrics is
// valid and records nothing.
type Metrics struct {
	up      *prometheus.GaugeVec // backend
	circuit *prometheus.GaugeVec // backend, state
	drops   prometheus.Counter
}

// NewMetrics registers poise_backend_up{backend},
// poise_circuit_state{backend,state} and
// poise_health_reports_dropped_total on reg; a nil reg leaves them
// unregistered. Registering twice on one registry panics, as in
// client_golang.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		up: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "poise_backend_up",
			Help: "1 when the backend's circuit is closed, else 0.",
		}, []string{"backend"}),
		circuit: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "poise_circuit_state",
			Help: "1 for the backend's current circuit state (closed, open, half_open), 0 for the others.",
		}, []string{"backend", "state"}),
		drops: f.NewCounter(prometheus.CounterOpts{
			Name: "poise_health_reports_dropped_total",
			Help: "Live request reports dropped because the health center's queue was full.",
		}),
	}
}

// setCircuit sets poise_circuit_state and poise_backend_up for backend.
func (m *Metrics) setCircuit(backend string, s Circuit) {
	if m == nil {
		return
	}
	for _, c := range circuits {
		v := 0.0
		if c == s {
			v = 1
		}
		m.circuit.WithLabelValues(backend, string(c)).Set(v)
	}
	up := 0.0
	if s == Closed {
		up = 1
	}
	m.up.WithLabelValues(backend).Set(up)
}

// dropped counts one dropped report.
func (m *Metrics) dropped() {
	if m != nil {
		m.drops.Inc()
	}
}
