package session

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/redistest"

	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/redis/go-redis/v9"
)

// eventually polls cond until it holds, failing after waitLimit.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", waitLimit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRedisStoreKeys: a session and a transition leave CONTRACT.md's keys:
// the session hash with its expiry, a stream entry, a pub/sub event; and
// the store reads them back.
func TestRedisStoreKeys(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBSession)
	ctx := t.Context()
	ps := rdb.Subscribe(ctx, eventsChannel)
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription is confirmed
		t.Fatal(err)
	}
	events := ps.Channel()

	store := NewRedisStore(rdb, RedisStoreConfig{TTL: time.Minute})
	health := newFakeHealth(tiers.L1)
	ts := newTestServer(t, Config{Health: health, Store: store, Node: "node-a"})
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

	entries := rdb.XRange(ctx, transitionsKey, "-", "+").Val()
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

// TestRedisStoreStreamIsCapped: the transitions stream stays near its cap.
func TestRedisStoreStreamIsCapped(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBSession)
	store := NewRedisStore(rdb, RedisStoreConfig{})
	ctx := t.Context()
	// Fill the stream past the cap in one pipeline, as many nodes would.
	const extra = 5000
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range transitionsCap + extra {
			p.XAdd(ctx, &redis.XAddArgs{Stream: transitionsKey, Values: []any{"session", strconv.Itoa(i)}})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.AddTransition(ctx, Transition{Session: "last", From: "L1", To: "L2", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	n := rdb.XLen(ctx, transitionsKey).Val()
	if n < transitionsCap || n > transitionsCap+extra/2 {
		t.Fatalf("stream length %d after %d adds, want about %d", n, transitionsCap+extra+1, transitionsCap)
	}
}

// TestRedisStoreOwnership: a store whose session was taken over by
// another process neither overwrites nor deletes its hash.
func TestRedisStoreOwnership(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBSession)
	ctx := t.Context()
	a := NewRedisStore(rdb, RedisStoreConfig{})
	b := NewRedisStore(rdb, RedisStoreConfig{})
	rec := SessionRecord{ID: "s1", Node: "a", Level: "L1", Lang: "en", Seniority: "mid", UpdatedAt: time.Now()}
	if err := a.PutSession(ctx, rec); err != nil {
		t.Fatal(err)
	}
	st := &ResumeState{ID: "s1", Token: "tok", Subject: "sub", Level: "L1", Node: "a"}
	if d, err := a.WriteResume(ctx, []ResumeWrite{{ID: "s1", State: st, FirstSeq: 1, Messages: [][]byte{[]byte(`{"seq":1}`)}}}); err != nil || len(d) != 0 {
		t.Fatalf("WriteResume = %v, %v", d, err)
	}
	if _, err := b.TakeOverAs(ctx, "s1", "wrong", "sub"); err != ErrResumeToken {
		t.Fatalf("TakeOverAs with a wrong token = %v, want ErrResumeToken", err)
	}
	if owns, _ := a.Owns(ctx, "s1"); !owns {
		t.Fatal("a wrong token moved the ownership")
	}
	got, err := b.TakeOverAs(ctx, "s1", "tok", "sub")
	if err != nil || got.Subject != "sub" || got.FirstSeq != 1 || len(got.Messages) != 1 {
		t.Fatalf("TakeOverAs = %+v, %v", got, err)
	}
	if owns, _ := a.Owns(ctx, "s1"); owns {
		t.Fatal("a still owns s1 after b took it over")
	}
	// The old owner's writes are refused and reported.
	d, err := a.WriteResume(ctx, []ResumeWrite{{ID: "s1", FirstSeq: 2, Messages: [][]byte{[]byte(`{"seq":2}`)}}})
	if err != nil || len(d) != 1 || d[0] != "s1" {
		t.Fatalf("old owner's WriteResume = %v, %v; want s1 disowned", d, err)
	}
	rec.Node, rec.Level = "a-stale", "L4"
	if err := a.PutSession(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := a.AddTransition(ctx, Transition{Session: "s1", From: "L1", To: "L4", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if n := rdb.XLen(ctx, transitionsKey).Val(); n != 0 {
		t.Fatalf("the old owner's transition reached the stream (%d entries)", n)
	}
	if err := a.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if h := rdb.HGetAll(ctx, sessionKey("s1")).Val(); h["node"] != "a" || h["level"] != "L1" {
		t.Fatalf("the old owner changed the session hash: %v", h)
	}
	if n := rdb.LLen(ctx, replayKey("s1")).Val(); n != 1 {
		t.Fatalf("replay list has %d entries, want 1", n)
	}
}

// TestRedisStoreReplayIsContiguous: retried appends are not doubled, a gap
// restarts the kept messages, and the list is capped.
func TestRedisStoreReplayIsContiguous(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBSession)
	ctx := t.Context()
	s := NewRedisStore(rdb, RedisStoreConfig{ReplayMax: 5})
	msgs := func(from, to int) [][]byte {
		var out [][]byte
		for i := from; i <= to; i++ {
			out = append(out, []byte(`{"seq":`+strconv.Itoa(i)+`}`))
		}
		return out
	}
	st := &ResumeState{ID: "s", Token: "t", Level: "L1", LastSeq: 2}
	steps := []struct {
		name      string
		first     int
		to        int
		wantFirst uint64
		wantN     int
	}{
		{"first three", 1, 3, 1, 3},
		{"a retry of 2..4 adds only 4", 2, 4, 1, 4},
		{"a gap restarts at 7", 7, 8, 7, 2},
		{"the cap keeps the newest five", 9, 12, 8, 5},
	}
	for _, step := range steps {
		if _, err := s.WriteResume(ctx, []ResumeWrite{{ID: "s", State: st, FirstSeq: uint64(step.first), Messages: msgs(step.first, step.to)}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.TakeOverAs(ctx, "s", "t", st.Subject)
		if err != nil {
			t.Fatal(err)
		}
		if got.FirstSeq != step.wantFirst || len(got.Messages) != step.wantN || got.LastSeq != uint64(step.to) {
			t.Fatalf("%s: first %d, %d messages, last_seq %d; want %d, %d, %d", step.name, got.FirstSeq, len(got.Messages),
				got.LastSeq, step.wantFirst, step.wantN, step.to)
		}
		for i, m := range got.Messages {
			if want := `{"seq":` + strconv.FormatUint(got.FirstSeq+uint64(i), 10) + `}`; string(m) != want {
				t.Fatalf("%s: message %d = %s, want %s", step.name, i, m, want)
			}
		}
	}
}

// TestRedisStoreRefreshCatchesUp: after Redis lost the keys, Run writes
// this node's live sessions again, and retries a failed delete.
func TestRedisStoreRefreshCatchesUp(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBSession)
	ctx := t.Context()
	s := NewRedisStore(rdb, RedisStoreConfig{Refresh: 20 * time.Millisecond})
	for _, id := range []string{"keep", "gone"} {
		if err := s.PutSession(ctx, SessionRecord{ID: id, Level: "L3", UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	rdb.FlushDB(ctx) // Redis restarted without persistence
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	defer func() { cancel(); <-done }()
	if err := s.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the live session is written again", func() bool {
		return rdb.HGet(ctx, sessionKey("keep"), "level").Val() == "L3"
	})
	if rdb.Exists(ctx, sessionKey("gone")).Val() != 0 {
		t.Fatal("a deleted session came back")
	}
}

// BenchmarkRedisWriteResume measures the resume writer's round trip: one
// batch of 32 sessions × 16 messages, as a busy node sends them.
func BenchmarkRedisWriteResume(b *testing.B) {
	rdb := redistest.Client(b, redistest.DBSession)
	s := NewRedisStore(rdb, RedisStoreConfig{})
	msg := []byte(`{"type":"answer_delta","seq":0,"id":"q1","text":"a few words of an answer "}`)
	const sessions, perSession = 32, 16
	var seq uint64 = 1
	b.ReportAllocs()
	for b.Loop() {
		writes := make([]ResumeWrite, sessions)
		for i := range writes {
			w := ResumeWrite{ID: "bench-" + strconv.Itoa(i), FirstSeq: seq}
			for range perSession {
				w.Messages = append(w.Messages, msg)
			}
			writes[i] = w
		}
		seq += perSession
		if _, err := s.WriteResume(context.Background(), writes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sessions*perSession), "ns/message")
}
