package ocr

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

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
	needTesseract(t)
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
			acc := Accuracy(s.Shot.Text, got)
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

// Accuracy is 1 − the edit distance between want and got over want's
// length, in characters, after both lose their white space (tesseract
// does not keep indentation, and Chinese has no spaces) and full-width
// punctuation becomes ASCII (the models read both alike).
func Accuracy(want, got string) float64 {
	w, g := normalize(want), normalize(got)
	if len(w) == 0 {
		return 0
	}
	return max(0, 1-float64(levenshtein(w, g))/float64(len(w)))
}

var fullWidth = strings.NewReplacer("，", ",", "：", ":", "；", ";", "（", "(", "）", ")", "！", "!", "？", "?", "。", ".", "【", "[", "】", "]")

func normalize(s string) []rune {
	s = fullWidth.Replace(s)
	return slices.DeleteFunc([]rune(s), unicode.IsSpace)
}

func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
