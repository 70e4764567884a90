package tiers

import (
	"context"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// TestHedgeBackupBeatsSlowPrimary: the primary's first token would come at
// 3 s; the backup, fired after hedge_after (200 ms), answers 100 ms later
// and wins; the primary is cancelled at once.
func TestHedgeBackupBeatsSlowPrimary(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.L1.HedgeAfterMS = 200
		c.L1.FirstTokenTimeoutMS = 5000 // the primary is slow, not timed out
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{FirstTokenDelayMS: 3000})
	r.b.Sim.SetFault(modelB, vendorsim.Fault{FirstTokenDelayMS: 100})

	// The primary is asked first, and alone until hedge_after.
	orderChecked := make(chan bool, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, err := r.a.Sim.WaitFor(ctx, modelA, func(c vendorsim.Counters) bool { return c.Requests == 1 })
		orderChecked <- err == nil && r.b.Sim.Counters(modelB).Requests == 0
	}()

	// When the backup's first token is emitted, the primary is cancelled
	// already: the engine does not wait for the end of the answer. Blocking
	// in the hook holds the answer until the simulator has seen it.
	cancelledAtOnce := false
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	a := r.askHook(t, ctx, Request{}, func(ev Event) {
		if ev.Kind != EventStart {
			return
		}
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second) // the primary's token is due at 3 s
		defer wcancel()
		_, err := r.a.Sim.WaitFor(wctx, modelA, func(c vendorsim.Counters) bool { return c.Cancelled == 1 })
		cancelledAtOnce = err == nil
	})
	if !cancelledAtOnce {
		t.Fatal("the primary was not cancelled when the backup won")
	}
	if !<-orderChecked {
		t.Fatal("the backup was asked before the primary")
	}
	if a.out.Source != "b" || a.text() != replyText || a.end().Reason != ReasonDone {
		t.Fatalf("outcome %+v, end %+v; want the backup's complete answer\nlogs: %s", a.out, a.end(), r.logs)
	}
	// Lower bound only: the backup cannot answer before hedge_after plus
	// its own 100 ms. The upper side is measured, not asserted.
	if a.firstAt < 300*time.Millisecond {
		t.Fatalf("first token after %v, before hedge_after + 100 ms", a.firstAt)
	}
	t.Logf("first token after %v (hedge_after 200 ms + backup 100 ms)", a.firstAt)
	r.a.WaitCounters(t, modelA, func(c vendorsim.Counters) bool { return c.Cancelled == 1 && c.InFlight == 0 })
	if c := r.a.Sim.Counters(modelA); c.Completed != 0 || c.Failed != 0 {
		t.Fatalf("primary counters %+v: want it cancelled, nothing else", c)
	}
	if got := r.requests(t, "a", "timeout") + r.requests(t, "a", "server"); got != 0 {
		t.Fatal("the cancelled primary was counted as a failure")
	}
}

// TestRaceModeAsksAllAtOnce: in race mode both vendors are asked at once;
// the first token wins and the other is cancelled.
func TestRaceModeAsksAllAtOnce(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.L1.Mode = ModeRace
		c.L1.FirstTokenTimeoutMS = 5000
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{FirstTokenDelayMS: 3000})
	r.b.Sim.SetFault(modelB, vendorsim.Fault{FirstTokenDelayMS: 100})
	a := r.ask(t, Request{})
	if a.out.Source != "b" || a.text() != replyText {
		t.Fatalf("outcome %+v; want the faster vendor b", a.out)
	}
	if a.firstAt < 100*time.Millisecond || a.firstAt > 3*time.Second {
		t.Fatalf("first token after %v: want b's, after 100 ms and long before a's 3 s", a.firstAt)
	}
	t.Logf("first token after %v (race, backup 100 ms)", a.firstAt)
	r.a.WaitCounters(t, modelA, func(c vendorsim.Counters) bool { return c.Cancelled == 1 })
}

// TestRaceLoserTokensAreDropped: both vendors stream at the same pace; one
// wins and the answer holds only its tokens, never a mix.
func TestRaceLoserTokensAreDropped(t *testing.T) {
	r := newRig(t, func(c *Config) { c.L1.Mode = ModeRace })
	r.a.Sim.SetReply(modelA, "alpha alpha alpha alpha alpha alpha alpha alpha alpha alpha alpha alpha")
	r.b.Sim.SetReply(modelB, "bravo bravo bravo bravo bravo bravo bravo bravo bravo bravo bravo bravo")
	for i := range 5 {
		a := r.ask(t, Request{})
		want := map[string]string{
			"a": "alpha alpha alpha alpha alpha alpha alpha alpha alpha alpha alpha alpha",
			"b": "bravo bravo bravo bravo bravo bravo bravo bravo bravo bravo bravo bravo",
		}[a.out.Source]
		if a.text() != want {
			t.Fatalf("question %d: source %q, text %q: tokens of two vendors mixed", i, a.out.Source, a.text())
		}
	}
}

// TestHedgeAllWaitedFor: Answer returns only after every attempt has
// returned, even when the winner is fast and losers hang (goleak in
// TestMain would report a goroutine left behind).
func TestHedgeAllWaitedFor(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.L1.Mode = ModeRace
		c.L1.FirstTokenTimeoutMS = 5000
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{NoAnswer: true})
	// The winner takes 100 ms, so the loser's request surely arrives
	// before it is cancelled.
	r.b.Sim.SetFault(modelB, vendorsim.Fault{FirstTokenDelayMS: 100})
	for range 3 {
		if a := r.ask(t, Request{}); a.out.Source != "b" {
			t.Fatalf("outcome %+v; want b", a.out)
		}
	}
	r.a.WaitCounters(t, modelA, func(c vendorsim.Counters) bool { return c.Cancelled == 3 })
}
