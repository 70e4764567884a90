package health

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// State is a backend's or a level's health: up or down.
type State string

// The two health states; the names are those of poise:health:{backend}.
const (
	StateUp   State = "up"
	StateDown State = "down"
)

// BackendState is the shared health record of one backend (or, under the
// names "level:L1".."level:L3", of one level). Its fields are those of the
// Redis hash poise:health:{name}.
type BackendState struct {
	Name            string    `json:"name"`
	State           State     `json:"state"`
	ConsecutivePass int       `json:"consecutive_pass"`
	ConsecutiveFail int       `json:"consecutive_fail"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// Store holds the health state that the nodes of a deployment share.
// The memory implementation serves one node; a Redis implementation shares
// it across nodes. Every method merges atomically and returns the merged
// result, so the caller decides transitions on what every node has seen.
//
// Probes are merged per round (the probe interval slot a probe falls in):
// several nodes probing the same backend in the same round count once, and
// a fail outranks a pass of the same round, so one node's pass never
// erases another's fail. Events carry ids, so the same event reported by
// two nodes counts once.
type Store interface {
	// Probe merges a probe result of round into name's record: a new round
	// extends the pass or fail streak; a repeated round counts only if it
	// turns a pass into a fail; an older round is ignored.
	Probe(ctx context.Context, name string, round int64, pass bool, at time.Time) (BackendState, error)
	// Fail records a failure seen in live traffic: the fail streak grows
	// and the pass streak restarts.
	Fail(ctx context.Context, name string, at time.Time) (BackendState, error)
	// SetState sets name's state; when it changes, both streaks restart.
	// changed reports whether this call changed it, so that exactly one
	// caller announces a transition.
	SetState(ctx context.Context, name string, s State, at time.Time) (st BackendState, changed bool, err error)
	// AddEvent adds the event id at time at to key's sliding window (an id
	// already present is not added again), forgets events older than
	// window, and returns how many remain.
	AddEvent(ctx context.Context, key, id string, at time.Time, window time.Duration) (int, error)
	// ClearEvents forgets key's events.
	ClearEvents(ctx context.Context, key string) error
	// States returns every record, sorted by name.
	States(ctx context.Context) ([]BackendState, error)
}

// unsetRound is a record's round before its first probe.
const unsetRound = math.MinInt64

// MemoryStore is the single-node Store. Safe for concurrent use.
type MemoryStore struct {
	mu      sync.Mutex
	records map[string]*memRecord           // Guarded by mu.
	events  map[string]map[string]time.Time // key → id → time; guarded by mu.
}

// memRecord is a BackendState with its round bookkeeping.
type memRecord struct {
	BackendState
	round      int64 // last probe round merged; unsetRound before the first
	roundPass  bool  // whether that round passed
	failBefore int   // the fail streak before that round, to undo a pass
}

// NewMemoryStore returns an empty store; unknown names read as up.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{records: map[string]*memRecord{}, events: map[string]map[string]time.Time{}}
}

func (s *MemoryStore) record(name string) *memRecord {
	r, ok := s.records[name]
	if !ok {
		r = &memRecord{BackendState: BackendState{Name: name, State: StateUp}, round: unsetRound}
		s.records[name] = r
	}
	return r
}

// Probe implements Store.
func (s *MemoryStore) Probe(_ context.Context, name string, round int64, pass bool, at time.Time) (BackendState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.record(name)
	switch {
	case round < r.round:
		// A late probe of an older round: newer rounds decided already.
	case round == r.round:
		if r.roundPass && !pass { // the round's pass becomes a fail
			r.roundPass = false
			r.ConsecutivePass = 0
			r.ConsecutiveFail = r.failBefore + 1
			r.UpdatedAt = at
		}
	default:
		r.round, r.roundPass, r.failBefore = round, pass, r.ConsecutiveFail
		if pass {
			r.ConsecutivePass++
			r.ConsecutiveFail = 0
		} else {
			r.ConsecutiveFail++
			r.ConsecutivePass = 0
		}
		r.UpdatedAt = at
	}
	return r.BackendState, nil
}

// Fail implements Store.
func (s *MemoryStore) Fail(_ context.Context, name string, at time.Time) (BackendState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.record(name)
	r.ConsecutiveFail++
	r.ConsecutivePass = 0
	r.roundPass = false // a pass recorded for the current round no longer stands
	r.UpdatedAt = at
	return r.BackendState, nil
}

// SetState implements Store.
func (s *MemoryStore) SetState(_ context.Context, name string, st State, at time.Time) (BackendState, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.record(name)
	if r.State == st {
		return r.BackendState, false, nil
	}
	r.State = st
	r.ConsecutivePass, r.ConsecutiveFail, r.failBefore = 0, 0, 0
	r.UpdatedAt = at
	return r.BackendState, true, nil
}

// AddEvent implements Store.
func (s *MemoryStore) AddEvent(_ context.Context, key, id string, at time.Time, window time.Duration) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev, ok := s.events[key]
	if !ok {
		ev = map[string]time.Time{}
		s.events[key] = ev
	}
	if _, dup := ev[id]; !dup {
		ev[id] = at
	}
	cutoff := at.Add(-window)
	for id, t := range ev {
		if t.Before(cutoff) {
			delete(ev, id)
		}
	}
	return len(ev), nil
}

// ClearEvents implements Store.
func (s *MemoryStore) ClearEvents(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.events, key)
	return nil
}

// States implements Store.
func (s *MemoryStore) States(context.Context) ([]BackendState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]BackendState, 0, len(s.records))
	for _, r := range s.records {
		out = append(out, r.BackendState)
	}
	slices.SortFunc(out, func(a, b BackendState) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
