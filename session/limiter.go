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
	heard map[string]*audioUse   // subject → audio this hour
}

// audioUse counts audio bytes in a fixed one-hour window.
type audioUse struct {
	since time.Time
	bytes int64
}

const audioBytesPerSecond = audioSampleRate * 2 // pcm_s16le mono

func newLimiter(l Limits, now func() time.Time) *limiter {
	return &limiter{limits: l, now: now, asked: make(map[string][]time.Time), heard: make(map[string]*audioUse)}
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
	delete(l.heard, subject)
}

// audio reports whether subject may send n more bytes of audio this hour,
// and counts them if so.
func (l *limiter) audio(subject string, n int) bool {
	if l.limits.AudioSecondsPerHour <= 0 {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.heard[subject]
	if u == nil || now.Sub(u.since) >= time.Hour {
		u = &audioUse{since: now}
		l.heard[subject] = u
	}
	if u.bytes+int64(n) > int64(l.limits.AudioSecondsPerHour)*audioBytesPerSecond {
		return false
	}
	u.bytes += int64(n)
	return true
}
