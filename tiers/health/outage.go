package health

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// DefaultOutageCooldown is how long a fallback keeps to its local state
// after a failure of the shared store before it tries the store again.
const DefaultOutageCooldown = 2 * time.Second

// Outage tracks the failures of a shared store (Redis) for a fallback in
// front of it: after a failure the store is skipped for a cooldown, so a
// dead or hanging store costs at most one timeout per cooldown, and the
// start and the end of an outage are each logged once. FallbackStore and
// the session's FallbackCounters use it. Safe for concurrent use.
type Outage struct {
	cooldown time.Duration
	now      func() time.Time
	log      zerolog.Logger
	failMsg  string // logged, with the error, when an outage starts
	backMsg  string // logged when it ends

	mu        sync.Mutex
	downUntil time.Time // the store is skipped until then; guarded by mu
	degraded  bool      // the store failed and has not answered since; guarded by mu
}

// NewOutage returns a tracker; cooldown 0 means DefaultOutageCooldown, now
// nil means time.Now. failMsg and backMsg are the log lines of an
// outage's start and end.
func NewOutage(cooldown time.Duration, now func() time.Time, log zerolog.Logger, failMsg, backMsg string) *Outage {
	if cooldown <= 0 {
		cooldown = DefaultOutageCooldown
	}
	if now == nil {
		now = time.Now
	}
	return &Outage{cooldown: cooldown, now: now, log: log, failMsg: failMsg, backMsg: backMsg}
}

// State reports whether the store is in its cooldown (not worth asking)
// and whether an outage is going on (it failed and has not answered since).
func (o *Outage) State() (cooling, degraded bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.now().Before(o.downUntil), o.degraded
}

// Failed starts a cooldown; the first failure of an outage is logged.
func (o *Outage) Failed(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.downUntil = o.now().Add(o.cooldown)
	if !o.degraded {
		o.degraded = true
		o.log.Warn().Err(err).Msg(o.failMsg)
	}
}

// Answered ends an outage, if one is going on; its end is logged.
func (o *Outage) Answered() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.degraded {
		o.degraded = false
		o.log.Info().Msg(o.backMsg)
	}
}
