package ocr

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
	"github.com/rs/zerolog"
)

// BenchmarkRead reads the rendered screenshots of each kind (every theme
// and scale) one at a time and reports the p50 and p95 latency of one
// image, and its mean character accuracy:
//
//	go test -run '^$' -bench Read -benchtime 3x ./tiers/ocr
func BenchmarkRead(b *testing.B) {
	ocrtest.Need(b)
	for _, kind := range []string{"code", "problem-en", "problem-zh"} {
		b.Run(kind, func(b *testing.B) {
			var imgs [][]byte
			var samples []ocrtest.Sample
			for _, s := range ocrtest.Samples() {
				if strings.HasPrefix(s.Name, kind+"/") {
					img, err := ocrtest.PNG(s.Shot)
					if err != nil {
						b.Fatal(err)
					}
					imgs, samples = append(imgs, img), append(samples, s)
				}
			}
			p := New(Config{Workers: 1, TimeoutMS: 60000}, zerolog.Nop(), nil)
			defer p.Close()
			var took []time.Duration
			acc := 0.0
			b.ResetTimer()
			for b.Loop() {
				for i, img := range imgs {
					start := time.Now()
					text, err := p.Read(context.Background(), img, samples[i].Lang)
					took = append(took, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					acc += ocrtest.Accuracy(samples[i].Shot.Text, text)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50_ms")
			b.ReportMetric(float64(took[(len(took)*95-1)/100].Milliseconds()), "p95_ms")
			b.ReportMetric(acc/float64(len(took)), "accuracy")
		})
	}
}
