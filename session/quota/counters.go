package quota

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// Counters keep what subjects use, for the limits: counts in fixed
// windows (questions a minute, audio seconds an hour, tokens a day) and
// sets of held members (live sessions). MemoryCounters counts in this
// process; redisstore.Counters shares the counts between nodes, and
// FallbackCounters keeps counting locally while Redis is away.
// Implementations are safe for concurrent use.
type Counters interface {
	// Add adds n to key's count in the window of length w that contains
	// now, unless n > 0, limit > 0 and the count would pass limit. It
	// returns the count after the call and whether n was added. Windows
	// are aligned to the Unix epoch (a 24h window is a UTC day), so every
	// node agrees on them; a negative n (a correction) is always added.
	Add(ctx context.Context, key string, n, limit int64, w time.Duration, now time.Time) (count int64, ok bool, err error)
	// Hold adds member to the set key until Release, unless limit > 0
	// and the set already holds limit other members: check and add are
	// one step, so concurrent holds (on any node) never pass the limit.
	// It reports whether member is held. On Redis a held member is a
	// lease that its process renews while it runs, so the members of a
	// process that died stop counting.
	Hold(ctx context.Context, key, member string, limit int) (bool, error)
	// Release removes member from the set key.
	Release(ctx context.Context, key, member string) error
}

// windowStart is the start of the window of length w that contains t,
// aligned to the Unix epoch.
func windowStart(t time.Time, w time.Duration) time.Time {
	ms, wms := t.UnixMilli(), w.Milliseconds()
	if wms <= 0 {
		return t
	}
	start := ms - ms%wms
	if ms < 0 && ms%wms != 0 {
		start -= wms
	}
	return time.UnixMilli(start)
}

// WindowEnd is when the window of length w that contains t ends: when a
// limit counted in it lifts.
func WindowEnd(t time.Time, w time.Duration) time.Time { return windowStart(t, w).Add(w) }

// WindowKey names key's count in the window of length w containing t: the
// key and the window's start in unix seconds. Counters keep one count per
// WindowKey.
func WindowKey(key string, w time.Duration, t time.Time) string {
	return key + ":" + strconv.FormatInt(windowStart(t, w).Unix(), 10)
}

const memorySweepEvery = time.Minute // how often MemoryCounters drops ended windows

// MemoryCounters are the single-node Counters. Ended windows are dropped
// as the clock passes them. Safe for concurrent use.
type MemoryCounters struct {
	mu        sync.Mutex
	counts    map[string]*memoryCount        // window key → count
	held      map[string]map[string]struct{} // set key → members
	nextSweep time.Time
}

type memoryCount struct {
	n   int64
	end time.Time // the window's end
}

// NewMemoryCounters returns empty counters.
func NewMemoryCounters() *MemoryCounters {
	return &MemoryCounters{counts: map[string]*memoryCount{}, held: map[string]map[string]struct{}{}}
}

// Add implements Counters.
func (m *MemoryCounters) Add(_ context.Context, key string, n, limit int64, w time.Duration, now time.Time) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	c := m.count(key, w, now)
	if n > 0 && limit > 0 && c.n+n > limit {
		return c.n, false, nil
	}
	c.n += n
	return c.n, true, nil
}

// raise lifts key's count in the window containing now to at least n:
// FallbackCounters mirrors what the shared counters said, so that a Redis
// outage continues from the last shared count.
func (m *MemoryCounters) raise(key string, w time.Duration, now time.Time, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.count(key, w, now); c.n < n {
		c.n = n
	}
}

// count returns key's count in the window containing now. The caller
// holds mu.
func (m *MemoryCounters) count(key string, w time.Duration, now time.Time) *memoryCount {
	k := WindowKey(key, w, now)
	c := m.counts[k]
	if c == nil {
		c = &memoryCount{end: WindowEnd(now, w)}
		m.counts[k] = c
	}
	return c
}

// sweep drops the counts of ended windows, once per memorySweepEvery of
// the callers' clock. The caller holds mu.
func (m *MemoryCounters) sweep(now time.Time) {
	if now.Before(m.nextSweep) {
		return
	}
	m.nextSweep = now.Add(memorySweepEvery)
	for k, c := range m.counts {
		if !now.Before(c.end) {
			delete(m.counts, k)
		}
	}
}

// Hold implements Counters.
func (m *MemoryCounters) Hold(_ context.Context, key, member string, limit int) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	set := m.held[key]
	if _, ok := set[member]; !ok && limit > 0 && len(set) >= limit {
		return false, nil
	}
	if set == nil {
		set = map[string]struct{}{}
		m.held[key] = set
	}
	set[member] = struct{}{}
	return true, nil
}

// Release implements Counters.
func (m *MemoryCounters) Release(_ context.Context, key, member string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.held[key], member)
	if len(m.held[key]) == 0 {
		delete(m.held, key)
	}
	return nil
}
