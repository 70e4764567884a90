package asr

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/poise-dev/poise/asr/whisper"
)

// job is one decode request waiting at, or running on, a whisper server.
type job struct {
	ctx     context.Context // the caller's; cancelling it abandons the job
	wav     []byte
	audio   time.Duration // what wav lasts
	lang    string
	partial bool
	done    chan jobResult // buffered (1): the worker never blocks on it
}

type jobResult struct {
	text string
	err  error
}

// server is one whisper.cpp server: a queue in front of one decode at a
// time. Finals are taken before partials; a partial is only accepted when
// nothing waits, so partials are skipped before finals are delayed.
type server struct {
	name   string // metric label: whisper@host:port
	client *whisper.Client
	depth  int // finals that may wait
	health health

	room *bell // the pool's: rung when a final leaves this queue, for one waiter

	mu       sync.Mutex
	finals   []*job        // FIFO. Guarded by mu.
	partials []*job        // FIFO, at most one. Guarded by mu.
	busy     bool          // a decode runs. Guarded by mu.
	closed   bool          // the worker has stopped. Guarded by mu.
	wake     chan struct{} // buffered (1): a job was queued
}

func newServer(name string, c *whisper.Client, depth int, room *bell) *server {
	return &server{name: name, client: c, depth: depth, room: room, wake: make(chan struct{}, 1)}
}

// load is the work ahead of a new job: waiting jobs plus the running one.
func (s *server) load() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.finals) + len(s.partials)
	if s.busy {
		n++
	}
	return n
}

// hasRoom reports whether a final would be queued now, or would learn
// that the server closed.
func (s *server) hasRoom() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed || len(s.finals) < s.depth
}

// errFull refuses a final at a server whose queue is full: the pool
// offers it to the next server, and waits for room only when every queue
// is full.
var errFull = errors.New("asr: whisper queue full")

// submit queues j without waiting: a partial is refused (ErrBusy) unless
// nothing waits, a final (errFull) when depth finals wait.
func (s *server) submit(j *job) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case j.partial && len(s.finals)+len(s.partials) > 0:
		s.mu.Unlock()
		return ErrBusy
	case j.partial:
		s.partials = append(s.partials, j)
	case len(s.finals) < s.depth:
		s.finals = append(s.finals, j)
	default:
		s.mu.Unlock()
		return errFull
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // the worker is already due to look
	}
	return nil
}

// withdraw removes j if it still waits (its caller gave up), so it does not
// hold a queue slot.
func (s *server) withdraw(j *job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.finals, j); i >= 0 {
		s.finals = slices.Delete(s.finals, i, i+1)
		s.room.ring()
	}
	if i := slices.Index(s.partials, j); i >= 0 {
		s.partials = slices.Delete(s.partials, i, i+1)
	}
}

// next pops the next job, finals first, and marks the server busy; nil
// when nothing waits.
func (s *server) next() *job {
	s.mu.Lock()
	defer s.mu.Unlock()
	var j *job
	switch {
	case len(s.finals) > 0:
		j, s.finals = s.finals[0], s.finals[1:]
		s.room.ring()
	case len(s.partials) > 0:
		j, s.partials = s.partials[0], s.partials[1:]
	}
	s.busy = j != nil
	return j
}

// run is the server's worker: one decode at a time until ctx ends, then it
// fails whatever still waits with ErrClosed. Owned by the Pool.
func (s *server) run(ctx context.Context, p *Pool) {
	defer s.close()
	for {
		if j := s.next(); j != nil {
			j.done <- s.decode(ctx, p, j)
			continue
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return
		}
	}
}

func (s *server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed, s.busy = true, false
	for _, j := range slices.Concat(s.finals, s.partials) {
		j.done <- jobResult{err: ErrClosed}
	}
	s.finals, s.partials = nil, nil
	s.room.ringAll() // every waiter tries again and finds the server closed
}

// decode runs one job under the request timeout, also ended by ctx (the
// pool's life), and records the outcome in the server's health.
func (s *server) decode(ctx context.Context, p *Pool, j *job) jobResult {
	if err := j.ctx.Err(); err != nil {
		return jobResult{err: err}
	}
	if !s.health.available(p.now()) {
		return jobResult{err: errDown} // went down while j waited: let the chain move on
	}
	rctx, cancel := context.WithTimeout(j.ctx, p.requestTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	start := time.Now()
	text, err := s.client.Transcribe(rctx, j.wav, j.lang)
	p.observe(s.name, &s.health, j.partial, j.audio, time.Since(start), err)
	return jobResult{text: text, err: err}
}
