package upstream

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
// nothing is lost, and the finish comes at most one window and two of the
// Pacer's ticks late.
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
		if end, late := first+30*gap, every+2*every/pacerSlots; took > end+late {
			t.Errorf("the stream took %v, want its finish at most %v after the server's at %v", took, late, end)
		}
	})
}

// TestPacerWheelWakesEachWaiter: a stream that waits d on a running
// Pacer wakes after d and at most two ticks later; with no stream waiting
// the wheel stops ticking; when Run ends it wakes the streams still
// waiting, and a later wait does not block.
func TestPacerWheelWakesEachWaiter(t *testing.T) {
	for _, every := range []time.Duration{50 * time.Millisecond, 50*time.Millisecond + 9} { // the second's tick rounds down
		t.Run(every.String(), func(t *testing.T) { wheelWakesEachWaiter(t, every) })
	}
}

func wheelWakesEachWaiter(t *testing.T, every time.Duration) {
	tick := every / pacerSlots
	synctest.Test(t, func(t *testing.T) {
		p := &Pacer{Every: every}
		ctx, cancel := context.WithCancel(t.Context())
		var run sync.WaitGroup
		run.Go(func() { p.Run(ctx) })
		synctest.Wait()
		var streams sync.WaitGroup
		for _, d := range []time.Duration{time.Millisecond, 7 * time.Millisecond, 23 * time.Millisecond, every} {
			for _, off := range []time.Duration{0, tick - 1} { // just after a tick, and just before one
				streams.Go(func() {
					time.Sleep(off)
					wake := make(chan struct{}, 1)
					start := time.Now()
					if !p.wait(d, wake) {
						t.Errorf("wait %v: the running Pacer took no waiter", d)
						return
					}
					<-wake
					if got := time.Since(start); got < d || got > d+2*tick {
						t.Errorf("wait %v from %v: woke after %v, want within [%v, %v]", d, off, got, d, d+2*tick)
					}
				})
			}
		}
		streams.Wait()
		synctest.Wait() // the wheel's last turn found no waiter
		p.mu.Lock()
		idle := p.idle
		p.mu.Unlock()
		if !idle {
			t.Error("no stream waits, and the wheel still ticks")
		}
		wake := make(chan struct{}, 1)
		if !p.wait(every, wake) {
			t.Fatal("an idle Pacer took no waiter")
		}
		cancel()
		<-wake // Run's end wakes it at once
		run.Wait()
		if p.wait(every, make(chan struct{}, 1)) {
			t.Error("a stopped Pacer took a waiter")
		}
	})
}
