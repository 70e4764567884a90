package tiers

import (
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// firstContentBuckets resolve the region around the 1.5 s budget finely.
var firstContentBuckets = []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 10}

// Metrics are the answer engine's Prometheus metrics. A nil *Metrics is
// valid and records nothing.
type Metrics struct {
	requests     *upstream.Metrics        // poise_backend_requests_total, shared with the gateway
	firstContent *prometheus.HistogramVec // level
	shed         *prometheus.CounterVec   // backend
	allDown      prometheus.Counter
}

// NewMetrics registers on reg: poise_answer_first_content_seconds{level},
// poise_backend_shed_total{backend} (questions that skipped a full
// bulkhead) and poise_l1_all_down_total; backend requests are counted in
// requests (may be nil). A nil reg leaves them unregistered. Registering
// twice on one registry panics, as in client_golang.
func NewMetrics(reg prometheus.Registerer, requests *upstream.Metrics) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		requests: requests,
		firstContent: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "poise_answer_first_content_seconds",
			Help:    "Time from a question to its first useful content, by the level that answered.",
			Buckets: firstContentBuckets,
		}, []string{"level"}),
		shed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_backend_shed_total",
			Help: "Questions that skipped a backend because its bulkhead was full.",
		}, []string{"backend"}),
		allDown: f.NewCounter(prometheus.CounterOpts{
			Name: "poise_l1_all_down_total",
			Help: "Questions on which every L1 vendor failed (all-down events from live traffic).",
		}),
	}
}

// request counts one backend request ending with class.
func (m *Metrics) request(backend string, class upstream.Class) {
	if m == nil {
		return
	}
	m.requests.Request(backend, class)
}

// observeFirstContent records the seconds to first content at level.
func (m *Metrics) observeFirstContent(level Level, seconds float64) {
	if m == nil {
		return
	}
	m.firstContent.WithLabelValues(level.String()).Observe(seconds)
}

// shedOne counts a question that skipped backend's full bulkhead.
func (m *Metrics) shedOne(backend string) {
	if m == nil {
		return
	}
	m.shed.WithLabelValues(backend).Inc()
}

// allDownOne counts an all-down event from live traffic.
func (m *Metrics) allDownOne() {
	if m == nil {
		return
	}
	m.allDown.Inc()
}
