package session

import (
	"context"
	"time"

	"github.com/rs/zerolog"
)

const (
	recorderQueue   = 8192                   // store writes waiting before new ones are dropped
	recorderTimeout = 500 * time.Millisecond // per store write
)

// recorder writes to the ops Store from its own goroutine. Sessions enqueue
// without blocking; when the queue is full the write is dropped and counted
// (the next write of the same session brings the ops view up to date).
type recorder struct {
	store Store
	ops   chan func(context.Context) error // many senders; never closed, run ends with ctx
	m     *Metrics
	log   zerolog.Logger
}

func newRecorder(s Store, m *Metrics, log zerolog.Logger) *recorder {
	return &recorder{store: s, ops: make(chan func(context.Context) error, recorderQueue), m: m, log: log}
}

// enqueue never blocks.
func (r *recorder) enqueue(op func(context.Context) error) {
	select {
	case r.ops <- op:
	default:
		r.m.storeDropped()
	}
}

// run performs queued writes until ctx is done, then drains what is queued
// within a bounded time.
func (r *recorder) run(ctx context.Context) {
	for {
		select {
		case op := <-r.ops:
			r.do(ctx, op)
		case <-ctx.Done():
			r.drain()
			return
		}
	}
}

func (r *recorder) drain() {
	deadline, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for {
		select {
		case op := <-r.ops:
			r.do(deadline, op)
		default:
			return
		}
		if deadline.Err() != nil {
			return
		}
	}
}

func (r *recorder) do(ctx context.Context, op func(context.Context) error) {
	ctx, cancel := context.WithTimeout(ctx, recorderTimeout)
	defer cancel()
	if err := op(ctx); err != nil {
		r.m.storeFailed()
		r.log.Debug().Err(err).Msg("ops store write failed")
	}
}
