package session

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestWriteBoundServesASecond: the writes of one writeRenew share one
// context, which gives each of them at least writeTimeout less
// writeRenew; the next one after it gets a fresh context, the old one is
// released, and stop releases the last.
func TestWriteBoundServesASecond(t *testing.T) {
	synctest.Test(t, writeBoundServesASecond)
}

func writeBoundServesASecond(t *testing.T) {
	var w writeBound
	t0 := time.Now() // the bubble's clock: the deadlines are real ones
	first := w.get(t.Context(), t0)
	late := t0.Add(writeRenew - time.Millisecond)
	if got := w.get(t.Context(), late); got != first {
		t.Fatal("a write within writeRenew got a context of its own")
	}
	if d, _ := first.Deadline(); d.Sub(late) < writeTimeout-writeRenew {
		t.Errorf("the last write of a context has %v left, want at least %v", d.Sub(late), writeTimeout-writeRenew)
	}
	next := w.get(t.Context(), t0.Add(writeRenew))
	if next == first {
		t.Fatal("a write after writeRenew kept the old context")
	}
	if first.Err() != context.Canceled {
		t.Errorf("the old context: %v, want it released", first.Err())
	}
	w.stop()
	if next.Err() != context.Canceled || w.ctx != nil {
		t.Errorf("after stop: %v, want the context released", next.Err())
	}
	w.stop() // twice is fine
}
