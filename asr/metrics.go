package asr

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the caption pipeline's Prometheus metrics. A nil *Metrics is
// valid and records nothing.
type Metrics struct {
	captionLatency prometheus.Histogram
	partialSkipped prometheus.Counter
	finalsLost     prometheus.Counter
	audioDropped   prometheus.Counter
	backendErrors  *prometheus.CounterVec
	backendUp      *prometheus.GaugeVec
	decodeSeconds  *prometheus.HistogramVec
}

// NewMetrics registers the metrics on reg (nil: unregistered). Calling it
// twice on one registry panics, as registering twice does.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		captionLatency: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "poise_caption_latency_seconds",
			Help:    "From the end of speech to its final caption.",
			Buckets: []float64{0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8, 13, 21},
		}),
		partialSkipped: f.NewCounter(prometheus.CounterOpts{
			Name: "poise_asr_partial_skipped_total",
			Help: "Partial captions not decoded because every whisper queue was busy.",
		}),
		finalsLost: f.NewCounter(prometheus.CounterOpts{
			Name: "poise_asr_finals_failed_total",
			Help: "Utterances whose final decode failed on every backend (captions paused).",
		}),
		audioDropped: f.NewCounter(prometheus.CounterOpts{
			Name: "poise_asr_audio_dropped_bytes_total",
			Help: "Audio bytes dropped because a pipeline's input buffer was full.",
		}),
		backendErrors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_asr_backend_errors_total",
			Help: "Failed recognizer requests by backend and error class.",
		}, []string{"backend", "class"}),
		backendUp: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "poise_asr_backend_up",
			Help: "1 while a recognizer backend is taking requests, 0 while it is skipped after failures.",
		}, []string{"backend"}),
		decodeSeconds: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "poise_asr_decode_seconds",
			Help:    "Recognizer request time by backend and kind (partial or final), queue wait excluded.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16},
		}, []string{"backend", "kind"}),
	}
}

func (m *Metrics) observeCaptionLatency(d time.Duration) {
	if m != nil {
		m.captionLatency.Observe(d.Seconds())
	}
}

func (m *Metrics) incPartialSkipped() {
	if m != nil {
		m.partialSkipped.Inc()
	}
}

func (m *Metrics) incFinalsFailed() {
	if m != nil {
		m.finalsLost.Inc()
	}
}

func (m *Metrics) addAudioDropped(n int) {
	if m != nil {
		m.audioDropped.Add(float64(n))
	}
}

func (m *Metrics) incBackendError(backend, class string) {
	if m != nil {
		m.backendErrors.WithLabelValues(backend, class).Inc()
	}
}

func (m *Metrics) setBackendUp(backend string, up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.backendUp.WithLabelValues(backend).Set(v)
}

func (m *Metrics) observeDecode(backend string, partial bool, d time.Duration) {
	if m == nil {
		return
	}
	kind := "final"
	if partial {
		kind = "partial"
	}
	m.decodeSeconds.WithLabelValues(backend, kind).Observe(d.Seconds())
}
