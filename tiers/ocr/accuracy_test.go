package ocr

import (
	"context"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
	"github.com/rs/zerolog"
)

// Accuracy floors: character accuracy of each rendered screenshot.
const (
	floorEN = 0.95
	floorZH = 0.90
)

// TestAccuracy reads every rendered screenshot (code, an English and a
// Chinese problem statement; light and dark; scales 1 to 2) and checks
// its character accuracy against the text drawn.
func TestAccuracy(t *testing.T) {
	ocrtest.Need(t)
	p := New(Config{Workers: 2, TimeoutMS: 60000}, zerolog.Nop(), nil) // a loaded CI machine: latency is the benchmark's
	defer p.Close()
	for _, s := range ocrtest.Samples() {
		t.Run(s.Name, func(t *testing.T) {
			img, err := ocrtest.PNG(s.Shot)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			got, err := p.Read(ctx, img, s.Lang)
			if err != nil {
				t.Fatal(err)
			}
			acc := ocrtest.Accuracy(s.Shot.Text, got)
			floor := floorEN
			if s.Lang == "zh" {
				floor = floorZH
			}
			t.Logf("accuracy %.3f", acc)
			if acc < floor {
				t.Errorf("character accuracy %.3f, want ≥ %.2f; read:\n%s", acc, floor, got)
			}
		})
	}
}
