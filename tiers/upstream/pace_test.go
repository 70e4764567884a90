package upstream

import (
	"fmt"
	"math"
	"runtime/metrics"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// tokenEvents is an answer of n tokens, one every gap from first, then its
// finish and [DONE].
func tokenEvents(first, gap time.Duration, n int) ([]timedEvent, string) {
	var ev []timedEvent
	var want strings.Builder
	for i := range n {
		tok := fmt.Sprintf("t%d ", i)
		want.WriteString(tok)
		ev = append(ev, timedEvent{first + time.Duration(i)*gap, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q}}]}`, tok)})
	}
	end := first + time.Duration(n)*gap
	ev = append(ev, timedEvent{end, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}, timedEvent{end, "[DONE]"})
	return ev, want.String()
}

// TestPacedStreamReadsOncePerWindow: with a Pacer, the tokens that follow
// the first are read at most once per Every, so a token every 10 ms goes
// on in pieces at least 50 ms apart; the first token is not delayed,
// nothing is lost, and the finish comes at most one window late.
func TestPacedStreamReadsOncePerWindow(t *testing.T) {
	const (
		first = 300 * time.Millisecond
		gap   = 10 * time.Millisecond
		every = 50 * time.Millisecond
	)
	synctest.Test(t, func(t *testing.T) {
		ev, want := tokenEvents(first, gap, 30)
		g, res, took := gatheredStream(t, &timedUpstream{events: ev}, Call{Pacer: &Pacer{Every: every}})
		if res.Err != nil || res.Finish != "stop" {
			t.Fatalf("result %+v, want a complete answer", res)
		}
		if got := g.text(); got != want {
			t.Fatalf("text %q, want %q", got, want)
		}
		if g.pieces[0] != (piece{first, "t0 "}) {
			t.Errorf("first piece %v, want t0 alone at %v", g.pieces[0], first)
		}
		for i := 1; i < len(g.pieces); i++ {
			if d := g.pieces[i].at - g.pieces[i-1].at; d < every {
				t.Errorf("pieces %d and %d came %v apart, want at least %v: %v", i-1, i, d, every, g.pieces)
			}
		}
		if n := len(g.pieces); n > 1+int((30*gap)/every) {
			t.Errorf("%d pieces, want at most one a window: %v", n, g.pieces)
		}
		if end := first + 30*gap; took > end+every {
			t.Errorf("the stream took %v, want its finish at most %v after the server's at %v", took, every, end)
		}
	})
}

// TestPacedStreamStepsAsideWhenBusy: while Busy says the node is short of
// CPU, each read's tokens go on as they come, as without a Pacer.
func TestPacedStreamStepsAsideWhenBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev, want := tokenEvents(100*time.Millisecond, 10*time.Millisecond, 10)
		busy := &Pacer{Every: 50 * time.Millisecond, Busy: func() bool { return true }}
		g, res, _ := gatheredStream(t, &timedUpstream{events: ev}, Call{Pacer: busy})
		if res.Err != nil || g.text() != want {
			t.Fatalf("result %+v, text %q, want %q", res, g.text(), want)
		}
		if len(g.pieces) != 10 {
			t.Errorf("%d pieces, want one per token as they came: %v", len(g.pieces), g.pieces)
		}
		for i, p := range g.pieces {
			if wantAt := 100*time.Millisecond + time.Duration(i)*10*time.Millisecond; p.at != wantAt {
				t.Errorf("piece %d at %v, want %v", i, p.at, wantAt)
			}
		}
	})
}

// TestSchedulerLagCountsLateWaits: the verdict counts the scheduling waits
// since the last sample whose bucket starts at Limit or later, and is
// busy when they are at least a tenth.
func TestSchedulerLagCountsLateWaits(t *testing.T) {
	l := &SchedulerLag{Limit: 2 * time.Millisecond}
	buckets := []float64{math.Inf(-1), 0.001, 0.002, 0.004, math.Inf(1)}
	h := func(counts ...uint64) *metrics.Float64Histogram {
		return &metrics.Float64Histogram{Counts: counts, Buckets: buckets}
	}
	if late, all := l.count(h(50, 40, 5, 5)); late != 0 || all != 0 {
		t.Errorf("first sample: %d late of %d, want nothing counted before a baseline", late, all)
	}
	for _, c := range []struct {
		counts    []uint64
		late, all uint64
		busy      bool
	}{
		{[]uint64{150, 130, 10, 10}, 10, 200, false}, // 5% late
		{[]uint64{200, 160, 30, 20}, 30, 110, true},  // 27% late
		{[]uint64{200, 160, 30, 20}, 0, 0, false},    // nothing ran: not busy
	} {
		late, all := l.count(h(c.counts...))
		if late != c.late || all != c.all || lagging(late, all) != c.busy {
			t.Errorf("counts %v: %d late of %d (busy %v), want %d of %d (busy %v)", c.counts, late, all, lagging(late, all), c.late, c.all, c.busy)
		}
	}
}

// TestSchedulerLagReadsTheRuntime: the verdict counts the waits the
// runtime recorded since the last sample (goroutines handing a channel
// back and forth make some), none of them late against a limit of an
// hour, and it is renewed at most once a Window.
func TestSchedulerLagReadsTheRuntime(t *testing.T) {
	l := &SchedulerLag{Limit: time.Hour}
	if late, all := l.sample(); late != 0 || all != 0 {
		t.Fatalf("first sample: %d late of %d, want a baseline only", late, all)
	}
	ping, pong := make(chan int), make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := range ping {
			pong <- v
		}
	}()
	for i := range 2000 {
		ping <- i
		<-pong
	}
	close(ping)
	<-done
	late, all := l.sample()
	if all == 0 || late != 0 || lagging(late, all) {
		t.Errorf("after 4,000 handoffs: %d late of %d waits, want some waits and none an hour late", late, all)
	}

	w := &SchedulerLag{Window: time.Hour, Limit: time.Second}
	w.Busy()
	next := w.next.Load()
	if next == 0 || w.prev == nil {
		t.Fatal("the first verdict read no histogram")
	}
	w.Busy()
	if w.next.Load() != next {
		t.Error("the verdict was renewed within its window")
	}
}
