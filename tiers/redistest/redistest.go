// Package redistest gives tests a database of their own on the test
// redis-server that scripts/test starts ($POISE_TEST_REDIS_URL). Without
// one a test is skipped, and fails under CI=true: a missing dependency
// never passes silently in CI.
package redistest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Databases of the packages whose tests run at once, so that none sees
// another's keys.
const (
	DBSession = 1
	DBTiers   = 2
	DBPoise   = 3
	DBStore   = 4 // session/redisstore
)

// URL returns the URL of database db on the test Redis, emptied.
func URL(t testing.TB, db int) string {
	t.Helper()
	base := os.Getenv("POISE_TEST_REDIS_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("POISE_TEST_REDIS_URL is not set; scripts/test starts a redis-server")
		}
		t.Skip("POISE_TEST_REDIS_URL is not set (scripts/test starts a redis-server)")
	}
	u := strings.TrimRight(base, "/") + "/" + strconv.Itoa(db)
	if err := Dial(t, u).FlushDB(t.Context()).Err(); err != nil {
		t.Fatalf("test redis: %v", err)
	}
	return u
}

// Client returns a client of database db on the test Redis, emptied; it is
// closed when the test ends.
func Client(t testing.TB, db int) *redis.Client { return Dial(t, URL(t, db)) }

// Dial returns a client of url, closed when the test ends.
func Dial(t testing.TB, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("redis url %q: %v", url, err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}
