package tiers

import (
	"testing"

	"github.com/poise-dev/poise/tiers/metricstest"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
)

// metricValue returns the value of the gauge or counter name with exactly
// labels in reg, or -1 when there is none.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	return metricstest.Value(t, reg, name, labels)
}

func TestNilMetricsAreSafe(t *testing.T) {
	var m *Metrics
	m.request("a", upstream.ClassServer)
	m.observeFirstContent(L1, 0.2)
	m.shedOne("local")
	m.allDownOne()
}
