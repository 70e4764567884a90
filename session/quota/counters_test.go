package quota_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/session/quota/quotatest"
	"github.com/poise-dev/poise/tiers/health/healthtest"
	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/rs/zerolog"
)

// TestCountersConformance runs the same window and hold rules against
// the implementations of this package (redisstore's tests run them
// against Redis).
func TestCountersConformance(t *testing.T) {
	t.Parallel()
	impls := map[string]func(t *testing.T, now func() time.Time) quota.Counters{
		"memory": func(*testing.T, func() time.Time) quota.Counters { return quota.NewMemoryCounters() },
		"fallback over memory": func(_ *testing.T, now func() time.Time) quota.Counters {
			return quota.NewFallbackCounters(quota.NewMemoryCounters(), 0, now, zerolog.Nop())
		},
	}
	for name, mk := range impls {
		t.Run(name, func(t *testing.T) { quotatest.Conformance(t, mk) })
	}
}

// TestCounterHoldsConcurrent: holds racing for the last places never
// pass the limit.
func TestCounterHoldsConcurrent(t *testing.T) {
	t.Parallel()
	c := quota.NewMemoryCounters()
	var held atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			if ok, _ := c.Hold(t.Context(), "sessions:alice", strconv.Itoa(i), 3); ok {
				held.Add(1)
			}
		})
	}
	wg.Wait()
	if n := held.Load(); n != 3 {
		t.Fatalf("%d of 50 racing holds got in, want 3", n)
	}
}

// switchCounters forwards to MemoryCounters, or fails every call while
// its switch is down, counting the calls.
type switchCounters struct {
	*quota.MemoryCounters
	redistest.Switch
}

func (s *switchCounters) Add(ctx context.Context, key string, n, limit int64, w time.Duration, now time.Time) (int64, bool, error) {
	if err := s.Call(); err != nil {
		return 0, false, err
	}
	return s.MemoryCounters.Add(ctx, key, n, limit, w, now)
}

func (s *switchCounters) Hold(ctx context.Context, key, member string, limit int) (bool, error) {
	if err := s.Call(); err != nil {
		return false, err
	}
	return s.MemoryCounters.Hold(ctx, key, member, limit)
}

// TestFallbackCountersWhileSharedAway: while the shared counters fail,
// counting goes on locally from the last shared count, the shared ones
// are asked once per cooldown, and they are used again after it.
func TestFallbackCountersWhileSharedAway(t *testing.T) {
	t.Parallel()
	shared := &switchCounters{MemoryCounters: quota.NewMemoryCounters()}
	clock := healthtest.NewClockAt(quotatest.MidMinute)
	f := quota.NewFallbackCounters(shared, 5*time.Second, clock.Now, zerolog.Nop())
	ctx := t.Context()
	add := func() (int64, bool) {
		t.Helper()
		n, ok, err := f.Add(ctx, "q:alice", 1, 4, time.Hour, clock.Now())
		if err != nil {
			t.Fatalf("fallback counters returned %v", err)
		}
		return n, ok
	}
	add()
	add()
	shared.Set(true)
	before := shared.Calls()
	if n, ok := add(); !ok || n != 3 {
		t.Fatalf("first count while away: %d %v; want 3, continuing from the shared 2", n, ok)
	}
	if n, ok := add(); !ok || n != 4 {
		t.Fatalf("second count while away: %d %v", n, ok)
	}
	if n, ok := add(); ok || n != 4 {
		t.Fatalf("over the limit while away: %d %v; want refused", n, ok)
	}
	if got := shared.Calls() - before; got != 1 {
		t.Fatalf("the failing counters were asked %d times within the cooldown, want 1", got)
	}
	if ok, err := f.Hold(ctx, "sessions:alice", "s1", 1); err != nil || !ok {
		t.Fatalf("hold while away: %v %v; want held on this node", ok, err)
	}
	if ok, _ := f.Hold(ctx, "sessions:alice", "s2", 1); ok {
		t.Fatal("this node's hold passed the limit while away")
	}
	shared.Set(false)
	clock.Advance(5 * time.Second)
	if n, ok := add(); !ok || n != 3 {
		t.Fatalf("after the cooldown: %d %v; want the shared count (2) plus one", n, ok)
	}
}
