package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestValue(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, []string{"a"})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "y", Help: "y"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "z_seconds", Help: "z"})
	reg.MustRegister(c, g, h)
	c.WithLabelValues("1").Add(3)
	g.Set(2)
	h.Observe(0.1)
	h.Observe(0.2)
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"x_total", map[string]string{"a": "1"}, 3},
		{"x_total", map[string]string{"a": "2"}, -1},
		{"x_total", map[string]string{}, -1},
		{"y", map[string]string{}, 2},
		{"z_seconds", nil, 2},
		{"absent", nil, -1},
	} {
		if got := Value(t, reg, tt.name, tt.labels); got != tt.want {
			t.Errorf("Value(%s, %v) = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
}
