package health

import (
	"context"
	"time"
)

// Sync bounds: how often the sync goroutine merges this node's circuits
// with the shared ones (half the probe interval, within these bounds),
// so that two nodes agree within one interval even without the store's
// change notices.
const (
	minSyncEvery = 50 * time.Millisecond
	maxSyncEvery = 5 * time.Second
)

// syncSoon asks the sync goroutine for a merge; it never blocks.
func (h *Center) syncSoon() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// syncLoop merges with the store on every change (announce, Watch) and
// every syncEvery, until ctx is done. Owned by Run. Nothing waits for it:
// while the store fails, this node's circuits go on alone, and the next
// merge that succeeds shares them again.
func (h *Center) syncLoop(ctx context.Context) {
	every := min(max(ms(h.cfg.IntervalMS)/2, minSyncEvery), maxSyncEvery)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		h.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-h.kick:
		case <-t.C:
		}
	}
}

// sync pushes every circuit's record (the store keeps the newer
// decision), adopts what other nodes decided later, and reads the
// records this node has not pushed. After a store failure it waits out
// the Outage cooldown, so a hung store costs one timeout per cooldown.
func (h *Center) sync(ctx context.Context) {
	if cooling, _ := h.outage.State(); cooling {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	for _, rec := range h.Backends() {
		merged, err := h.store.Merge(sctx, rec)
		if err != nil {
			h.storeFailed(ctx, err)
			return
		}
		h.adopt(merged)
	}
	states, err := h.store.States(sctx)
	if err != nil {
		h.storeFailed(ctx, err)
		return
	}
	for _, st := range states {
		h.adopt(st)
	}
	h.outage.Answered()
}

func (h *Center) storeFailed(ctx context.Context, err error) {
	if ctx.Err() == nil {
		h.outage.Failed(err)
	}
}

// adopt applies a shared record that another node decided later.
func (h *Center) adopt(rec BackendState) {
	h.update(rec.Name, func(c *circuit) *change { return c.adopt(rec) })
}
