package tiers

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// firstContentBuckets resolve the region around the 1.5 s budget finely.
var firstContentBuckets = []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 10}

// classOK is the class label of a successful backend request.
const classOK = "ok"

// Metrics are the answer engine's and the health center's Prometheus
// metrics. A nil *Metrics is valid and records nothing.
type Metrics struct {
	requests     *prometheus.CounterVec   // backend, class
	up           *prometheus.GaugeVec     // backend
	firstContent *prometheus.HistogramVec // level
	shed         *prometheus.CounterVec   // backend
	allDown      prometheus.Counter
	gwTokens     *prometheus.CounterVec // endpoint, kind
	gwResponses  *prometheus.CounterVec // outcome
}

// NewMetrics registers on reg: poise_backend_requests_total{backend,class}
// (class "ok" for success), poise_backend_up{backend},
// poise_answer_first_content_seconds{level},
// poise_backend_shed_total{backend} (questions that skipped a full
// bulkhead), poise_l1_all_down_total, and the gateway's
// poise_gateway_tokens_total{endpoint,kind} and
// poise_gateway_responses_total{outcome}. A nil reg leaves them
// unregistered. Registering twice on one registry panics, as in
// client_golang.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_backend_requests_total",
			Help: "Model and template backend requests by backend and error class (ok for success).",
		}, []string{"backend", "class"}),
		up: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "poise_backend_up",
			Help: "1 when the health center considers the backend up, else 0.",
		}, []string{"backend"}),
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
		gwTokens: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_gateway_tokens_total",
			Help: "Tokens of the gateway answers clients got (kind prompt or completion), by the endpoint that finished them; failed attempts add none.",
		}, []string{"endpoint", "kind"}),
		gwResponses: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_gateway_responses_total",
			Help: "Gateway chat responses by outcome: ok, continued, refused, error, cut, canceled.",
		}, []string{"outcome"}),
	}
}

// request counts one backend request ending with class (ClassNone: ok).
// Our own cancellations are not requests that ended; they are not counted.
func (m *Metrics) request(backend string, class Class) {
	if m == nil || class == ClassCanceled {
		return
	}
	label := string(class)
	if class == ClassNone {
		label = classOK
	}
	m.requests.WithLabelValues(backend, label).Inc()
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

// gatewayTokens counts the tokens of one gateway answer.
func (m *Metrics) gatewayTokens(endpoint string, prompt, completion int) {
	if m == nil {
		return
	}
	m.gwTokens.WithLabelValues(endpoint, "prompt").Add(float64(prompt))
	m.gwTokens.WithLabelValues(endpoint, "completion").Add(float64(completion))
}

// gatewayResponse counts one gateway response by outcome.
func (m *Metrics) gatewayResponse(outcome string) {
	if m == nil {
		return
	}
	m.gwResponses.WithLabelValues(outcome).Inc()
}
