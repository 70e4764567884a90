package load

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// drainFor is how long sessions stay connected after the last question,
// so that late answers and captions still count.
func drainFor(sla time.Duration) time.Duration { return max(3*time.Second, 2*sla) }

// Run is a load run in progress. Start returns it once every session is
// open (or failed to open); Wait returns its Result.
type Run struct {
	cfg     Config
	clients []*client // the opened sessions
	failed  []string  // dial errors, one per session that did not open
	start   time.Time // traffic start
	stop    time.Time // no new questions or audio after this
	end     time.Time

	cancel   context.CancelFunc
	wg       sync.WaitGroup // pacers and the sampler
	timeline []Sample       // written by the sampler, read after wg.Wait
}

// Start opens cfg.Sessions sessions, Dialers at a time, then starts their
// traffic. It returns an error only for a bad Config or when no session
// opened; sessions that failed to open are reported in the Result. The
// caller must call Wait (cancelling ctx ends the run early).
func Start(ctx context.Context, cfg Config) (*Run, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Run{cfg: cfg}
	all := make([]*client, cfg.Sessions)
	errs := make([]error, cfg.Sessions)
	sem := make(chan struct{}, cfg.Dialers)
	var dials sync.WaitGroup
	for i := range all {
		sem <- struct{}{}
		dials.Go(func() {
			defer func() { <-sem }()
			all[i] = newClient(i, &r.cfg)
			errs[i] = all[i].dial(ctx)
		})
	}
	dials.Wait()
	for i, c := range all {
		if errs[i] != nil {
			r.failed = append(r.failed, errs[i].Error())
			continue
		}
		r.clients = append(r.clients, c)
	}
	if len(r.clients) == 0 {
		return nil, fmt.Errorf("load: no session opened: %s", r.failed[0])
	}
	rctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	r.start = time.Now()
	r.stop = r.start.Add(cfg.Duration)
	r.end = r.stop.Add(drainFor(cfg.SLA))
	for i := 0; i < len(r.clients); i += shardSize {
		p := newPacer(r.clients[i:min(i+shardSize, len(r.clients))], r.start, r.stop, r.end)
		r.wg.Go(func() { p.run(rctx) })
	}
	r.wg.Go(func() { r.sample(rctx) })
	return r, nil
}

// Drop closes the connections of the opened sessions numbered idx (0 to
// Opened-1, in opening order) at once, as a lost network would, without a
// close handshake; each then resumes with its last_seq as after any lost
// connection (the Result's Reconnects). It does not block.
func (r *Run) Drop(idx ...int) {
	for _, i := range idx {
		if i >= 0 && i < len(r.clients) {
			r.clients[i].dropAsked.Store(true)
		}
	}
}

// Opened is the number of sessions that opened.
func (r *Run) Opened() int { return len(r.clients) }

// Started is when traffic started; fault schedules are relative to it.
func (r *Run) Started() time.Time { return r.start }

// Wait blocks until every session has finished (the run's duration and
// drain passed, or ctx was cancelled) and returns what was recorded.
func (r *Run) Wait() *Result {
	r.wg.Wait()
	r.cancel()
	return r.result()
}

// sample counts the sessions at each level every SampleEvery until the
// run ends.
func (r *Run) sample(ctx context.Context) {
	t := time.NewTicker(r.cfg.SampleEvery)
	defer t.Stop()
	stopAt := time.NewTimer(time.Until(r.end))
	defer stopAt.Stop()
	r.timeline = append(r.timeline, r.snapshot(time.Now()))
	for {
		select {
		case <-ctx.Done():
			return
		case <-stopAt.C:
			return
		case now := <-t.C:
			r.timeline = append(r.timeline, r.snapshot(now))
		}
	}
}

func (r *Run) snapshot(now time.Time) Sample {
	s := Sample{AtMS: ms(now.Sub(r.start)), Levels: map[string]int{}}
	for _, c := range r.clients {
		if st := c.rec.state(); st != "" {
			s.Levels[st]++
		}
	}
	return s
}

// Measure opens the sessions, runs their traffic and returns the Result.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	r, err := Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return r.Wait(), nil
}
