package session

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// testClock is a settable clock for limit windows and leases.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock(t time.Time) *testClock { return &testClock{t: t} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// midMinute is 30 s into a minute, an hour and a UTC day.
var midMinute = time.Date(2026, 11, 29, 10, 20, 30, 0, time.UTC)

// counterImpls are the Counters implementations that must behave alike.
func counterImpls() map[string]func(t *testing.T, now func() time.Time) Counters {
	return map[string]func(t *testing.T, now func() time.Time) Counters{
		"memory": func(*testing.T, func() time.Time) Counters { return NewMemoryCounters() },
		"redis": func(t *testing.T, now func() time.Time) Counters {
			return NewRedisCounters(redistest.Client(t, redistest.DBSession), RedisCountersConfig{Now: now})
		},
		"fallback over redis": func(t *testing.T, now func() time.Time) Counters {
			rc := NewRedisCounters(redistest.Client(t, redistest.DBSession), RedisCountersConfig{Now: now})
			return NewFallbackCounters(rc, 0, now, zerolog.Nop())
		},
	}
}

// TestCountersConformance runs the same window and hold rules against
// every implementation.
func TestCountersConformance(t *testing.T) {
	for name, mk := range counterImpls() {
		t.Run(name, func(t *testing.T) {
			t.Run("windows", func(t *testing.T) {
				clock := newTestClock(midMinute)
				testCounterWindows(t, mk(t, clock.Now), clock)
			})
			t.Run("holds", func(t *testing.T) {
				clock := newTestClock(midMinute)
				testCounterHolds(t, mk(t, clock.Now))
			})
		})
	}
}

func testCounterWindows(t *testing.T, c Counters, clock *testClock) {
	ctx := t.Context()
	add := func(key string, n, limit int64, w time.Duration) (int64, bool) {
		t.Helper()
		count, ok, err := c.Add(ctx, key, n, limit, w, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return count, ok
	}
	for i := int64(1); i <= 3; i++ {
		if n, ok := add("q:alice", 1, 3, time.Minute); !ok || n != i {
			t.Fatalf("add %d: count %d ok %v; want %d within the limit", i, n, ok, i)
		}
	}
	if n, ok := add("q:alice", 1, 3, time.Minute); ok || n != 3 {
		t.Fatalf("over the limit: count %d ok %v; want refused at 3", n, ok)
	}
	if n, ok := add("q:bob", 1, 3, time.Minute); !ok || n != 1 {
		t.Fatalf("another key: count %d ok %v; want its own count", n, ok)
	}
	if n, ok := add("q:alice", 0, 3, time.Minute); !ok || n != 3 {
		t.Fatalf("a read (n 0): count %d ok %v", n, ok)
	}
	// A reservation corrected downwards, and a limit of none.
	if n, ok := add("t:alice:a", 600, 700, 24*time.Hour); !ok || n != 600 {
		t.Fatalf("reserve: %d %v", n, ok)
	}
	if n, ok := add("t:alice:a", 200, 700, 24*time.Hour); ok || n != 600 {
		t.Fatalf("a second reservation that does not fit: %d %v", n, ok)
	}
	if n, ok := add("t:alice:a", -450, 0, 24*time.Hour); !ok || n != 150 {
		t.Fatalf("correction: %d %v; want 150", n, ok)
	}
	if n, ok := add("t:alice:a", 500, 700, 24*time.Hour); !ok || n != 650 {
		t.Fatalf("after the correction: %d %v; want room again", n, ok)
	}
	// The next minute starts from zero; the day's count does not.
	clock.Advance(30 * time.Second)
	if n, ok := add("q:alice", 1, 3, time.Minute); !ok || n != 1 {
		t.Fatalf("next minute: count %d ok %v; want a fresh window", n, ok)
	}
	if n, ok := add("t:alice:a", 0, 0, 24*time.Hour); n != 650 || !ok {
		t.Fatalf("the day's count after a minute: %d", n)
	}
	clock.Advance(14 * time.Hour) // past midnight UTC
	if n, _ := add("t:alice:a", 0, 0, 24*time.Hour); n != 0 {
		t.Fatalf("the next UTC day: count %d, want 0", n)
	}
}

func testCounterHolds(t *testing.T, c Counters) {
	ctx := t.Context()
	held := func(key string) int {
		t.Helper()
		n, err := c.Held(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, m := range []string{"s1", "s2", "s1"} {
		if err := c.Hold(ctx, "sessions:alice", m); err != nil {
			t.Fatal(err)
		}
	}
	if n := held("sessions:alice"); n != 2 {
		t.Fatalf("held %d, want 2 (s1 twice counts once)", n)
	}
	if n := held("sessions:bob"); n != 0 {
		t.Fatalf("bob holds %d", n)
	}
	if err := c.Release(ctx, "sessions:alice", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, "sessions:alice", "unknown"); err != nil {
		t.Fatal(err)
	}
	if n := held("sessions:alice"); n != 1 {
		t.Fatalf("after a release: held %d, want 1", n)
	}
}

func TestWindowStart(t *testing.T) {
	cases := []struct {
		at   time.Time
		w    time.Duration
		want time.Time
	}{
		{midMinute, time.Minute, time.Date(2026, 11, 29, 10, 20, 0, 0, time.UTC)},
		{midMinute, time.Hour, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)},
		{midMinute, 24 * time.Hour, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{midMinute.In(time.FixedZone("UTC+8", 8*3600)), 24 * time.Hour, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{time.UnixMilli(-1), time.Minute, time.UnixMilli(-60000)},
	}
	for _, tc := range cases {
		if got := windowStart(tc.at, tc.w); !got.Equal(tc.want) {
			t.Errorf("windowStart(%v, %v) = %v, want %v", tc.at, tc.w, got.UTC(), tc.want)
		}
	}
}

// TestRedisLeasesOfADeadNode: a held session counts on every node while
// its node renews the lease, and stops counting one lease after its node
// died (stopped renewing).
func TestRedisLeasesOfADeadNode(t *testing.T) {
	url := redistest.URL(t, redistest.DBSession)
	clock := newTestClock(midMinute)
	cfg := RedisCountersConfig{Lease: 30 * time.Second, Now: clock.Now}
	alive := NewRedisCounters(redistest.Dial(t, url), cfg)
	dead := NewRedisCounters(redistest.Dial(t, url), cfg)
	ctx := t.Context()
	if err := alive.Hold(ctx, "sessions:alice", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := dead.Hold(ctx, "sessions:alice", "s2"); err != nil {
		t.Fatal(err)
	}
	if n, _ := alive.Held(ctx, "sessions:alice"); n != 2 {
		t.Fatalf("held %d, want 2", n)
	}
	for range 3 { // one lease and a bit: only the live node renews
		clock.Advance(cfg.Lease / 3)
		if err := alive.renew(ctx); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Second)
	if n, _ := alive.Held(ctx, "sessions:alice"); n != 1 {
		t.Fatalf("held %d a lease after a node stopped renewing, want 1", n)
	}
}

// switchCounters forwards to MemoryCounters, or fails every call while
// its switch is down, counting the calls.
type switchCounters struct {
	*MemoryCounters
	redistest.Switch
}

func (s *switchCounters) Add(ctx context.Context, key string, n, limit int64, w time.Duration, now time.Time) (int64, bool, error) {
	if err := s.Call(); err != nil {
		return 0, false, err
	}
	return s.MemoryCounters.Add(ctx, key, n, limit, w, now)
}

func (s *switchCounters) Held(ctx context.Context, key string) (int, error) {
	if err := s.Call(); err != nil {
		return 0, err
	}
	return s.MemoryCounters.Held(ctx, key)
}

// TestFallbackCountersWhileSharedAway: while the shared counters fail,
// counting goes on locally from the last shared count, the shared ones
// are asked once per cooldown, and they are used again after it.
func TestFallbackCountersWhileSharedAway(t *testing.T) {
	shared := &switchCounters{MemoryCounters: NewMemoryCounters()}
	clock := newTestClock(midMinute)
	f := NewFallbackCounters(shared, 5*time.Second, clock.Now, zerolog.Nop())
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
	if n, err := f.Held(ctx, "sessions:alice"); err != nil || n != 0 {
		t.Fatalf("held while away: %d %v", n, err)
	}
	shared.Set(false)
	clock.Advance(5 * time.Second)
	if n, ok := add(); !ok || n != 3 {
		t.Fatalf("after the cooldown: %d %v; want the shared count (2) plus one", n, ok)
	}
}

// TestRedisCountersUnreachable: with Redis refusing connections, every
// call fails fast with an error (FallbackCounters then counts locally).
func TestRedisCountersUnreachable(t *testing.T) {
	// The production client's fast-fail options (cmd/poise/redis.go).
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1,
		ContextTimeoutEnabled: true})
	defer rdb.Close()
	c := NewRedisCounters(rdb, RedisCountersConfig{})
	ctx := t.Context()
	if _, _, err := c.Add(ctx, "q:alice", 1, 3, time.Minute, time.Now()); err == nil {
		t.Fatal("Add on a dead Redis: no error")
	}
	if _, err := c.Held(ctx, "sessions:alice"); err == nil {
		t.Fatal("Held on a dead Redis: no error")
	}
	f := NewFallbackCounters(c, 0, nil, zerolog.Nop())
	if n, ok, err := f.Add(ctx, "q:alice", 1, 3, time.Minute, time.Now()); err != nil || !ok || n != 1 {
		t.Fatalf("fallback on a dead Redis: %d %v %v; want a local count", n, ok, err)
	}
}
