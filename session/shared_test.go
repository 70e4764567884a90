package session

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/redistest"
)

// SharedStore is a node's ops and resume store in one, as
// redisstore.Store is.
type SharedStore interface {
	Store
	ResumeStore
}

// SetSharedRig is how redisstore_test.go (package session_test) hands
// these tests the Redis stores they cannot import (see sharedRig).
func SetSharedRig(store func(t testing.TB, url string, ttl time.Duration) SharedStore, counters func(t testing.TB, url string) quota.Counters) {
	sharedRig.store, sharedRig.counters = store, counters
}

// sharedRig builds the Redis implementations of a node's shared state, for
// the tests that run hubs as nodes over one Redis. session/redisstore
// imports session, so these tests cannot import it; redisstore_test.go,
// an external test file of this package, sets the rig in its init.
var sharedRig struct {
	store    func(t testing.TB, url string, ttl time.Duration) SharedStore // a node's ops and resume store; ttl 0: the default
	counters func(t testing.TB, url string) quota.Counters                 // a node's shared limit counters
}

// sharedStore is a node's ops and resume store over url, as its own
// process would have (its own client and owner id), whose keys expire ttl
// after their last write (0: the store's default).
func sharedStore(t testing.TB, url string, ttl time.Duration) SharedStore {
	t.Helper()
	if sharedRig.store == nil {
		t.Fatal("no shared rig: redisstore_test.go sets it")
	}
	return sharedRig.store(t, url, ttl)
}

// sharedCounters are a node's limit counters over url: Redis, with the
// local fallback.
func sharedCounters(t testing.TB, url string) quota.Counters {
	t.Helper()
	if sharedRig.counters == nil {
		t.Fatal("no shared rig: redisstore_test.go sets it")
	}
	return sharedRig.counters(t, url)
}

// sharedNode is the config of a node whose ops view and resume state are
// kept in the Redis at url.
func sharedNode(t testing.TB, cfg Config, url, node string) Config {
	t.Helper()
	st := sharedStore(t, url, 0)
	cfg.Store, cfg.Resume, cfg.Node = st, st, node
	return cfg
}

// testRedisURL is the URL of this package's emptied database on the test
// Redis.
func testRedisURL(t testing.TB) string {
	t.Helper()
	return redistest.URL(t, redistest.DBSession)
}

// TestRedisStoreKeys: a session and a transition leave the ops keys of
// docs/deploy.md: the session hash with its expiry, a stream entry, a
// pub/sub event; and the store reads them back.
func TestRedisStoreKeys(t *testing.T) {
	url := testRedisURL(t)
	rdb := redistest.Dial(t, url)
	ctx := t.Context()
	ps := rdb.Subscribe(ctx, "poise:events")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription is confirmed
		t.Fatal(err)
	}
	events := ps.Channel()

	health := newFakeHealth(tiers.L1)
	store := sharedStore(t, url, time.Minute)
	ts := newTestServer(t, Config{Health: health, Store: store, Resume: store, Node: "node-a"})
	_, w := ts.start(t, "zh")
	id := w.str("session_id")
	health.set(tiers.L2, tiers.Signal{Event: level.VendorAllDown, Level: tiers.L1})

	key := "poise:session:" + id
	var h map[string]string
	eventually(t, "session hash at L2", func() bool {
		h = rdb.HGetAll(ctx, key).Val()
		return h["level"] == "L2"
	})
	if h["node"] != "node-a" || h["lang"] != "zh" || h["seniority"] != "mid" || h["connected"] != "1" {
		t.Fatalf("session hash = %v", h)
	}
	if ms, _ := strconv.ParseInt(h["updated_at"], 10, 64); time.Since(time.UnixMilli(ms)) > time.Minute {
		t.Fatalf("updated_at = %s, not a recent unix ms", h["updated_at"])
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("session hash TTL = %v, want (0, 1m]", ttl)
	}

	entries := rdb.XRange(ctx, "poise:transitions", "-", "+").Val()
	if len(entries) != 1 {
		t.Fatalf("%d stream entries, want 1", len(entries))
	}
	e := entries[0].Values
	if e["session"] != id || e["from"] != "L1" || e["to"] != "L2" || e["reason"] != "vendor_all_down" || e["node"] != "node-a" || e["at"] == "" {
		t.Fatalf("stream entry = %v", e)
	}
	select {
	case m := <-events:
		var tr Transition
		if err := json.Unmarshal([]byte(m.Payload), &tr); err != nil || tr.Session != id || tr.To != "L2" {
			t.Fatalf("event %q: %+v %v", m.Payload, tr, err)
		}
	case <-time.After(waitLimit):
		t.Fatal("no event on poise:events")
	}

	recs, err := store.Sessions(ctx)
	if err != nil || len(recs) != 1 || recs[0].ID != id || recs[0].Level != "L2" || !recs[0].Connected {
		t.Fatalf("Sessions() = %+v, %v", recs, err)
	}
	trs, err := store.Transitions(ctx, 10)
	if err != nil || len(trs) != 1 || trs[0].Reason != "vendor_all_down" || trs[0].At.IsZero() {
		t.Fatalf("Transitions() = %+v, %v", trs, err)
	}
}
