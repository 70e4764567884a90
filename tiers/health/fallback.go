package health

import (
	"context"
	"time"

	"github.com/rs/zerolog"
)

// FallbackStore is a Store that shares state through a primary store
// (Redis) and falls back to a local MemoryStore while the primary fails,
// so that this node keeps judging its backends through a Redis outage.
//
// The local store mirrors every result the primary returns, so a fallback
// continues from the last shared state rather than from "all up". After a
// primary failure the local store alone answers for a cooldown, so a dead
// or hanging Redis costs at most one timeout per cooldown. When the
// primary answers again, the states this node decided meanwhile are
// written back to it when they are newer than the shared ones. Safe for
// concurrent use.
type FallbackStore struct {
	primary Store
	local   *MemoryStore
	outage  *Outage
}

// NewFallbackStore returns a store over primary; cooldown 0 means 2s, now
// nil means time.Now.
func NewFallbackStore(primary Store, cooldown time.Duration, now func() time.Time, log zerolog.Logger) *FallbackStore {
	return &FallbackStore{primary: primary, local: NewMemoryStore(), outage: NewOutage(cooldown, now, log,
		"tiers: health: shared store failed; using this node's local state",
		"tiers: health: shared store answers again")}
}

// usePrimary reports whether to try the primary now. After an outage it
// first writes this node's newer decisions back; if that fails, the
// outage goes on.
func (f *FallbackStore) usePrimary(ctx context.Context) bool {
	cooling, degraded := f.outage.State()
	if cooling {
		return false
	}
	if !degraded {
		return true
	}
	if err := f.resync(ctx); err != nil {
		f.outage.Failed(err)
		return false
	}
	f.outage.Answered()
	return true
}

// resync writes the local states that differ from the primary's and were
// decided later (a node that kept reaching the primary meanwhile wins).
func (f *FallbackStore) resync(ctx context.Context) error {
	local, _ := f.local.States(ctx)
	shared, err := f.primary.States(ctx)
	if err != nil {
		return err
	}
	byName := map[string]BackendState{}
	for _, st := range shared {
		byName[st.Name] = st
	}
	for _, st := range local {
		sh, ok := byName[st.Name]
		if ok && (sh.State == st.State || !st.UpdatedAt.After(sh.UpdatedAt)) {
			continue
		}
		if !ok && st.State == StateUp {
			continue // unknown names read as up anyway
		}
		if _, _, err := f.primary.SetState(ctx, st.Name, st.State, st.UpdatedAt); err != nil {
			return err
		}
	}
	return nil
}

// mirror copies a primary result into the local store.
func (f *FallbackStore) mirror(st BackendState) {
	f.local.mu.Lock()
	defer f.local.mu.Unlock()
	r := f.local.record(st.Name)
	r.State, r.ConsecutivePass, r.ConsecutiveFail, r.UpdatedAt = st.State, st.ConsecutivePass, st.ConsecutiveFail, st.UpdatedAt
}

// record runs op on the primary (mirroring its result) unless it is
// cooling down or fails, else on the local store.
func (f *FallbackStore) record(ctx context.Context, op func(Store) (BackendState, error)) (BackendState, error) {
	if f.usePrimary(ctx) {
		st, err := op(f.primary)
		if err == nil {
			f.mirror(st)
			return st, nil
		}
		f.outage.Failed(err)
	}
	return op(f.local)
}

// Probe implements Store.
func (f *FallbackStore) Probe(ctx context.Context, name string, round int64, pass bool, at time.Time) (BackendState, error) {
	return f.record(ctx, func(s Store) (BackendState, error) { return s.Probe(ctx, name, round, pass, at) })
}

// Fail implements Store.
func (f *FallbackStore) Fail(ctx context.Context, name string, at time.Time) (BackendState, error) {
	return f.record(ctx, func(s Store) (BackendState, error) { return s.Fail(ctx, name, at) })
}

// SetState implements Store.
func (f *FallbackStore) SetState(ctx context.Context, name string, st State, at time.Time) (BackendState, bool, error) {
	var changed bool
	rec, err := f.record(ctx, func(s Store) (BackendState, error) {
		r, c, err := s.SetState(ctx, name, st, at)
		changed = c
		return r, err
	})
	return rec, changed, err
}

// AddEvent implements Store. Events are not mirrored: while the
// primary fails, the local window counts this node's events only.
func (f *FallbackStore) AddEvent(ctx context.Context, key, id string, at time.Time, window time.Duration) (int, error) {
	if f.usePrimary(ctx) {
		n, err := f.primary.AddEvent(ctx, key, id, at, window)
		if err == nil {
			return n, nil
		}
		f.outage.Failed(err)
	}
	return f.local.AddEvent(ctx, key, id, at, window)
}

// ClearEvents implements Store on both stores.
func (f *FallbackStore) ClearEvents(ctx context.Context, key string) error {
	f.local.ClearEvents(ctx, key)
	if f.usePrimary(ctx) {
		if err := f.primary.ClearEvents(ctx, key); err != nil {
			f.outage.Failed(err)
		}
	}
	return nil
}

// States implements Store.
func (f *FallbackStore) States(ctx context.Context) ([]BackendState, error) {
	if f.usePrimary(ctx) {
		states, err := f.primary.States(ctx)
		if err == nil {
			for _, st := range states {
				f.mirror(st)
			}
			return states, nil
		}
		f.outage.Failed(err)
	}
	return f.local.States(ctx)
}

// Watch forwards to the primary's Watch, if it has one; it returns when
// ctx is done.
func (f *FallbackStore) Watch(ctx context.Context, changed func()) {
	if w, ok := f.primary.(changeWatcher); ok {
		w.Watch(ctx, changed)
	}
}
