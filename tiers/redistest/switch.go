package redistest

import (
	"errors"
	"sync"
)

// ErrDown is what a Switch returns while it is down.
var ErrDown = errors.New("redistest: shared store down")

// Switch makes a test fake of a shared store fail, as a dead Redis would:
// each of the fake's methods calls Call first and returns its error.
// Every call is counted. Safe for concurrent use; the zero value is up.
type Switch struct {
	mu    sync.Mutex
	down  bool
	calls int
}

// Call counts a call and returns ErrDown while the switch is down.
func (s *Switch) Call() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.down {
		return ErrDown
	}
	return nil
}

// Set turns the store down (true) or up.
func (s *Switch) Set(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Calls is how many calls the switch has seen.
func (s *Switch) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}
