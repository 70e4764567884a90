package gateway

import (
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the gateway's Prometheus metrics. A nil *Metrics is valid
// and records nothing.
type Metrics struct {
	requests  *upstream.Metrics      // poise_backend_requests_total, shared with the engine
	tokens    *prometheus.CounterVec // endpoint, kind
	responses *prometheus.CounterVec // outcome
}

// NewMetrics registers poise_gateway_tokens_total{endpoint,kind} and
// poise_gateway_responses_total{outcome} on reg and counts backend
// requests in requests (may be nil). A nil reg leaves them unregistered.
// Registering twice on one registry panics, as in client_golang.
func NewMetrics(reg prometheus.Registerer, requests *upstream.Metrics) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		requests: requests,
		tokens: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_gateway_tokens_total",
			Help: "Tokens of the gateway answers clients got (kind prompt or completion), by the endpoint that finished them; failed attempts add none.",
		}, []string{"endpoint", "kind"}),
		responses: f.NewCounterVec(prometheus.CounterOpts{
			Name: "poise_gateway_responses_total",
			Help: "Gateway chat responses by outcome: ok, continued, refused, error, cut, canceled.",
		}, []string{"outcome"}),
	}
}

// request counts one upstream request ending with class.
func (m *Metrics) request(endpoint string, class upstream.Class) {
	if m == nil {
		return
	}
	m.requests.Request(endpoint, class)
}

// gatewayTokens counts the tokens of one gateway answer.
func (m *Metrics) gatewayTokens(endpoint string, prompt, completion int) {
	if m == nil {
		return
	}
	m.tokens.WithLabelValues(endpoint, "prompt").Add(float64(prompt))
	m.tokens.WithLabelValues(endpoint, "completion").Add(float64(completion))
}

// gatewayResponse counts one gateway response by outcome.
func (m *Metrics) gatewayResponse(outcome string) {
	if m == nil {
		return
	}
	m.responses.WithLabelValues(outcome).Inc()
}
