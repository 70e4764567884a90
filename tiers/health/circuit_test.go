package health

import (
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/level"
)

func testPolicy() policy {
	return policy{failAfter: 3, window: 10 * time.Second, recoverAfter: 3, cooldown: time.Second, maxCooldown: 8 * time.Second}
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// at is t0 plus s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func mustState(t *testing.T, c *circuit, want Circuit) {
	t.Helper()
	if c.state != want {
		t.Fatalf("circuit %s, want %s (reason %q)", c.state, want, c.reason)
	}
}

// TestCircuitOpensOnFailuresWithinWindow: failAfter failures within the
// window open it; failures spread wider than the window, with successes
// between them, do not; a probe pass does not clear live failures.
func TestCircuitOpensOnFailuresWithinWindow(t *testing.T) {
	c := newCircuit("a", level.L1, testPolicy(), "n")
	c.fail(at(0), 0, true, "503")
	c.pass(at(1), at(0.5), 0, false) // a probe pass: the failure stands
	c.fail(at(2), 0, true, "503")
	mustState(t, c, Closed)
	if ch := c.fail(at(3), 0, true, "503"); ch == nil || ch.to != Open {
		t.Fatalf("third failure within the window: change %+v, want open", ch)
	}

	c = newCircuit("a", level.L1, testPolicy(), "n")
	for i := range 10 {
		c.fail(at(float64(i*20)), 0, true, "503")
		c.pass(at(float64(i*20+1)), at(float64(i*20+1)), 0, true) // a live success clears the count
	}
	mustState(t, c, Closed)
}

// TestCircuitTrials: after the cooldown one trial at a time is admitted;
// a failed trial doubles the cooldown up to the cap; recoverAfter
// consecutive passes close it; a live failure in half-open reopens it.
func TestCircuitTrials(t *testing.T) {
	c := newCircuit("a", level.L1, testPolicy(), "n")
	for i := range 3 {
		c.fail(at(float64(i)*0.1), 0, true, "503")
	}
	mustState(t, c, Open)
	if _, ok, _ := c.allow(at(0.5)); ok {
		t.Fatal("a request was allowed during the cooldown")
	}
	// Failing trials: the cooldown grows 1 → 2 → 4 → 8 → 8 s.
	now := 0.2
	for _, want := range []float64{2, 4, 8, 8} {
		now = c.openUntil.Sub(t0).Seconds()
		gen, ok, _ := c.allow(at(now))
		if !ok || gen == 0 {
			t.Fatalf("no trial at %.1fs after the cooldown", now)
		}
		mustState(t, c, HalfOpen)
		if _, ok, _ := c.allow(at(now)); ok {
			t.Fatal("a second trial was admitted while one is in flight")
		}
		c.fail(at(now+0.1), gen, false, "trial 503")
		mustState(t, c, Open)
		if got := c.cooldown.Seconds(); got != want {
			t.Fatalf("cooldown after a failed trial = %vs, want %vs", got, want)
		}
	}
	// Passing trials close it after recoverAfter; a live failure between
	// restarts the streak.
	now = c.openUntil.Sub(t0).Seconds()
	for i := range 2 {
		gen, ok, _ := c.allow(at(now))
		if !ok {
			t.Fatalf("trial %d not admitted", i)
		}
		c.pass(at(now+0.1), at(now), gen, false)
		now += 1
	}
	if ch := c.fail(at(now), 0, true, "live 503"); ch == nil || ch.to != Open {
		t.Fatalf("a live failure in half-open: change %+v, want open", ch)
	}
	now = c.openUntil.Sub(t0).Seconds()
	for i := range 3 {
		gen, ok, _ := c.allow(at(now))
		if !ok {
			t.Fatalf("trial %d not admitted", i)
		}
		ch := c.pass(at(now+0.1), at(now), gen, false)
		if (i == 2) != (ch != nil && ch.to == Closed) {
			t.Fatalf("after pass %d: change %+v", i+1, ch)
		}
		now += 1
	}
	if c.cooldown != time.Second {
		t.Fatalf("cooldown after closing = %v, want the base 1s", c.cooldown)
	}
}

// TestCircuitProbePassNeverErasesLaterFailure: a trial probe that started
// before a live failure passes, and still counts for nothing; so does the
// late result of an older trial.
func TestCircuitProbePassNeverErasesLaterFailure(t *testing.T) {
	c := newCircuit("a", level.L1, testPolicy(), "n")
	for i := range 3 {
		c.fail(at(float64(i)*0.1), 0, true, "503")
	}
	gen, _, _ := c.allow(at(2))
	c.lastFail = at(2.5) // a failure seen while the probe ran (e.g. another node's)
	if ch := c.pass(at(3), at(2), gen, false); ch != nil || c.passes != 0 {
		t.Fatalf("a pass that started before a failure counted: %+v, passes %d", ch, c.passes)
	}
	c.gen = 0
	gen2, ok, _ := c.allow(at(4))
	if !ok {
		t.Fatal("no trial")
	}
	if c.pass(at(4.1), at(4), gen, false); c.passes != 0 {
		t.Fatal("the late result of an older trial counted")
	}
	if c.pass(at(4.2), at(4), gen2, false); c.passes != 1 {
		t.Fatalf("the current trial's pass: passes %d, want 1", c.passes)
	}
}

// TestCircuitTrialTimeout: a trial whose result never comes counts as
// failed, so the circuit never wedges half-open.
func TestCircuitTrialTimeout(t *testing.T) {
	c := newCircuit("a", level.L1, testPolicy(), "n")
	for i := range 3 {
		c.fail(at(float64(i)*0.1), 0, true, "503")
	}
	if _, ok, _ := c.allow(at(2)); !ok {
		t.Fatal("no trial")
	}
	_, ok, ch := c.allow(at(2).Add(trialTimeout))
	if ok || ch == nil || ch.to != Open {
		t.Fatalf("after the trial timeout: allowed %v, change %+v; want reopened", ok, ch)
	}
}

// TestCircuitAdopt: a newer decision of another node is taken; an older
// one or the same state is not.
func TestCircuitAdopt(t *testing.T) {
	c := newCircuit("a", level.L1, testPolicy(), "n1")
	if ch := c.adopt(BackendState{Name: "a", Circuit: Open, ChangedAt: at(5), OpenUntil: at(7), CooldownMS: 2000, Node: "n2"}); ch == nil {
		t.Fatal("a newer open was not adopted")
	}
	mustState(t, c, Open)
	if c.openUntil != at(7) || c.cooldown != 2*time.Second || c.node != "n2" {
		t.Fatalf("adopted open until %v, cooldown %v, node %q", c.openUntil, c.cooldown, c.node)
	}
	if ch := c.adopt(BackendState{Name: "a", Circuit: Closed, ChangedAt: at(4)}); ch != nil {
		t.Fatalf("an older decision was adopted: %+v", ch)
	}
	if ch := c.adopt(BackendState{Name: "a", Circuit: "bogus", ChangedAt: at(9)}); ch != nil {
		t.Fatalf("an invalid state was adopted: %+v", ch)
	}
}
