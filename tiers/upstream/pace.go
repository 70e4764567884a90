package upstream

import (
	"context"
	"sync"
	"time"
)

// Pacer spaces the reads of an answer stream after its first content: the
// stream reads the server at most once per Every, so that the tokens the
// server sent meanwhile come in one read and go on as one piece — one
// wake-up and one system call per Every instead of one per token. The
// first content is never waited for, nor is an event already in the
// buffer. A Pacer is shared by every stream of an engine, and paces only
// while Run runs; otherwise its streams read as events come.
//
// Run wakes the waiting streams itself, from one goroutine, in
// pacerSlots slots per Every, instead of each stream sleeping on its own
// timer: Go runs a goroutine that a timer readies ahead of every goroutine
// already waiting to run, so thousands of paced streams, each woken by
// its timer, kept the network's goroutines (new first tokens, the
// candidates' messages) waiting at a busy node; goroutines one goroutine
// wakes in turn queue behind them (docs/benchmarks.md, seventh pass).
type Pacer struct {
	// Every is the least time between two reads of a stream after its
	// first content; 0 or less reads as events come.
	Every time.Duration

	mu      sync.Mutex
	running bool // Run runs: streams may wait
	idle    bool // Run waits on kick: no stream waits
	kick    chan struct{}
	pos     int                          // the slot the next tick wakes
	slots   [pacerRing][]chan<- struct{} // each slot's waiting streams
	spare   []chan<- struct{}            // a woken slot's slice, for reuse
}

const (
	pacerSlots = 10             // ticks per Every
	pacerRing  = pacerSlots + 3 // slots: a wait of up to Every (11 ticks when Every/pacerSlots rounds down) plus the tick in progress
)

// Run wakes the streams that wait on p until ctx ends, then wakes every
// stream still waiting and returns; streams that pause afterwards do not
// wait. Its ticker runs only while some stream waits. It blocks: the
// caller's owner waits for it.
func (p *Pacer) Run(ctx context.Context) {
	tick := p.Every / pacerSlots
	if tick <= 0 {
		return
	}
	p.mu.Lock()
	p.running, p.idle, p.kick = true, false, make(chan struct{}, 1)
	p.mu.Unlock()
	defer p.stop()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !p.turn() {
				continue
			}
			t.Stop()
			select {
			case <-ctx.Done():
				return
			case <-p.kick:
				t.Reset(tick)
			}
		}
	}
}

// turn wakes the streams of the current slot and moves on to the next; it
// reports whether no stream waits any more (then p is idle until a
// stream kicks it).
func (p *Pacer) turn() (idle bool) {
	p.mu.Lock()
	woken := p.slots[p.pos]
	p.slots[p.pos] = p.spare[:0]
	p.pos = (p.pos + 1) % pacerRing
	idle = true
	for _, s := range p.slots {
		if len(s) > 0 {
			idle = false
			break
		}
	}
	p.idle = idle
	p.mu.Unlock()
	for _, c := range woken {
		c <- struct{}{} // buffered, and its stream waits on one slot only
	}
	clear(woken)
	p.mu.Lock()
	p.spare = woken
	p.mu.Unlock()
	return idle
}

// stop wakes every waiting stream; later pauses do not wait.
func (p *Pacer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = false
	for i, s := range p.slots {
		for _, c := range s {
			c <- struct{}{}
		}
		p.slots[i] = nil
	}
}

// wait registers wake to be woken d or up to two ticks later; false when
// p is not running (the caller goes on at once).
func (p *Pacer) wait(d time.Duration, wake chan<- struct{}) bool {
	tick := p.Every / pacerSlots
	k := min(int((d+tick-1)/tick)+1, pacerRing-1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return false
	}
	i := (p.pos + k - 1) % pacerRing
	p.slots[i] = append(p.slots[i], wake)
	if p.idle {
		p.idle = false
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
	return true
}

// pacing is one stream's use of its Pacer. Owned by the stream call.
type pacing struct {
	p    *Pacer
	last time.Time     // when the stream last went on reading; zero before its first content
	wake chan struct{} // the Pacer's signal to read again; made on the first wait
}

// pause is called after the stream has passed content on and before it
// reads again: it waits until p.Every has passed since the last read (or
// since the first content, which went on at once), and at most two ticks
// of the Pacer more. It does not watch the stream's context: a cancelled
// stream reads at most that much later.
func (s *pacing) pause() {
	if s.p == nil || s.p.Every <= 0 {
		return // not paced: no clock read per read either (the gateway's streams)
	}
	now := time.Now()
	if s.last.IsZero() {
		s.last = now
	}
	if d := s.p.Every - now.Sub(s.last); d > 0 {
		if s.wake == nil {
			s.wake = make(chan struct{}, 1)
		}
		if s.p.wait(d, s.wake) {
			<-s.wake
		}
		now = time.Now()
	}
	s.last = now
}
