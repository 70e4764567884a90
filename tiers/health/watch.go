package health

import "context"

// changeWatcher is a Store that tells when another node may have
// changed the shared state (RedisStore and FallbackStore over it).
// Watch calls changed for each change until ctx is done, then returns.
type changeWatcher interface {
	Watch(ctx context.Context, changed func())
}

// watch refreshes this node's cache on every change that the store
// reports, so a level another node takes down (or back up) reaches this
// node's sessions at once rather than at its next probe round (which
// refreshes as well). Owned by Run; returns when ctx is done.
func (h *Center) watch(ctx context.Context) {
	w, ok := h.store.(changeWatcher)
	if !ok {
		return
	}
	w.Watch(ctx, func() { h.refresh(ctx) })
}
