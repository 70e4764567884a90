package asr

import (
	"sync"
	"time"
)

// State is the caption chain's status as the candidate sees it. It is
// independent of the answer levels: captions never change a level.
type State string

// Caption chain states.
const (
	// StateLive: a whisper server answers, faster than speech.
	StateLive State = "live"
	// StateDegraded: captions come, but slower: whisper is down and the
	// cloud answers (finals only, no partials), or every whisper server that
	// answers decodes much slower than real time.
	StateDegraded State = "degraded"
	// StatePaused: no recognizer answers; captions stop until one is back.
	StatePaused State = "paused"
)

const (
	// slowFactor: a whisper server whose smoothed decode time is over this
	// many times the audio it decoded is much slower than real time.
	slowFactor = 1.5
	// paceWeight is the weight of the newest decode in that smoothing.
	paceWeight = 0.5
)

// chain is the Pool's State with a way to wait for its next change. Safe
// for concurrent use.
type chain struct {
	mu      sync.Mutex
	state   State         // Guarded by mu.
	changed chan struct{} // closed and replaced at each change. Guarded by mu.
}

// State returns the chain's state now and a channel that is closed when it
// next changes (read State again then). Never blocks.
func (p *Pool) State() (State, <-chan struct{}) {
	p.chain.mu.Lock()
	defer p.chain.mu.Unlock()
	return p.chain.state, p.chain.changed
}

// refresh recomputes the state from every backend's health and wakes the
// watchers when it changed.
func (p *Pool) refresh() {
	p.chain.mu.Lock()
	defer p.chain.mu.Unlock()
	st := p.computeState()
	if st == p.chain.state {
		return
	}
	p.log.Info().Str("from", string(p.chain.state)).Str("to", string(st)).Msg("asr: captions state")
	p.chain.state = st
	close(p.chain.changed)
	p.chain.changed = make(chan struct{})
}

// computeState: live while a whisper server is up and fast enough;
// degraded while only slow whisper servers or the cloud are up; else
// paused. A backend is up until it fails twice in a row, and down again
// until a request succeeds (being due for a retry is not being up), and
// only while its shared circuit (Config.Circuits) is not open.
func (p *Pool) computeState() State {
	slowOnly := false
	for _, s := range p.servers {
		up, slow := s.health.condition()
		up = up && p.circuitUp(s.name)
		switch {
		case up && !slow:
			return StateLive
		case up:
			slowOnly = true
		}
	}
	if slowOnly {
		return StateDegraded
	}
	if p.cloud != nil {
		if up, _ := p.cloud.health.condition(); up && p.circuitUp(cloudName) {
			return StateDegraded
		}
	}
	return StatePaused
}

// condition reports whether the backend is up (fewer than failsToDown
// failures in a row) and whether it decodes much slower than real time.
func (h *health) condition() (up, slow bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fails < failsToDown, h.pace > slowFactor
}

// paced folds one successful decode of audio that took took into the
// backend's smoothed pace (decode time over audio time).
func (h *health) paced(took, audio time.Duration) {
	if audio <= 0 {
		return
	}
	r := float64(took) / float64(audio)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pace == 0 {
		h.pace = r
		return
	}
	h.pace = paceWeight*r + (1-paceWeight)*h.pace
}
