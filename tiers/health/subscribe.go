package health

import (
	"sync"

	"github.com/poise-dev/poise/tiers/level"
)

// subscriber is one Subscribe channel.
type subscriber struct {
	ch chan level.Signal // closed by the cancel func, under Health.mu
}

// Subscribe returns a channel of level signals and a cancel func that
// unsubscribes and closes the channel (idempotent). Fan-out never blocks
// the health center: when a subscriber's buffer (buf, at least 1) is full,
// the signal is dropped for that subscriber. A subscriber therefore treats
// a signal as a hint and re-checks Supported() (and Down) for the truth,
// and should also re-check after any pause.
func (h *Center) Subscribe(buf int) (<-chan level.Signal, func()) {
	s := &subscriber{ch: make(chan level.Signal, max(buf, 1))}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.subs, s)
			close(s.ch)
		})
	}
}

// broadcastLocked sends sig to every subscriber without blocking. The
// caller holds mu.
func (h *Center) broadcastLocked(sig level.Signal) {
	for s := range h.subs {
		select {
		case s.ch <- sig:
		default:
			h.log.Debug().Str("signal", sig.Event).Msg("tiers: health: slow subscriber, signal dropped")
		}
	}
}
