package session

import (
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/redistest"
)

// TestStoreKeepsLimit: both ops stores keep a session's limit field (the
// Redis hash poise:session:{id} has it as `limit`) and clear it.
func TestStoreKeepsLimit(t *testing.T) {
	stores := map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemoryStore() },
		"redis": func(t *testing.T) Store {
			return NewRedisStore(redistest.Client(t, redistest.DBSession), RedisStoreConfig{})
		},
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			s, ctx := mk(t), t.Context()
			r := SessionRecord{ID: "s1", Node: "n1", Level: "L1", Lang: "en", Seniority: "mid", Connected: true,
				Limit: limitQuestions, UpdatedAt: time.UnixMilli(1_700_000_000_000)}
			for _, limit := range []string{limitQuestions, ""} {
				r.Limit = limit
				if err := s.PutSession(ctx, r); err != nil {
					t.Fatal(err)
				}
				recs, err := s.Sessions(ctx)
				if err != nil || len(recs) != 1 || recs[0] != r {
					t.Fatalf("sessions %+v (%v), want %+v", recs, err, r)
				}
			}
			if rs, ok := s.(*RedisStore); ok {
				r.Limit = limitTokens
				s.PutSession(ctx, r)
				if got := rs.Client().HGet(ctx, sessionKey("s1"), "limit").Val(); got != limitTokens {
					t.Fatalf("hash field limit = %q", got)
				}
			}
		})
	}
}
