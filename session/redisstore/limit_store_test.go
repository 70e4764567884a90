package redisstore

import (
	"testing"
	"time"

	"github.com/poise-dev/poise/session"
	"github.com/poise-dev/poise/tiers/redistest"
)

// TestStoreKeepsLimit: both ops stores keep a session's limit field (the
// Redis hash poise:session:{id} has it as `limit`) and clear it.
func TestStoreKeepsLimit(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBStore)
	stores := map[string]func(t *testing.T) session.Store{
		"memory": func(*testing.T) session.Store { return session.NewMemoryStore() },
		"redis":  func(t *testing.T) session.Store { return New(rdb, Config{}) },
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			s, ctx := mk(t), t.Context()
			r := session.SessionRecord{ID: "s1", Node: "n1", Level: "L1", Lang: "en", Seniority: "mid", Connected: true,
				Limit: "questions_per_minute", UpdatedAt: time.UnixMilli(1_700_000_000_000)}
			for _, limit := range []string{"questions_per_minute", ""} {
				r.Limit = limit
				if err := s.PutSession(ctx, r); err != nil {
					t.Fatal(err)
				}
				recs, err := s.Sessions(ctx)
				if err != nil || len(recs) != 1 || recs[0] != r {
					t.Fatalf("sessions %+v (%v), want %+v", recs, err, r)
				}
			}
			if name == "redis" {
				r.Limit = "daily_tokens_per_vendor"
				s.PutSession(ctx, r)
				if got := rdb.HGet(ctx, sessionKey("s1"), "limit").Val(); got != r.Limit {
					t.Fatalf("hash field limit = %q", got)
				}
			}
		})
	}
}
