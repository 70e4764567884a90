package recall

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// similarityBuckets resolve the region around the hit threshold finely.
var similarityBuckets = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1}

// Metrics are template recall's Prometheus metrics. A nil *Metrics is valid
// and records nothing.
type Metrics struct {
	hits, misses prometheus.Counter
	similarity   prometheus.Histogram
}

// NewMetrics registers poise_template_lookups_total{result="hit|miss"} and
// the poise_template_similarity histogram on reg; a nil reg leaves them
// unregistered. Registering twice on one registry panics, as in
// client_golang.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	lookups := f.NewCounterVec(prometheus.CounterOpts{
		Name: "poise_template_lookups_total",
		Help: "Template recall lookups by result (hit or miss).",
	}, []string{"result"})
	return &Metrics{
		hits:   lookups.WithLabelValues("hit"),
		misses: lookups.WithLabelValues("miss"),
		similarity: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "poise_template_similarity",
			Help:    "Cosine similarity of the best template for each lookup.",
			Buckets: similarityBuckets,
		}),
	}
}

// observe records one lookup.
func (m *Metrics) observe(hit bool, similarity float64) {
	if m == nil {
		return
	}
	if hit {
		m.hits.Inc()
	} else {
		m.misses.Inc()
	}
	m.similarity.Observe(similarity)
}
