package health

import (
	"fmt"
	"time"

	"github.com/poise-dev/poise/tiers/level"
)

// Circuit is a circuit's state; the names are those of the circuit field
// of poise:health:{backend} and of poise_circuit_state's state label.
type Circuit string

// The three circuit states.
const (
	Closed   Circuit = "closed"    // live traffic flows; failures are counted
	Open     Circuit = "open"      // no live traffic until the cooldown ends
	HalfOpen Circuit = "half_open" // one trial at a time; recover_after passes close it
)

// circuits lists the states in the order of the gauge's labels.
var circuits = []Circuit{Closed, Open, HalfOpen}

// trialTimeout bounds how long a trial may stay in flight: a trial whose
// result never comes (a dropped report, a gateway request that ended
// without one) counts as failed after it, so the circuit never wedges.
const trialTimeout = 30 * time.Second

// policy is a circuit's thresholds, from Config and the backend's level.
type policy struct {
	failAfter    int           // failures within window (or in a row) that open the circuit
	window       time.Duration // for failAfter
	recoverAfter int           // consecutive passing trials that close it
	cooldown     time.Duration // first wait before a trial; doubles per failed trial
	maxCooldown  time.Duration // cap of that growth
}

// circuit is one backend's breaker: closed → open after failAfter
// failures within window (or in a row); open → half-open when the cooldown
// is over and a trial is admitted; half-open → closed after recoverAfter
// consecutive passing trials, or → open again on any failure, with the
// cooldown doubled up to maxCooldown. One trial is in flight at a time;
// a trial is identified by its generation, so a late result of an older
// trial (or of a probe that started before a later live failure) changes
// nothing.
//
// Not safe for concurrent use: the Center guards it with its mu. Its
// methods do no I/O and return what changed, for the caller to log and
// publish outside the lock.
type circuit struct {
	name  string
	level level.Level
	pol   policy
	self  string // this node's name, recorded with its decisions

	state      Circuit
	fails      []time.Time // closed: failure times within the window
	streak     int         // consecutive failures
	passes     int         // half-open: consecutive passing trials
	cooldown   time.Duration
	openUntil  time.Time // open: no trial before this
	gen        uint64    // generation of the trial in flight; 0 when none
	nextGen    uint64    // last generation handed out
	trialSince time.Time // when the trial in flight started
	lastTrial  time.Time // when the last trial started
	lastFail   time.Time // the newest failure seen, live or probe
	changedAt  time.Time // the last change between closed and not closed: the decision the nodes share
	reason     string    // why the last state change happened
	node       string    // the node that made that decision
}

// change is a state change of one circuit, for the log and the metrics.
type change struct {
	name     string
	from, to Circuit
	reason   string
}

func newCircuit(name string, l level.Level, pol policy, node string) *circuit {
	return &circuit{name: name, level: l, pol: pol, self: node, node: node, state: Closed, cooldown: pol.cooldown}
}

// set moves the circuit to s at now and returns the change.
func (c *circuit) set(s Circuit, now time.Time, why string) *change {
	ch := &change{name: c.name, from: c.state, to: s, reason: why}
	if (c.state == Closed) != (s == Closed) {
		c.changedAt, c.node = now, c.self // a decision the nodes share
	}
	c.state, c.reason = s, why
	c.gen, c.passes = 0, 0
	switch s {
	case Closed:
		c.fails, c.streak, c.cooldown = nil, 0, c.pol.cooldown
	case Open:
		c.openUntil = now.Add(c.cooldown)
	}
	return ch
}

// allow reports whether a request (a probe or, for the gateway, a live
// request) may go to the backend now. Closed: yes, with generation 0.
// Open: no until the cooldown ends; then the circuit turns half-open and
// admits one trial. Half-open: one trial at a time. A trial in flight for
// longer than trialTimeout counts as failed.
func (c *circuit) allow(now time.Time) (gen uint64, ok bool, ch *change) {
	if c.gen != 0 && now.Sub(c.trialSince) >= trialTimeout {
		ch = c.trialFailed(now, "trial gave no result within "+trialTimeout.String())
	}
	switch c.state {
	case Closed:
		return 0, true, ch
	case Open:
		if now.Before(c.openUntil) {
			return 0, false, ch
		}
		ch = c.set(HalfOpen, now, fmt.Sprintf("cooldown of %v over", c.cooldown))
	}
	if c.gen != 0 {
		return 0, false, ch
	}
	c.nextGen++
	c.gen, c.trialSince, c.lastTrial = c.nextGen, now, now
	return c.gen, true, ch
}

// trialFailed reopens a half-open circuit with a longer cooldown.
func (c *circuit) trialFailed(now time.Time, why string) *change {
	c.cooldown = min(2*c.cooldown, c.pol.maxCooldown)
	return c.set(Open, now, why)
}

// fail records a failure at now. gen is the trial's generation (0 for a
// live failure outside a trial, or a probe of a closed circuit). Closed:
// the circuit opens at failAfter failures within the window or in a row.
// Half-open: a live failure, or the failure of the trial in flight,
// reopens it. Open: nothing more to learn.
func (c *circuit) fail(now time.Time, gen uint64, live bool, why string) *change {
	if now.After(c.lastFail) {
		c.lastFail = now
	}
	switch c.state {
	case Closed:
		c.streak++
		c.fails = append(c.fails, now)
		cut := 0
		for cut < len(c.fails) && now.Sub(c.fails[cut]) > c.pol.window {
			cut++
		}
		c.fails = c.fails[cut:]
		if n := max(len(c.fails), c.streak); n >= c.pol.failAfter {
			return c.set(Open, now, fmt.Sprintf("%d failures within %v, last: %s", n, c.pol.window, why))
		}
	case HalfOpen:
		if live || (gen != 0 && gen == c.gen) {
			kind := "trial"
			if live && gen != c.gen {
				kind = "live request"
			}
			return c.trialFailed(now, kind+" failed: "+why)
		}
	}
	return nil
}

// pass records a success at now of a request that started at started.
// Closed: a live success clears the failure count (failures spread over
// hours never open the circuit); a probe pass does not, so a list that
// answers never hides failing completions. Half-open: the pass of the
// trial in flight (or a live success) extends the streak, unless a
// failure was seen after the request started; recoverAfter passes close
// the circuit. Open: nothing.
func (c *circuit) pass(now, started time.Time, gen uint64, live bool) *change {
	switch c.state {
	case Closed:
		if live {
			c.fails, c.streak = nil, 0
		}
	case HalfOpen:
		if !live && (gen == 0 || gen != c.gen) || c.lastFail.After(started) {
			return nil
		}
		c.gen = 0
		c.passes++
		if c.passes >= c.pol.recoverAfter {
			return c.set(Closed, now, fmt.Sprintf("%d consecutive passing trials", c.passes))
		}
	}
	return nil
}

// nextTrial is when the health goroutine may start a probe trial: open,
// when the cooldown ends; half-open with no trial in flight, after the
// base cooldown since the last one (so recover_after passes take a few
// seconds, not recover_after probe intervals); otherwise never (zero).
func (c *circuit) nextTrial() time.Time {
	switch {
	case c.state == Open:
		return c.openUntil
	case c.state == HalfOpen && c.gen == 0:
		return c.lastTrial.Add(c.pol.cooldown)
	case c.state == HalfOpen:
		return c.trialSince.Add(trialTimeout)
	}
	return time.Time{}
}

// record is the circuit's shared record.
func (c *circuit) record(now time.Time) BackendState {
	st := StateUp
	if c.state != Closed {
		st = StateDown
	}
	return BackendState{Name: c.name, State: st, Circuit: c.state, ConsecutivePass: c.passes,
		ConsecutiveFail: c.streak, UpdatedAt: now, ChangedAt: c.changedAt, OpenUntil: c.openUntil,
		CooldownMS: c.cooldown.Milliseconds(), LastTrial: c.lastTrial, Reason: c.reason, Node: c.node}
}

// adopt takes another node's decision to open or close the circuit when
// it is newer than this circuit's last change and differs from it; a
// trial in flight here is forgotten (its result no longer matches).
// Another node's half-open is not taken: trials are each node's own, so a
// node whose path to the backend is broken cannot fail the trials of a
// node that reaches it (it can only reopen the circuit by its own
// failures, at the rate its failure threshold allows).
func (c *circuit) adopt(r BackendState) *change {
	if !r.ChangedAt.After(c.changedAt) || r.Circuit == c.state || (r.Circuit != Open && r.Circuit != Closed) {
		return nil
	}
	ch := &change{name: c.name, from: c.state, to: r.Circuit, reason: "node " + r.Node + ": " + r.Reason}
	c.state, c.changedAt, c.reason, c.node = r.Circuit, r.ChangedAt, r.Reason, r.Node
	c.gen, c.passes, c.openUntil = 0, r.ConsecutivePass, r.OpenUntil
	if r.CooldownMS > 0 {
		c.cooldown = min(time.Duration(r.CooldownMS)*time.Millisecond, c.pol.maxCooldown)
	}
	if r.LastTrial.After(c.lastTrial) {
		c.lastTrial = r.LastTrial
	}
	if c.state == Closed {
		c.fails, c.streak, c.cooldown = nil, 0, c.pol.cooldown
	}
	return ch
}
