package session

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// SessionRecord is the ops view of one live session.
type SessionRecord struct {
	ID        string    `json:"id"`
	Node      string    `json:"node"`
	Level     string    `json:"level"`
	Lang      string    `json:"lang"`
	Seniority string    `json:"seniority"`
	Connected bool      `json:"connected"`
	Limit     string    `json:"limit"` // the limit biting now (questions_per_minute …); empty when none
	UpdatedAt time.Time `json:"updated_at"`
}

// Transition is one change of a session's level.
type Transition struct {
	Session string    `json:"session"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Reason  string    `json:"reason"`
	Node    string    `json:"node"`
	At      time.Time `json:"at"`
}

// Store records what operators watch: each session's level and every
// transition. Writes come from the Hub's recorder goroutine, never from a
// session, so a slow store never blocks a session.
type Store interface {
	PutSession(ctx context.Context, r SessionRecord) error
	DeleteSession(ctx context.Context, id string) error
	AddTransition(ctx context.Context, t Transition) error
	Sessions(ctx context.Context) ([]SessionRecord, error)
	// Transitions returns up to n of the newest transitions, oldest first.
	Transitions(ctx context.Context, n int) ([]Transition, error)
}

const memoryTransitions = 10000 // transitions a MemoryStore keeps

// MemoryStore is the single-node Store. Safe for concurrent use.
type MemoryStore struct {
	mu          sync.Mutex
	sessions    map[string]SessionRecord
	transitions []Transition // newest last, at most memoryTransitions
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{sessions: make(map[string]SessionRecord)}
}

// PutSession implements Store.
func (m *MemoryStore) PutSession(_ context.Context, r SessionRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[r.ID] = r
	return nil
}

// DeleteSession implements Store.
func (m *MemoryStore) DeleteSession(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}

// AddTransition implements Store.
func (m *MemoryStore) AddTransition(_ context.Context, t Transition) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.transitions) == memoryTransitions {
		m.transitions = slices.Delete(m.transitions, 0, memoryTransitions/10)
	}
	m.transitions = append(m.transitions, t)
	return nil
}

// Sessions implements Store, sorted by id.
func (m *MemoryStore) Sessions(context.Context) ([]SessionRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]SessionRecord, 0, len(m.sessions))
	for _, r := range m.sessions {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b SessionRecord) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Transitions implements Store.
func (m *MemoryStore) Transitions(_ context.Context, n int) ([]Transition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n > len(m.transitions) || n <= 0 {
		n = len(m.transitions)
	}
	return slices.Clone(m.transitions[len(m.transitions)-n:]), nil
}
