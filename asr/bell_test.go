package asr

import "testing"

// rung reports whether w has been rung, and takes the ring.
func rung(w *waiter) bool {
	select {
	case <-w.rung:
		return true
	default:
		return false
	}
}

// TestBellHandsEachSlotToOneWaiter: a ring wakes the longest waiter only;
// a waiter that leaves with a ring it did not use passes it on; ringAll
// wakes everyone.
func TestBellHandsEachSlotToOneWaiter(t *testing.T) {
	t.Parallel()
	b := newBell()
	b.ring() // nobody waits: nothing is kept
	a, c, d := b.listen(), b.listen(), b.listen()
	b.ring()
	if !rung(a) || rung(c) || rung(d) {
		t.Fatal("first ring: want only the first waiter woken")
	}
	b.leave(a) // took its ring: leaving passes nothing on
	if rung(c) || rung(d) {
		t.Fatal("a waiter that used its ring passed one on")
	}
	b.ring()
	b.leave(c) // rung but gave up before acting: the ring goes to d
	if !rung(d) {
		t.Fatal("a ring left unused was not passed to the next waiter")
	}
	b.leave(d)
	e, f := b.listen(), b.listen()
	b.leave(e) // never rung: leaving wakes nobody
	if rung(f) {
		t.Fatal("a waiter that left unrung woke another")
	}
	g := b.listen()
	b.ringAll()
	if !rung(f) || !rung(g) {
		t.Fatal("ringAll: want every waiter woken")
	}
	if len(b.waiters) != 0 {
		t.Fatalf("%d waiters left after ringAll", len(b.waiters))
	}
}
