package session_test

import (
	"testing"
	"time"

	"github.com/poise-dev/poise/session"
	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/session/redisstore"
	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/rs/zerolog"
)

// init gives package session's tests the Redis implementations of a
// node's shared state (shared_test.go): redisstore imports session, so
// only this external test package, linked into the same test binary, may
// import it.
func init() {
	session.SetSharedRig(
		func(t testing.TB, url string, ttl time.Duration) session.SharedStore {
			return redisstore.New(redistest.Dial(t, url), redisstore.Config{TTL: ttl})
		},
		func(t testing.TB, url string) quota.Counters {
			return quota.NewFallbackCounters(redisstore.NewCounters(redistest.Dial(t, url), redisstore.CountersConfig{}),
				0, nil, zerolog.Nop())
		})
}
