package health

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the health center's Prometheus metrics. A nil *Metrics is
// valid and records nothing.
type Metrics struct {
	up *prometheus.GaugeVec // backend
}

// NewMetrics registers poise_backend_up{backend} on reg; a nil reg leaves
// it unregistered. Registering twice on one registry panics, as in
// client_golang.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	return &Metrics{up: promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{
		Name: "poise_backend_up",
		Help: "1 when the health center considers the backend up, else 0.",
	}, []string{"backend"})}
}

// setUp sets poise_backend_up for backend.
func (m *Metrics) setUp(backend string, up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.up.WithLabelValues(backend).Set(v)
}
