package redisstore

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitLimit = 5 * time.Second // bound on any single wait in these tests

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
