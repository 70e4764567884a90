package health

import (
	"net/http"
	"testing"

	"github.com/poise-dev/poise/tiers/level"
	"github.com/rs/zerolog"
)

// BenchmarkSupported measures the level check a new session makes.
func BenchmarkSupported(b *testing.B) {
	h := New(Config{}, []Probe{HTTPProbe("a", level.L1, "http://127.0.0.1:9/v1", "", http.DefaultClient)}, zerolog.Nop(), nil)
	b.ReportAllocs()
	for b.Loop() {
		if h.Supported() != level.L1 {
			b.Fatal("not L1")
		}
	}
}
