package upstream

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// classOK is the class label of a successful backend request.
const classOK = "ok"

// Metrics count the requests to model backends, for the answer engine and
// the gateway alike. A nil *Metrics is valid and records nothing.
type Metrics struct {
	requests  *prometheus.CounterVec // backend, class
	badEvents *prometheus.CounterVec // backend
}

// NewMetrics registers poise_backend_requests_total{backend,class} (class
// "ok" for success) and poise_upstream_bad_events_total{backend} on reg; a
// nil reg leaves them unregistered. Registering twice on one registry
// panics, as in client_golang.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_backend_requests_total",
			Help: "Model and template backend requests by backend and error class (ok for success).",
		}, []string{"backend", "class"}),
		badEvents: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_upstream_bad_events_total",
			Help: "Undecodable stream events from model backends, by backend (skipped, or the cut of a stream).",
		}, []string{"backend"}),
	}
}

// BadEvent counts one undecodable stream event of backend.
func (m *Metrics) BadEvent(backend string) {
	if m == nil {
		return
	}
	m.badEvents.WithLabelValues(backend).Inc()
}

// Request counts one backend request ending with class (ClassNone: ok).
// Our own cancellations are not requests that ended; they are not counted.
func (m *Metrics) Request(backend string, class Class) {
	if m == nil || class == ClassCanceled {
		return
	}
	label := string(class)
	if class == ClassNone {
		label = classOK
	}
	m.requests.WithLabelValues(backend, label).Inc()
}
