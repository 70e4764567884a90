package health

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/poise-dev/poise/tiers/level"
)

// Run probes every configured level (all its backends at once), and the
// backends of no level (gateway endpoints), right away
// and then every health.interval_ms plus up to a tenth of it as jitter,
// until ctx is done. It returns nil after every probe goroutine it started
// has returned; a done ctx is the normal end, not an error.
func (h *Center) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for l := level.None; l <= level.L3; l++ {
		if h.Configured(l) {
			wg.Go(func() { h.loop(ctx, l) })
		}
	}
	wg.Go(func() { h.watch(ctx) }) // health_watch.go: changes from other nodes
	wg.Wait()
	return nil
}

// loop probes level l until ctx is done. Owned by Run.
func (h *Center) loop(ctx context.Context, l level.Level) {
	h.refresh(ctx)
	h.probeLevel(ctx, l)
	t := time.NewTimer(h.nextWait())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.refresh(ctx)
		h.probeLevel(ctx, l)
		t.Reset(h.nextWait())
	}
}

// CheckNow probes every configured level once and returns when done, for
// tests and the ops page.
func (h *Center) CheckNow(ctx context.Context) {
	h.refresh(ctx)
	for l := level.None; l <= level.L3; l++ {
		if h.Configured(l) {
			h.probeLevel(ctx, l)
		}
	}
}

// nextWait is the interval plus jitter, so nodes and levels spread out.
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

// probeLevel probes every backend of level l at once, records the results
// for this round and judges the level. A round cut short by ctx is not
// recorded: shutting down is not an outage.
func (h *Center) probeLevel(ctx context.Context, l level.Level) {
	probes := h.probes[l]
	errs := make([]error, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, max(h.probeTimeout(), p.Timeout))
			defer cancel()
			errs[i] = p.Check(pctx)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	sctx, cancel := storeCtx(ctx)
	defer cancel()
	h.judge.Lock()
	defer h.judge.Unlock()
	now := h.now()
	round := h.round(now)
	anyPass := false
	for i, p := range probes {
		pass := errs[i] == nil
		anyPass = anyPass || pass
		if !pass {
			h.log.Debug().Err(errs[i]).Str("backend", p.Name).Msg("tiers: health: probe failed")
		}
		rec, err := h.store.Probe(sctx, p.Name, round, pass, now)
		if err != nil {
			h.storeError(err, "probe")
			continue
		}
		h.judgeBackend(sctx, rec)
	}
	if l == level.None {
		return // backends only: no level to judge
	}
	rec, err := h.store.Probe(sctx, levelKey(l), round, anyPass, now)
	if err != nil {
		h.storeError(err, "probe")
		return
	}
	h.judgeLevel(sctx, l, rec, anyPass, round)
}

// judgeLevel decides level l after a probe round. The caller holds judge.
func (h *Center) judgeLevel(ctx context.Context, l level.Level, rec BackendState, pass bool, round int64) {
	if rec.State == StateDown {
		if rec.ConsecutivePass >= h.cfg.RecoverAfter {
			h.setLevel(ctx, l, StateUp, strconv.Itoa(rec.ConsecutivePass)+" passing probe rounds")
			return
		}
		h.applyLevel(l, rec.State)
		return
	}
	if !pass {
		switch {
		case l == level.L3:
			h.setLevel(ctx, l, StateDown, "template probe failed")
			return
		case rec.ConsecutiveFail >= probeDownAfter:
			h.setLevel(ctx, l, StateDown, strconv.Itoa(rec.ConsecutiveFail)+" failed probe rounds")
			return
		case l == level.L1:
			// The round id makes nodes probing the same round count once.
			h.countAllDown(ctx, "probe:"+strconv.FormatInt(round, 10), "every vendor failed its probe")
			return
		}
	}
	h.applyLevel(l, rec.State)
}

// refresh reads the shared state so that transitions decided by other
// nodes reach this node's cache and subscribers.
func (h *Center) refresh(ctx context.Context) {
	sctx, cancel := storeCtx(ctx)
	defer cancel()
	states, err := h.store.States(sctx)
	if err != nil {
		h.storeError(err, "states")
		return
	}
	h.judge.Lock()
	defer h.judge.Unlock()
	for _, st := range states {
		if l, ok := levelOfKey(st.Name); ok {
			h.applyLevel(l, st.State)
		} else {
			h.applyBackend(st)
		}
	}
}

// levelOfKey parses levelKey's names.
func levelOfKey(name string) (level.Level, bool) {
	const prefix = "level:"
	if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
		return 0, false
	}
	return level.Parse(name[len(prefix):])
}
