package health

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// probeResult is one probe's end, for the health goroutine.
type probeResult struct {
	name    string
	gen     uint64 // the trial's generation; 0 for a check of a closed circuit
	started time.Time
	err     error
}

// Run runs the health goroutine until ctx is done: it applies live
// reports, probes every closed circuit every health.interval_ms (plus up
// to a tenth of it as jitter) and runs the trials of open and half-open
// ones; beside it, the sync goroutine shares the circuits through the
// Store. It returns nil after every goroutine it started has returned; a
// done ctx is the normal end, not an error.
func (h *Center) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if h.store != nil {
		wg.Go(func() { h.syncLoop(ctx) })
		if w, ok := h.store.(Watcher); ok {
			wg.Go(func() { w.Watch(ctx, h.syncSoon) })
		}
	}
	h.running.Store(true)
	h.loop(ctx)
	h.running.Store(false)
	wg.Wait()
	return nil
}

// loop is the health goroutine. It owns the probe goroutines (at most one
// per backend, each sending its one result on a channel sized for all of
// them) and waits for them before it returns.
func (h *Center) loop(ctx context.Context) {
	var probes sync.WaitGroup
	defer probes.Wait()
	results := make(chan probeResult, len(h.probes))
	running := map[string]bool{}
	due := map[string]time.Time{} // next check of a closed circuit
	now := time.Now()
	for name := range h.probes {
		due[name] = now
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-h.reports:
			h.applyReport(r)
		case res := <-results:
			running[res.name] = false
			h.applyProbe(ctx, res)
		case <-t.C:
		}
		next := h.launchDue(ctx, &probes, results, running, due)
		t.Reset(time.Until(next))
	}
}

// launchDue starts the probes that are due: checks of closed circuits and
// trials of open or half-open ones (admitted by the circuit, so a live
// trial in flight is not doubled). It returns when the next one is due.
func (h *Center) launchDue(ctx context.Context, wg *sync.WaitGroup, results chan<- probeResult, running map[string]bool, due map[string]time.Time) time.Time {
	now := time.Now()
	next := now.Add(ms(h.cfg.IntervalMS))
	for name, p := range h.probes {
		if running[name] {
			continue
		}
		gen, at, ok := h.admitProbe(name, now, due[name])
		if !ok {
			if at.Before(next) {
				next = at
			}
			continue
		}
		if gen == 0 {
			due[name] = now.Add(h.nextWait())
		}
		running[name] = true
		wg.Go(func() { results <- h.probe(ctx, p, gen) })
	}
	return next
}

// admitProbe decides whether backend's probe runs now: a closed circuit's
// check when checkAt has come, an open or half-open circuit's trial when
// the circuit admits one. It returns the trial's generation (0 for a
// check), or when to ask again.
func (h *Center) admitProbe(backend string, now, checkAt time.Time) (gen uint64, at time.Time, ok bool) {
	h.mu.Lock()
	c := h.circuits[backend]
	if c.state == Closed {
		h.mu.Unlock()
		return 0, checkAt, !now.Before(checkAt)
	}
	if at = c.nextTrial(); now.Before(at) {
		h.mu.Unlock()
		return 0, at, false
	}
	gen, ok, ch := c.allow(now)
	lv := h.judgeLevelsLocked(ch)
	h.mu.Unlock()
	h.announce(lv, ch)
	if !ok {
		return 0, now.Add(ms(h.cfg.CooldownMS)), false
	}
	return gen, now, true
}

// probe runs p once, bounded by the probe timeout.
func (h *Center) probe(ctx context.Context, p Probe, gen uint64) probeResult {
	started := h.now()
	pctx, cancel := context.WithTimeout(ctx, max(h.probeTimeout(), p.Timeout))
	defer cancel()
	return probeResult{name: p.Name, gen: gen, started: started, err: p.Check(pctx)}
}

// applyProbe feeds a probe result to its circuit. A probe cut short by
// shutdown is not recorded: shutting down is not an outage.
func (h *Center) applyProbe(ctx context.Context, res probeResult) {
	if ctx.Err() != nil {
		return
	}
	now := h.now()
	h.update(res.name, func(c *circuit) *change {
		if res.err == nil {
			return c.pass(now, res.started, res.gen, false)
		}
		h.log.Debug().Err(res.err).Str("backend", res.name).Msg("tiers: health: probe failed")
		why := "probe: " + res.err.Error()
		if res.gen != 0 {
			why = "trial probe: " + res.err.Error()
		}
		return c.fail(now, res.gen, false, why)
	})
}

// CheckNow probes every backend once (a check, or a trial where the
// circuit admits one) and returns when the results are applied, for tests
// and the demo's fault switch.
func (h *Center) CheckNow(ctx context.Context) {
	now := h.now()
	var wg sync.WaitGroup
	results := make(chan probeResult, len(h.probes))
	for name, p := range h.probes {
		gen, _, ok := h.admitProbe(name, now, now)
		if ok {
			wg.Go(func() { results <- h.probe(ctx, p, gen) })
		}
	}
	wg.Wait()
	close(results)
	for res := range results {
		h.applyProbe(ctx, res)
	}
}

// nextWait is the interval plus jitter, so nodes and backends spread out.
func (h *Center) nextWait() time.Duration {
	iv := ms(h.cfg.IntervalMS)
	if j := int64(iv) / jitterFraction; j > 0 {
		iv += time.Duration(rand.Int64N(j))
	}
	return iv
}

// probeTimeout bounds one probe: half the interval, at most
// maxProbeTimeout.
func (h *Center) probeTimeout() time.Duration {
	return min(ms(h.cfg.IntervalMS)/2, maxProbeTimeout)
}
