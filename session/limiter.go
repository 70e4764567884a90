package session

import (
	"sync"
	"time"
)

// limiter enforces Limits per subject. Safe for concurrent use.
type limiter struct {
	limits Limits
	now    func() time.Time

	mu    sync.Mutex
	asked map[string][]time.Time // subject → question times within the last minute
}

func newLimiter(l Limits, now func() time.Time) *limiter {
	return &limiter{limits: l, now: now, asked: make(map[string][]time.Time)}
}

// openSession reports whether subject may open one more session, given the
// live ones. The caller holds the hub's lock over sessions.
func (l *limiter) openSession(subject string, live map[string]*Session) bool {
	if l.limits.SessionsPerSubject <= 0 {
		return true
	}
	n := 0
	for _, s := range live {
		if s.subject == subject {
			n++
		}
	}
	return n < l.limits.SessionsPerSubject
}

// question reports whether subject may ask one more question now, and
// counts it if so.
func (l *limiter) question(subject string) bool {
	if l.limits.QuestionsPerMinute <= 0 {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	times := l.asked[subject]
	keep := times[:0]
	for _, t := range times {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	if len(keep) >= l.limits.QuestionsPerMinute {
		l.asked[subject] = keep
		return false
	}
	l.asked[subject] = append(keep, now)
	return true
}

// forget drops a subject's question history (when its last session ends).
func (l *limiter) forget(subject string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.asked, subject)
}
