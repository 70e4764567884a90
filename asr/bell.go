package asr

import (
	"slices"
	"sync"
)

// bell hands each freed whisper queue slot to one waiting final, the one
// that has waited longest: a slot wakes one waiter, not every waiter (a
// burst of wake-ups for one slot under overload, when hundreds wait).
// Safe for concurrent use.
type bell struct {
	mu      sync.Mutex
	waiters []*waiter // FIFO. Guarded by mu.
}

// waiter is one final waiting for room; rung is buffered (1).
type waiter struct{ rung chan struct{} }

func newBell() *bell { return &bell{} }

// listen enrols a waiter. Enrol before looking for room, so that a slot
// freed in between is not missed; every waiter leaves again (leave).
func (b *bell) listen() *waiter {
	w := &waiter{rung: make(chan struct{}, 1)}
	b.mu.Lock()
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	return w
}

// leave withdraws w. A ring w got but did not act on goes to the next
// waiter, so no slot is handed to a waiter that no longer wants it.
func (b *bell) leave(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.waiters, w); i >= 0 {
		b.waiters = slices.Delete(b.waiters, i, i+1)
		return
	}
	select {
	case <-w.rung:
		b.ringLocked()
	default:
	}
}

// ring wakes the longest waiter, if any: one slot is free. It never blocks.
func (b *bell) ring() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ringLocked()
}

func (b *bell) ringLocked() {
	if len(b.waiters) == 0 {
		return
	}
	w := b.waiters[0]
	b.waiters = slices.Delete(b.waiters, 0, 1)
	w.rung <- struct{}{} // never blocks: a waiter is rung once, after it leaves the list
}

// ringAll wakes every waiter: a server closed, and they must find out.
func (b *bell) ringAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.waiters) > 0 {
		b.ringLocked()
	}
}
