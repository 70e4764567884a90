package upstream

import (
	"testing"

	"github.com/poise-dev/poise/tiers/metricstest"
	"github.com/prometheus/client_golang/prometheus"
)

// metricValue returns the value of the gauge or counter name with exactly
// labels in reg, or -1 when there is none.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	return metricstest.Value(t, reg, name, labels)
}

func TestNilMetricsAreSafe(t *testing.T) {
	t.Parallel()
	var m *Metrics
	m.Request("a", ClassServer)
}

func TestMetricsRequestLabels(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	m.Request("a", ClassNone)
	m.Request("a", ClassRateLimited)
	m.Request("a", ClassCanceled) // our own cancel is not a request outcome
	if got := metricValue(t, reg, "poise_backend_requests_total", map[string]string{"backend": "a", "class": "ok"}); got != 1 {
		t.Errorf("ok = %v, want 1", got)
	}
	if got := metricValue(t, reg, "poise_backend_requests_total", map[string]string{"backend": "a", "class": "rate_limited"}); got != 1 {
		t.Errorf("rate_limited = %v, want 1", got)
	}
	if got := metricValue(t, reg, "poise_backend_requests_total", map[string]string{"backend": "a", "class": "canceled"}); got != -1 {
		t.Errorf("canceled = %v, want no series", got)
	}
}
