package upstream

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Errors that a stream's clocks put as the cause of its context.
var (
	errNoResponse = errors.New("upstream: no response in time")
	errFirstToken = errors.New("upstream: no first token in time")
	errStall      = errors.New("upstream: stream stalled")
)

// Phases of a stream, read by its clocks.
const (
	phaseHeaders    int32 = iota // waiting for the response headers
	phaseFirstToken              // headers came, waiting for the first content
	phaseStreaming               // content is flowing
)

// clocks are one stream's timers and the phase they read. Each cancels the
// stream's context with its cause when it fires: no response headers within
// Call.HeaderTimeout, no first content within Call.FirstToken (counted from
// the request, or from the headers when HeaderTimeout bounds those), then
// silence longer than the stall bound. One watchdog timer serves the first
// token and the stalls. The timers' functions only read the phase and
// cancel; stop ends them, and the stream's goroutine owns the rest.
type clocks struct {
	phase      atomic.Int32
	noResponse *time.Timer // nil without a HeaderTimeout
	watchdog   *time.Timer
	firstToken time.Duration
	stall      time.Duration
}

// startClocks arms a stream's clocks for call, cancelling with cancel;
// stall is the bound on silence after the first content.
func startClocks(call Call, stall time.Duration, cancel context.CancelCauseFunc) *clocks {
	k := &clocks{firstToken: call.FirstToken, stall: stall}
	k.watchdog = time.AfterFunc(call.FirstToken, func() {
		if k.phase.Load() == phaseStreaming {
			cancel(errStall)
		} else {
			cancel(errFirstToken)
		}
	})
	if call.HeaderTimeout > 0 {
		k.watchdog.Stop() // the first-token clock starts with the headers
		k.noResponse = time.AfterFunc(call.HeaderTimeout, func() {
			if k.phase.Load() == phaseHeaders {
				cancel(errNoResponse)
			}
		})
	}
	return k
}

// headers marks the response headers' arrival (or the request's failure):
// the first-token clock starts now if it waited for them.
func (k *clocks) headers() {
	k.phase.CompareAndSwap(phaseHeaders, phaseFirstToken)
	if k.noResponse != nil {
		k.watchdog.Reset(k.firstToken)
	}
}

// started marks the first content: from now on the watchdog times stalls.
func (k *clocks) started() { k.phase.Store(phaseStreaming) }

// pause stops the watchdog while the stream's own handler works: its time
// is not the server's silence.
func (k *clocks) pause() { k.watchdog.Stop() }

// rearm starts a stall bound after the stream's handler is done with a
// chunk.
func (k *clocks) rearm() { k.watchdog.Reset(k.stall) }

// drain gives the read after the finish at most drainTimeout.
func (k *clocks) drain() { k.watchdog.Reset(drainTimeout) }

// stop stops every clock.
func (k *clocks) stop() {
	k.watchdog.Stop()
	if k.noResponse != nil {
		k.noResponse.Stop()
	}
}
