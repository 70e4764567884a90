// Package healthtest holds what the tests of the packages that drive a
// health center share: the clock its circuits read (health.WithClock),
// which the quota counters' tests read too.
package healthtest

import (
	"sync"
	"time"
)

// Clock is an injected clock that moves only when told. Safe for
// concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at 2026-03-01 09:00 UTC.
func NewClock() *Clock { return NewClockAt(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)) }

// NewClockAt returns a clock stopped at t.
func NewClockAt(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
