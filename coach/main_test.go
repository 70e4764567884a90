package coach

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind; the tests run in
// parallel.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
