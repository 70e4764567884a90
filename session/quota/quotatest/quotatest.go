// Package quotatest holds what the tests of quota.Counters implementations
// share: the conformance rules every implementation
// (memory, fallback, Redis) must follow alike.
package quotatest

import (
	"testing"
	"time"

	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/tiers/health/healthtest"
)

// MidMinute is 30 s into a minute, an hour and a UTC day.
var MidMinute = time.Date(2026, 11, 29, 10, 20, 30, 0, time.UTC)

// Conformance runs the same window and hold rules against the Counters mk
// returns for a clock (one fresh Counters per subtest).
func Conformance(t *testing.T, mk func(t *testing.T, now func() time.Time) quota.Counters) {
	t.Run("windows", func(t *testing.T) {
		clock := healthtest.NewClockAt(MidMinute)
		windows(t, mk(t, clock.Now), clock)
	})
	t.Run("holds", func(t *testing.T) {
		clock := healthtest.NewClockAt(MidMinute)
		holds(t, mk(t, clock.Now))
	})
}

func windows(t *testing.T, c quota.Counters, clock *healthtest.Clock) {
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

func holds(t *testing.T, c quota.Counters) {
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
