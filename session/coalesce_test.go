package session

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers"
)

// timedAnswerer emits its answer's deltas at fixed times after the
// question, then ends it.
type timedAnswerer struct {
	deltas []timedDelta
	end    time.Duration
}

type timedDelta struct {
	at   time.Duration
	text string
}

func (a timedAnswerer) Answer(ctx context.Context, req tiers.Request, emit func(tiers.Event)) {
	t0 := time.Now()
	wait := func(at time.Duration) bool {
		select {
		case <-time.After(at - time.Since(t0)):
			return true
		case <-ctx.Done():
			return false
		}
	}
	emit(tiers.Event{Kind: tiers.EventStart, Level: req.Level, Source: "timed"})
	for _, d := range a.deltas {
		if !wait(d.at) {
			return
		}
		emit(tiers.Event{Kind: tiers.EventDelta, Text: d.text})
	}
	if wait(a.end) {
		emit(tiers.Event{Kind: tiers.EventEnd, Reason: endDone})
	}
}

type arrival struct {
	typ, text string
	at        time.Duration // after the question was sent
	seq       uint64
}

// coalesced runs one answer through a hub with coalesce and returns what
// the client received after the question, up to answer_end.
// during, if not nil, runs beside the answer, from the question on.
func coalesced(t *testing.T, coalesce time.Duration, a timedAnswerer, during func(*fakeHealth)) []arrival {
	n := vendorsim.NewMemNet()
	h := newFakeHealth(tiers.L1)
	ts := serveMem(t, n, Config{Health: h, Answerer: a, Coalesce: coalesce})
	c, _ := ts.start(t, "en")
	t0 := time.Now()
	c.send(map[string]any{"type": "question", "id": "q", "text": "Why this company?"})
	if during != nil {
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { during(h) })
	}
	var got []arrival
	for {
		m := c.read()
		got = append(got, arrival{typ: m.str("type"), text: m.str("text"), at: time.Since(t0), seq: m.seq()})
		if m.str("type") == "answer_end" {
			return got
		}
	}
}

func TestCoalesceDeltas(t *testing.T) {
	ms := time.Millisecond
	answer := timedAnswerer{deltas: []timedDelta{
		{100 * ms, "A"}, // the first: at once
		{110 * ms, "b"}, // within 40 ms of A (the test's window): wait until 140
		{120 * ms, "c"},
		{200 * ms, "D"}, // 60 ms after the last message: at once
		{210 * ms, "e"}, // within the window, then the end comes first
		{215 * ms, "f"},
	}, end: 220 * ms}
	synctest.Test(t, func(t *testing.T) {
		got := coalesced(t, 40*ms, answer, nil)
		want := []arrival{{typ: "answer_start"}, {"answer_delta", "A", 100 * ms, 0}, {"answer_delta", "bc", 140 * ms, 0},
			{"answer_delta", "D", 200 * ms, 0}, {"answer_delta", "ef", 220 * ms, 0}, {typ: "answer_end", at: 220 * ms}}
		check(t, got, want)
	})
	t.Run("off", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			got := coalesced(t, -1, answer, nil)
			want := []arrival{{typ: "answer_start"}}
			for _, d := range answer.deltas {
				want = append(want, arrival{"answer_delta", d.text, d.at, 0})
			}
			check(t, got, append(want, arrival{typ: "answer_end", at: answer.end}))
		})
	})
}

// check compares arrivals by type, text and time (answer_start's time is
// not checked) and wants consecutive seqs.
func check(t *testing.T, got, want []arrival) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d messages %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.typ != w.typ || g.text != w.text || (i > 0 && g.at != w.at) {
			t.Errorf("message %d = %s %q at %v, want %s %q at %v", i, g.typ, g.text, g.at, w.typ, w.text, w.at)
		}
		if i > 0 && g.seq != got[i-1].seq+1 {
			t.Errorf("message %d has seq %d after %d", i, g.seq, got[i-1].seq)
		}
	}
}

// TestCoalesceBounded: a burst of deltas goes out in pieces of at most
// about maxCoalesced bytes, and loses nothing.
func TestCoalesceBounded(t *testing.T) {
	var a timedAnswerer
	for i := range 200 {
		a.deltas = append(a.deltas, timedDelta{time.Duration(i) * time.Microsecond, "0123456789abcdefghij "})
	}
	a.end = time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		got := coalesced(t, 40*time.Millisecond, a, nil)
		total := 0
		for _, g := range got {
			if g.typ == "answer_delta" {
				total += len(g.text)
				if len(g.text) > maxCoalesced+len(a.deltas[0].text) {
					t.Errorf("a delta of %d bytes", len(g.text))
				}
			}
		}
		if want := 200 * len(a.deltas[0].text); total != want || len(got) < 2+want/maxCoalesced {
			t.Fatalf("%d bytes in %d messages, want %d in at least %d", total, len(got), want, 2+want/maxCoalesced)
		}
	})
}

// TestCoalesceFlushesBeforeLevel: a level change mid-answer goes out
// after the text gathered before it, at once.
func TestCoalesceFlushesBeforeLevel(t *testing.T) {
	ms := time.Millisecond
	answer := timedAnswerer{deltas: []timedDelta{{100 * ms, "A"}, {110 * ms, "b"}}, end: 200 * ms}
	synctest.Test(t, func(t *testing.T) {
		got := coalesced(t, 40*ms, answer, func(h *fakeHealth) {
			time.Sleep(115 * ms)
			h.set(tiers.L2, tiers.Signal{})
		})
		want := []arrival{{typ: "answer_start"}, {"answer_delta", "A", 100 * ms, 0}, {"answer_delta", "b", 115 * ms, 0},
			{typ: "level", at: 115 * ms}, {typ: "answer_end", at: 200 * ms}}
		check(t, got, want)
	})
}

// TestCoalescerFlushesWhatIsDue: a delta that comes when the waiting text
// is due already takes it out with it, without the timer's turn.
func TestCoalescerFlushesWhatIsDue(t *testing.T) {
	c := coalescer{window: 40 * time.Millisecond}
	defer c.stop()
	at := time.Unix(0, 0)
	if got := c.add(1, "q1", "A", at); got != "A" {
		t.Fatalf("first delta: %q, want it at once", got)
	}
	if got := c.add(1, "q1", "b", at.Add(10*time.Millisecond)); got != "" {
		t.Fatalf("delta within the window: %q, want it to wait", got)
	}
	if got := c.add(1, "q1", "c", at.Add(45*time.Millisecond)); got != "bc" {
		t.Fatalf("delta after the window: %q, want the waiting text with it", got)
	}
	if c.due() != nil {
		t.Error("nothing waits, yet the timer is armed")
	}
}
