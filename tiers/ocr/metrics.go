package ocr

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Results of a read, as the result label of poise_ocr_requests_total.
const (
	resultOK          = "ok"
	resultError       = "error"
	resultTimeout     = "timeout"
	resultBusy        = "busy"        // the queue was full
	resultUnavailable = "unavailable" // skipped: down after failures, or not installed
	resultBadImage    = "bad_image"
	resultCancelled   = "cancelled"
)

// Metrics are the OCR pool's Prometheus metrics. A nil *Metrics is valid
// and records nothing.
type Metrics struct {
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	up       prometheus.Gauge
}

// NewMetrics registers poise_ocr_requests_total{result},
// poise_ocr_seconds{lang} and poise_ocr_up on reg (nil: unregistered).
// Registering twice on one registry panics, as in client_golang.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_ocr_requests_total",
			Help: "Screenshot OCR reads by result (ok, error, timeout, busy, unavailable, bad_image, cancelled).",
		}, []string{"result"}),
		seconds: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "poise_ocr_seconds",
			Help:    "Time of one successful OCR read (the tesseract process), queue wait excluded, by tesseract language.",
			Buckets: []float64{0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5},
		}, []string{"lang"}),
		up: f.NewGauge(prometheus.GaugeOpts{
			Name: "poise_ocr_up",
			Help: "1 while OCR takes reads, 0 while it is skipped after failures or not installed.",
		}),
	}
}

func (m *Metrics) request(result string) {
	if m != nil {
		m.requests.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) observe(lang string, d time.Duration) {
	if m != nil {
		m.seconds.WithLabelValues(lang).Observe(d.Seconds())
	}
}

func (m *Metrics) setUp(up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.up.Set(v)
}
