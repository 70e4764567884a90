package health

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// State is a backend's health as the ops view and poise_backend_up read
// it: up while its circuit is closed, down otherwise.
type State string

// The two health states; the names are those of poise:health:{backend}.
const (
	StateUp   State = "up"
	StateDown State = "down"
)

// BackendState is one backend's circuit as the nodes share it: the
// fields of the Redis hash poise:health:{name}. ChangedAt (when the
// circuit last opened or closed; half-open trials are each node's own)
// decides between two nodes' records: the newer decision wins.
type BackendState struct {
	Name            string    `json:"name"`
	State           State     `json:"state"`
	Circuit         Circuit   `json:"circuit"`
	ConsecutivePass int       `json:"consecutive_pass"` // passing trials while half-open
	ConsecutiveFail int       `json:"consecutive_fail"` // failures in a row
	UpdatedAt       time.Time `json:"updated_at"`       // the last write
	ChangedAt       time.Time `json:"changed_at"`       // when the circuit last opened or closed
	OpenUntil       time.Time `json:"open_until"`       // open: no trial before
	CooldownMS      int64     `json:"cooldown_ms"`      // the current cooldown
	LastTrial       time.Time `json:"last_trial"`       // the start of the last half-open trial
	Reason          string    `json:"reason"`           // why the last change happened
	Node            string    `json:"node"`             // the node that decided it
}

// Store shares the circuits of a deployment's nodes. It is called only
// by the Center's sync goroutine, never on a request path, so a slow or
// dead store delays what other nodes learn, never an answer.
type Store interface {
	// Merge writes rec unless the stored record changed state later
	// (ChangedAt), and returns the stored record after the merge.
	Merge(ctx context.Context, rec BackendState) (BackendState, error)
	// States returns every record, sorted by name.
	States(ctx context.Context) ([]BackendState, error)
}

// Watcher is a Store that tells when another node may have changed a
// record. Watch calls changed for each change until ctx is done, then
// returns; changed must not block for long.
type Watcher interface {
	Watch(ctx context.Context, changed func())
}

// MemoryStore is a Store in memory, for one process (several Centers in
// a test share one). Safe for concurrent use.
type MemoryStore struct {
	mu      sync.Mutex
	records map[string]BackendState // Guarded by mu.
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{records: map[string]BackendState{}}
}

// Merge implements Store.
func (s *MemoryStore) Merge(_ context.Context, rec BackendState) (BackendState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.records[rec.Name]
	if !ok || !rec.ChangedAt.Before(cur.ChangedAt) {
		s.records[rec.Name] = rec
		return rec, nil
	}
	return cur, nil
}

// States implements Store.
func (s *MemoryStore) States(context.Context) ([]BackendState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]BackendState, 0, len(s.records))
	for _, r := range s.records {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b BackendState) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
