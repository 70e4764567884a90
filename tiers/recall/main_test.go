package recall

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines: chromem-go searches with worker
// goroutines, and every one must be gone when Match returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureBank loads testdata/bank: three templates with real questions and
// generated filler answers.
func fixtureBank(t testing.TB) *Bank {
	t.Helper()
	b, err := LoadFS(os.DirFS("testdata/bank"))
	if err != nil {
		t.Fatalf("load fixture: %v", err)
	}
	return b
}

// fixtureStore builds a Store over the fixture bank.
func fixtureStore(t testing.TB, cfg Config, m *Metrics) *Store {
	t.Helper()
	s, err := NewStore(fixtureBank(t), cfg, m)
	if err != nil {
		t.Fatalf("new store: %v", err)
	}
	return s
}
