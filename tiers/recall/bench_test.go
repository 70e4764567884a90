package recall

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkMatch measures one Match over the whole embedded bank, cycling
// through the two held-out dev halves' utterances (positives and
// negatives; heldout2's are whole interviewer turns, the longest input a
// session sends), and reports the 99th percentile of the per-call latency
// next to the mean.
func BenchmarkMatch(b *testing.B) {
	bank := realBank(b)
	s, err := NewStore(bank, Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var items []heldoutItem
	for _, name := range []string{"heldout_dev.yaml", "heldout2_dev.yaml"} {
		hs := loadHeldout(b, name)
		items = append(append(items, hs.Positives...), hs.Negatives...)
	}
	durations := make([]time.Duration, 0, 1<<16)
	ctx := b.Context()
	for i := 0; b.Loop(); i++ {
		it := items[i%len(items)]
		start := time.Now()
		if _, err := s.Match(ctx, it.Text, it.Lang, Mid); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkStartup measures a process's start-up: decoding and
// validating the embedded bank (Load's first call) and embedding and
// indexing every wording (the first NewStore).
func BenchmarkStartup(b *testing.B) {
	realBank(b) // skips or fails while the bank is incomplete
	for b.Loop() {
		bank, err := loadEmbedded()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := NewStore(bank, Config{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewStore measures embedding and indexing alone: the first
// NewStore of a bank.
func BenchmarkNewStore(b *testing.B) {
	bank := realBank(b)
	for b.Loop() {
		if _, err := newWordingIndex(bank); err != nil {
			b.Fatal(err)
		}
	}
}
