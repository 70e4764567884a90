package session

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
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
	hold := func(member string, limit int, want bool) {
		t.Helper()
		ok, err := c.Hold(ctx, "sessions:alice", member, limit)
		if err != nil || ok != want {
			t.Fatalf("Hold(%s, limit %d) = %v, %v; want %v", member, limit, ok, err, want)
		}
	}
	hold("s1", 2, true)
	hold("s2", 2, true)
	hold("s1", 2, true) // held already: no new member
	hold("s3", 2, false)
	if ok, err := c.Hold(ctx, "sessions:bob", "b1", 1); err != nil || !ok {
		t.Fatalf("bob's first session: %v %v", ok, err)
	}
	if err := c.Release(ctx, "sessions:alice", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, "sessions:alice", "unknown"); err != nil {
		t.Fatal(err)
	}
	hold("s3", 2, true) // after a release there is room
	hold("s4", 2, false)
	hold("s4", 0, true) // no limit: always held
}

// TestCounterHoldsConcurrent: holds racing for the last places never
// pass the limit.
func TestCounterHoldsConcurrent(t *testing.T) {
	c := NewMemoryCounters()
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
	if ok, err := alive.Hold(ctx, "sessions:alice", "s1", 2); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ok, err := dead.Hold(ctx, "sessions:alice", "s2", 2); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ok, _ := alive.Hold(ctx, "sessions:alice", "s3", 2); ok {
		t.Fatal("a third session held while both leases run")
	}
	for range 3 { // one lease and a bit: only the live node renews
		clock.Advance(cfg.Lease / 3)
		if err := alive.renew(ctx); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Second)
	if ok, err := alive.Hold(ctx, "sessions:alice", "s3", 2); err != nil || !ok {
		t.Fatalf("a lease after a node stopped renewing, its session still counts: %v %v", ok, err)
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
	if _, err := c.Hold(ctx, "sessions:alice", "s1", 2); err == nil {
		t.Fatal("Hold on a dead Redis: no error")
	}
	f := NewFallbackCounters(c, 0, nil, zerolog.Nop())
	if n, ok, err := f.Add(ctx, "q:alice", 1, 3, time.Minute, time.Now()); err != nil || !ok || n != 1 {
		t.Fatalf("fallback on a dead Redis: %d %v %v; want a local count", n, ok, err)
	}
}
