package session

import (
	"testing"
	"time"
)

// fakeClock is an injected clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// sendAt offers count frames through admit at the current time and counts
// what passed, what was warned about and whether the client was closed.
func sendAt(count int, admit func() inVerdict) (passed, warned int, closed bool) {
	for range count {
		v := admit()
		if !v.drop {
			passed++
		}
		if v.warn != nil {
			if v.warn.Code != codeTooFast || v.warn.Message == "" {
				panic("bad warning: " + v.warn.Error())
			}
			warned++
		}
		closed = closed || v.close
	}
	return passed, warned, closed
}

// TestInRateBurstThenRate: each bucket lets its burst through at once,
// then its rate; the excess is dropped with one warning a second at most.
func TestInRateBurstThenRate(t *testing.T) {
	cases := []struct {
		name        string
		admit       func(r *inRate) inVerdict
		burst, rate int // in frames of this case
	}{
		{"messages", func(r *inRate) inVerdict { return r.message(false) }, messageBurst, messageRate},
		{"pings", func(r *inRate) inVerdict { return r.message(true) }, pingBurst, pingRate},
		{"text bytes", func(r *inRate) inVerdict { return r.text(1 << 10) }, textBytesBurst >> 10, textBytesRate >> 10},
		{"audio 40 ms frames", func(r *inRate) inVerdict { return r.binary(1280) }, audioBurst / 1280, audioRate / 1280},
		{"tiny audio frames count 20 ms", func(r *inRate) inVerdict { return r.binary(2) }, audioBurst / minAudioCharge, audioRate / minAudioCharge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1000, 0)}
			r := newInRate(clk.now)
			admit := func() inVerdict { return tc.admit(r) }
			if p, w, c := sendAt(tc.burst+100, admit); p != tc.burst || w != 1 || c {
				t.Fatalf("burst: passed %d, warned %d, closed %v; want %d, 1, false", p, w, c, tc.burst)
			}
			clk.advance(500 * time.Millisecond) // half a second: half the rate refills, no new warning yet
			if p, w, _ := sendAt(tc.rate, admit); p != tc.rate/2 || w != 0 {
				t.Fatalf("after 0.5 s: passed %d, warned %d; want %d, 0", p, w, tc.rate/2)
			}
			clk.advance(500 * time.Millisecond)
			if p, w, _ := sendAt(tc.rate, admit); p != tc.rate/2 || w != 1 {
				t.Fatalf("after 1 s: passed %d, warned %d; want %d, 1", p, w, tc.rate/2)
			}
		})
	}
}

// TestInRateSteadyClientNeverDropped: a client at its rate, for a long
// time, is never dropped; a quiet spell refills the burst, not more.
func TestInRateSteadyClientNeverDropped(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	r := newInRate(clk.now)
	const frame = 1280            // bytes: the page's 40 ms audio frames
	for i := range 10 * 60 * 25 { // ten minutes of real-time audio
		if v := r.binary(frame); v.drop {
			t.Fatalf("real-time audio frame %d dropped", i)
		}
		if i%250 == 0 { // a ping every 10 s
			if v := r.message(true); v.drop {
				t.Fatalf("ping at frame %d dropped", i)
			}
		}
		clk.advance(40 * time.Millisecond)
	}
	clk.advance(time.Hour)
	if p, _, _ := sendAt(messageBurst*3, func() inVerdict { return r.message(false) }); p != messageBurst {
		t.Fatalf("after an hour's quiet %d messages passed, want the burst %d", p, messageBurst)
	}
}

// TestInRateAbuseCloses: only abuseStrikes consecutive seconds in which the
// dropped excess reaches abuseFactor times the rate close the client; a
// second under that starts the count again.
func TestInRateAbuseCloses(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	r := newInRate(clk.now)
	strike := messageRate*(abuseFactor+1) + messageBurst // per second: the refill, and abuse's worth dropped on top
	msg := func() inVerdict { return r.message(false) }
	second := func(frames int) bool {
		_, _, closed := sendAt(frames, msg)
		clk.advance(time.Second)
		return closed
	}
	for i := range abuseStrikes - 1 {
		if second(strike) {
			t.Fatalf("closed after %d strike seconds, want %d", i+1, abuseStrikes)
		}
	}
	if second(strike / 2) { // a milder second breaks the run
		t.Fatal("closed in a second under the abuse level")
	}
	for i := range abuseStrikes - 1 {
		if second(strike) {
			t.Fatalf("closed after %d strike seconds of a new run, want %d", i+1, abuseStrikes)
		}
	}
	if !second(strike) {
		t.Fatalf("not closed after %d strike seconds", abuseStrikes)
	}
}

// TestInRateQuietSecondBreaksRun: a second with nothing sent also breaks a
// run of strikes.
func TestInRateQuietSecondBreaksRun(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	r := newInRate(clk.now)
	flood := func() (closed bool) {
		_, _, closed = sendAt((audioRate*(abuseFactor+2)+audioBurst)/minAudioCharge, func() inVerdict { return r.binary(minAudioCharge) })
		return closed
	}
	for range abuseStrikes - 1 {
		if flood() {
			t.Fatal("closed too early")
		}
		clk.advance(time.Second)
	}
	clk.advance(time.Second) // nothing sent in this second
	for range abuseStrikes - 1 {
		if flood() {
			t.Fatal("closed although a quiet second broke the run")
		}
		clk.advance(time.Second)
	}
	if !flood() {
		t.Fatal("not closed after a full run of strikes")
	}
}

// TestInRateBucketsIndependent: a flood of one kind leaves the others
// alone, and a client's warning budget is shared.
func TestInRateBucketsIndependent(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	r := newInRate(clk.now)
	if _, w, _ := sendAt(messageBurst*2, func() inVerdict { return r.message(false) }); w != 1 {
		t.Fatalf("warned %d times, want 1", w)
	}
	if v := r.message(true); v.drop {
		t.Fatal("a ping was dropped after a flood of other messages")
	}
	if v := r.binary(1280); v.drop {
		t.Fatal("audio was dropped after a flood of text messages")
	}
	if _, w, _ := sendAt(pingBurst+1, func() inVerdict { return r.message(true) }); w != 0 {
		t.Fatalf("a second warning within a second (%d)", w)
	}
}
