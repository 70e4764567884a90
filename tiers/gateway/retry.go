package gateway

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
)

// Cooldown bounds.
const (
	maxCooldown      = 10 * time.Minute // a Retry-After longer than this is capped
	maxCooldownItems = 4096             // endpoint and model pairs remembered
)

// tryTarget runs the attempts of one endpoint (and model) for a request:
// what one endpoint handles alone, within its max_attempts:
//   - context_length: that model is never asked again in this request;
//     the endpoint's larger_model, if any, is asked once instead;
//   - 429 with a Retry-After within retry_after_max_ms (and within the
//     client's deadline): wait it out, then ask again; a longer one gives
//     up at once and cools the endpoint's model down for that long;
//   - 429 without Retry-After, 500, 502: a jittered backoff, then again;
//   - anything else (503, resets, DNS failures, timeouts, refusals, a
//     stream that broke after its first content) ends the endpoint's turn.
//
// It returns the last attempt's result; each attempt has been accounted.
func (c *gatewayCall) tryTarget(ctx context.Context, t target, prefill string) attemptResult {
	model, largerUsed := t.ep.Model, false
	for n := 1; ; n++ {
		res := c.attempt(ctx, t, model, prefill)
		c.account(t, res)
		if res.err == nil || res.started {
			return res
		}
		e := res.err
		var wait time.Duration
		switch {
		case e.Class == upstream.ClassContextLength:
			c.excluded[model] = true
			if l := t.ep.LargerModel; l != "" && !largerUsed && !c.excluded[l] {
				largerUsed, model = true, l
				n-- // another model, not a retry
				continue
			}
			return res
		case e.Class == upstream.ClassRateLimited && e.RetryAfter > 0:
			if e.RetryAfter > ms(c.g.plan.cfg.RetryAfterMaxMS) || n >= t.ep.MaxAttempts || !fitsDeadline(ctx, e.RetryAfter) {
				c.g.cool.set(target{ep: withModel(t.ep, model)}.key(), time.Now().Add(min(e.RetryAfter, maxCooldown)))
				return res
			}
			wait = e.RetryAfter
		case e.Class == upstream.ClassRateLimited, e.Class == upstream.ClassServer && (e.Status == http.StatusInternalServerError || e.Status == http.StatusBadGateway):
			if n >= t.ep.MaxAttempts {
				return res
			}
			wait = c.g.backoff(n)
		default:
			return res
		}
		if !c.g.sleep(ctx, wait) {
			return attemptResult{model: model, err: &upstream.Error{Class: upstream.ClassCanceled, Err: context.Cause(ctx)}}
		}
	}
}

func withModel(ep Endpoint, model string) Endpoint {
	ep.Model = model
	return ep
}

// fitsDeadline reports whether waiting d still leaves time before ctx's
// deadline, if it has one.
func fitsDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return !ok || time.Now().Add(d).Before(dl)
}

// backoff is the wait before retry n (1-based): a random time in
// [base·2ⁿ⁻¹, base·2ⁿ), so that clients that failed together do not come
// back together.
func (g *Handler) backoff(n int) time.Duration {
	step := ms(g.plan.cfg.BackoffMS) << min(n-1, 10)
	return step + rand.N(step)
}

// account records one attempt's end: metrics, logs, and the endpoint's
// health, which opens its circuit after repeated failures.
func (c *gatewayCall) account(t target, res attemptResult) {
	name := t.ep.Name
	if res.err == nil {
		c.g.m.request(name, upstream.ClassNone)
		if c.g.health != nil {
			c.g.health.ReportSuccess(name)
		}
		return
	}
	e := res.err
	c.g.m.request(name, e.Class)
	if c.g.health != nil {
		c.g.health.ReportResult(level.None, name, e.Class)
	}
	if e.Class == upstream.ClassCanceled {
		return
	}
	ev := c.log.Debug()
	if e.Class == upstream.ClassBadRequest {
		ev = c.log.Info() // usually the client's request; it gets the provider's error
	}
	ev.Str("endpoint", name).Str("model", res.model).Str("class", string(e.Class)).Int("status", e.Status).
		Str("code", e.Code).Str("message", e.Message).AnErr("cause", e.Err).Msg("tiers: gateway: attempt failed")
}

// order returns ts with the endpoints whose circuit is open (the health
// center has them down) moved last: they are tried only when everything
// else has failed, and the probes close their circuit when they recover.
func (g *Handler) order(ts []target) []target {
	if g.health == nil {
		return ts
	}
	out := slices.Clone(ts)
	slices.SortStableFunc(out, func(x, y target) int {
		return boolRank(!g.health.BackendUp(x.ep.Name)) - boolRank(!g.health.BackendUp(y.ep.Name))
	})
	return out
}

// allow asks the health center whether t's endpoint takes a live request
// now: closed circuits do; an open one only as its half-open trial, one
// at a time, once its cooldown is over. A trial is reported by account.
func (g *Handler) allow(t target) bool {
	return g.health == nil || g.health.Allow(t.ep.Name)
}

// cooldowns remembers, per endpoint and model, until when a Retry-After
// asked us not to come back. Safe for concurrent use.
type cooldowns struct {
	mu    sync.Mutex
	until map[string]time.Time // Guarded by mu.
}

func newCooldowns() *cooldowns { return &cooldowns{until: map[string]time.Time{}} }

// set cools key down until t.
func (c *cooldowns) set(key string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.until) >= maxCooldownItems {
		now := time.Now()
		for k, u := range c.until {
			if !u.After(now) {
				delete(c.until, k)
			}
		}
		if len(c.until) >= maxCooldownItems {
			return // every entry is live: forget this one rather than grow
		}
	}
	if t.After(c.until[key]) {
		c.until[key] = t
	}
}

// remaining reports how long key is still cooling down at now.
func (c *cooldowns) remaining(key string, now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.until[key]
	if !ok {
		return 0, false
	}
	if !u.After(now) {
		delete(c.until, key)
		return 0, false
	}
	return u.Sub(now), true
}
