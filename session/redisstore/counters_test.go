package redisstore

import (
	"testing"
	"time"

	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/session/quota/quotatest"
	"github.com/poise-dev/poise/tiers/health/healthtest"
	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// TestCountersConformance runs quota's window and hold rules against
// Counters, alone and under quota.FallbackCounters.
func TestCountersConformance(t *testing.T) {
	impls := map[string]func(t *testing.T, now func() time.Time) quota.Counters{
		"redis": func(t *testing.T, now func() time.Time) quota.Counters {
			return NewCounters(redistest.Client(t, redistest.DBStore), CountersConfig{Now: now})
		},
		"fallback over redis": func(t *testing.T, now func() time.Time) quota.Counters {
			rc := NewCounters(redistest.Client(t, redistest.DBStore), CountersConfig{Now: now})
			return quota.NewFallbackCounters(rc, 0, now, zerolog.Nop())
		},
	}
	for name, mk := range impls {
		t.Run(name, func(t *testing.T) { quotatest.Conformance(t, mk) })
	}
}

// TestRedisLeasesOfADeadNode: a held session counts on every node while
// its node renews the lease, and stops counting one lease after its node
// died (stopped renewing).
func TestRedisLeasesOfADeadNode(t *testing.T) {
	url := redistest.URL(t, redistest.DBStore)
	clock := healthtest.NewClockAt(quotatest.MidMinute)
	cfg := CountersConfig{Lease: 30 * time.Second, Now: clock.Now}
	alive := NewCounters(redistest.Dial(t, url), cfg)
	dead := NewCounters(redistest.Dial(t, url), cfg)
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

// TestRedisCountersUnreachable: with Redis refusing connections, every
// call fails fast with an error (quota.FallbackCounters then counts locally).
func TestRedisCountersUnreachable(t *testing.T) {
	// The production client's fast-fail options (cmd/poise/redis.go).
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1,
		ContextTimeoutEnabled: true})
	defer rdb.Close()
	c := NewCounters(rdb, CountersConfig{})
	ctx := t.Context()
	if _, _, err := c.Add(ctx, "q:alice", 1, 3, time.Minute, time.Now()); err == nil {
		t.Fatal("Add on a dead Redis: no error")
	}
	if _, err := c.Hold(ctx, "sessions:alice", "s1", 2); err == nil {
		t.Fatal("Hold on a dead Redis: no error")
	}
	f := quota.NewFallbackCounters(c, 0, nil, zerolog.Nop())
	if n, ok, err := f.Add(ctx, "q:alice", 1, 3, time.Minute, time.Now()); err != nil || !ok || n != 1 {
		t.Fatalf("fallback on a dead Redis: %d %v %v; want a local count", n, ok, err)
	}
}
