package quota

import (
	"context"
	"time"

	"github.com/poise-dev/poise/tiers/health"
	"github.com/rs/zerolog"
)

// FallbackCounters are Counters shared through a primary (redisstore.Counters)
// that keep counting in this process while the primary fails, so that a
// limit check never waits on a dead or hanging Redis for more than one
// timeout per cooldown, and a question is never refused because Redis is
// away.
//
// Every count the primary returns is mirrored locally, so an outage
// continues from the last shared count; what is counted during the outage
// stays on this node. Holds and releases go to both, so the local set
// answers during an outage and the primary's renewals restore the shared
// one after it. Safe for concurrent use.
type FallbackCounters struct {
	primary Counters
	local   *MemoryCounters
	outage  *health.Outage
}

// NewFallbackCounters returns counters over primary; cooldown 0 means 2s,
// now nil means time.Now (the clock of the cooldown only).
func NewFallbackCounters(primary Counters, cooldown time.Duration, now func() time.Time, log zerolog.Logger) *FallbackCounters {
	return &FallbackCounters{primary: primary, local: NewMemoryCounters(), outage: health.NewOutage(cooldown, now, log,
		"quota: shared counters failed; counting on this node",
		"quota: shared counters answer again")}
}

// usePrimary reports whether the primary is worth asking now.
func (f *FallbackCounters) usePrimary() bool {
	cooling, _ := f.outage.State()
	return !cooling
}

// Add implements Counters.
func (f *FallbackCounters) Add(ctx context.Context, key string, n, limit int64, w time.Duration, now time.Time) (int64, bool, error) {
	if f.usePrimary() {
		count, ok, err := f.primary.Add(ctx, key, n, limit, w, now)
		if err == nil {
			f.outage.Answered()
			f.local.raise(key, w, now, count)
			return count, ok, nil
		}
		f.outage.Failed(err)
	}
	return f.local.Add(ctx, key, n, limit, w, now)
}

// Hold implements Counters: with a limit, the primary decides and a
// member it holds is held locally too; while the primary fails, the local
// set decides.
func (f *FallbackCounters) Hold(ctx context.Context, key, member string, limit int) (bool, error) {
	if limit <= 0 {
		// An unconditional hold (the recorder's, off any hello's path)
		// goes to both, like Release, even while cooling down: the
		// primary keeps the member for its renewals after an outage.
		if _, err := f.primary.Hold(ctx, key, member, 0); err != nil {
			f.outage.Failed(err)
		}
		return f.local.Hold(ctx, key, member, 0)
	}
	if f.usePrimary() {
		ok, err := f.primary.Hold(ctx, key, member, limit)
		if err == nil {
			f.outage.Answered()
			if ok {
				return f.local.Hold(ctx, key, member, 0)
			}
			return false, nil
		}
		f.outage.Failed(err)
	}
	return f.local.Hold(ctx, key, member, limit)
}

// Release implements Counters on both; it fails only if the local set does.
func (f *FallbackCounters) Release(ctx context.Context, key, member string) error {
	if err := f.primary.Release(ctx, key, member); err != nil {
		f.outage.Failed(err)
	}
	return f.local.Release(ctx, key, member)
}
