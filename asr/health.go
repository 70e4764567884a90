package asr

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/asr/whisper"
)

// failsToDown consecutive failures take a backend out of the chain for
// Config.RetryMs; the first request after that tries it again.
const failsToDown = 2

// Error classes of recognizer failures, as metric labels.
const (
	classTimeout     = "timeout"
	classServer      = "server"
	classRateLimited = "rate_limited"
	classUnavailable = "unavailable"
	classBadRequest  = "bad_request"
)

// errDown is what a job gets when its server went down while it queued.
var errDown = errors.New("asr: backend is down")

// health is one backend's own health: ASR never shares the answer levels.
// Safe for concurrent use.
type health struct {
	mu        sync.Mutex
	fails     int       // consecutive failures. Guarded by mu.
	downUntil time.Time // skipped until then. Guarded by mu.
	pace      float64   // smoothed decode time over audio time; 0 before the first (state.go). Guarded by mu.
}

// available reports whether the backend may be tried now.
func (h *health) available(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !now.Before(h.downUntil)
}

// record notes one request's outcome and reports whether the backend just
// went down (wentDown) or came back (cameUp).
func (h *health) record(failed bool, now time.Time, retry time.Duration) (wentDown, cameUp bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !failed {
		cameUp = h.fails >= failsToDown
		h.fails, h.downUntil = 0, time.Time{}
		return false, cameUp
	}
	h.fails++
	if h.fails >= failsToDown {
		wentDown = h.fails == failsToDown
		h.downUntil = now.Add(retry)
	}
	return wentDown, false
}

// classify names err's class and whether it counts against the backend's
// health. A cancelled request (superseded partial, closed pool) is neither:
// class "" and false.
func classify(err error) (class string, counts bool) {
	var we *whisper.Error
	var oe *openai.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "", false
	case errors.Is(err, context.DeadlineExceeded):
		return classTimeout, true
	case errors.As(err, &we):
		return classifyStatus(we.Status)
	case errors.As(err, &oe):
		return classifyStatus(oe.StatusCode)
	}
	return classServer, true // refused, reset, DNS, malformed answer
}

func classifyStatus(status int) (class string, counts bool) {
	switch {
	case status == http.StatusTooManyRequests:
		return classRateLimited, true
	case status == http.StatusRequestTimeout:
		return classTimeout, true
	case status >= 500:
		return classServer, true
	case status == http.StatusUnauthorized, status == http.StatusPaymentRequired,
		status == http.StatusForbidden, status == http.StatusNotFound:
		return classUnavailable, true
	}
	return classBadRequest, false // our request was wrong (incl. whisper's 200 + error)
}
