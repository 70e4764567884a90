package tiers

import (
	"context"
	"sync"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
)

// runL2 asks the local model with the short prompt. The bulkhead
// (l2.max_in_flight) never queues: when it is full the question falls
// through at once. It reports whether Answer is over (answered, or a
// provider refused).
func (a *answering) runL2(ctx context.Context) bool {
	src := a.e.local
	release, ok := a.e.acquireLocal()
	if !ok {
		a.e.m.shedOne(src.Name())
		a.e.log.Debug().Str("question", a.req.ID).Msg("tiers: local model bulkhead full, falling through")
		return false
	}
	res := a.try(ctx, src, L2, "")
	release()
	if res.started {
		a.finish(ctx, L2, src, res)
		return true
	}
	return a.refused || ctx.Err() != nil
}

// acquireLocal takes a slot of the local model's bulkhead without
// waiting; release gives it back (once, however often it is called).
func (e *Engine) acquireLocal() (release func(), ok bool) {
	select {
	case e.slots <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-e.slots }) }, true
	default:
		return nil, false
	}
}

// try asks src on the calling goroutine, emitting its tokens (Start on the
// first, unless the answer already started), and handles what one source
// handles alone: context_length moves to its larger model once, and a 429
// whose Retry-After fits the budget is retried once. prefill continues a
// cut answer. It returns the last result; a failure has been accounted.
func (a *answering) try(ctx context.Context, src *upstream.Client, level Level, prefill string) result {
	c := call{messages: BuildPrompt(a.req, level == L2), model: src.Endpoint().Model, prefill: prefill,
		firstToken: a.e.firstToken(level), maxTokens: maxTokensFull, pacer: a.e.pacer}
	if level == L2 {
		c.maxTokens = maxTokensShort
	}
	larger, retried := false, false
	for {
		spent, ok := a.reserve(ctx, src, &c)
		if !ok {
			return overBudget() // not accounted: no failure of the backend
		}
		res := stream(ctx, src, c, func(tok string) bool {
			a.begin(level, src.Name(), "")
			a.delta(tok)
			return ctx.Err() == nil
		})
		spent(&res)
		if res.started || res.err == nil {
			return res // the caller accounts for a started stream when it ends
		}
		a.account(level, src, res.err)
		switch err := res.err; {
		case err.Class == upstream.ClassContextLength && src.Endpoint().LargerModel != "" && !larger:
			larger, c.model = true, src.Endpoint().LargerModel
		case err.Class == upstream.ClassRateLimited && !retried && a.fits(ctx, err.RetryAfter):
			retried = true
			if !sleepCtx(ctx, err.RetryAfter) {
				return result{err: &upstream.Error{Class: upstream.ClassCanceled, Err: ctx.Err()}}
			}
		default:
			return res
		}
	}
}

// firstToken is the first-token timeout of a level's sources.
func (e *Engine) firstToken(l Level) time.Duration {
	if l == L2 {
		return ms(e.cfg.L2.TimeoutMS)
	}
	return ms(e.cfg.L1.FirstTokenTimeoutMS)
}

// account records the end of one request to src at level: metrics, logs,
// health, and what the failure means for the rest of the question.
func (a *answering) account(level Level, src *upstream.Client, err *upstream.Error) {
	name := src.Name()
	if err == nil {
		a.e.m.request(name, upstream.ClassNone)
		if a.e.health != nil {
			a.e.health.ReportSuccess(name)
		}
		return
	}
	a.e.m.request(name, err.Class)
	a.e.logFailure(a.req, name, err)
	a.e.reportResult(level, name, err.Class)
	switch err.Class {
	case upstream.ClassCanceled:
		return
	case upstream.ClassRefused:
		a.refused = true
	case upstream.ClassBadRequest:
		a.noModels = true
	}
	a.failed[name] = true
}
