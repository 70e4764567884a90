package health

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// BenchmarkSupported measures the level check a new session makes.
func BenchmarkSupported(b *testing.B) {
	h := New(Config{}, []Probe{ListProbe("a", level.L1, "http://127.0.0.1:9/v1", "", http.DefaultClient)}, zerolog.Nop(), nil)
	b.ReportAllocs()
	for b.Loop() {
		if h.Supported() != level.L1 {
			b.Fatal("not L1")
		}
	}
}

// BenchmarkReportFailureStoreHung measures what the hedge loop pays to
// report a vendor's failure while the shared store (Redis) hangs: the
// sync goroutine is stuck in a store call, the health goroutine runs.
// The report is a channel send; nothing waits for the store or a lock
// held across I/O.
func BenchmarkReportFailureStoreHung(b *testing.B) {
	store := &flakyStore{MemoryStore: NewMemoryStore()}
	store.hang.Store(true)
	h := New(Config{IntervalMS: 60000}, []Probe{{Name: "a", Level: level.L1, Check: func(context.Context) error { return nil }}},
		zerolog.Nop(), NewMetrics(nil), WithStore(store))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { h.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	for store.calls.Load() == 0 {
		time.Sleep(time.Millisecond) // the sync goroutine is in a hung call
	}
	b.ReportAllocs()
	for b.Loop() {
		h.Report("a", false, upstream.ClassServer)
	}
}
