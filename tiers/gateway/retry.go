package gateway

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
)

// Cooldown bounds.
const (
	maxCooldown      = 10 * time.Minute // a Retry-After longer than this is capped
	maxCooldownItems = 4096             // endpoint and model pairs remembered
)

// tryTarget runs the attempts of one endpoint (and model) for a request,
// within its retries, and reports whether the request is over:
//   - a stream cut after its first content is continued (prepare) on
//     the same endpoint first, while retries remain, then on the next;
//   - a 400 to an assistant prefill: the same endpoint again, without it;
//   - context_length: that model is never asked again in this request;
//     the endpoint's larger_model, if any, is asked once instead;
//   - 429, 5xx, resets and broken streams before the first content: the
//     next endpoint at once when one with a closed circuit is left (that
//     is faster than any retry); on the last one standing, a retry after
//     its Retry-After, if that is within retry_after_max_ms and the
//     client's deadline, else after a jittered backoff. A longer
//     Retry-After cools the endpoint's model down for that long;
//   - anything else (timeouts, 401/403/404, refusals) ends its turn.
//
// Each attempt has been accounted when it returns.
func (c *gatewayCall) tryTarget(ctx context.Context, t target, last bool) bool {
	model, largerUsed := t.ep.Model, false
	retries := t.ep.attempts - 1
	for n := 1; ; n++ {
		m, ok := c.prepare(t)
		if !ok {
			return false
		}
		res := c.attempt(ctx, t, model, m)
		c.account(t, res)
		if c.settle(ctx, t, res) {
			return true
		}
		e := res.err
		var wait time.Duration
		switch {
		case res.started:
			if retries <= 0 {
				return false
			}
		case res.prefillRefused:
			c.noPrefill[t.key()] = true
			retries++ // another way of asking, not a retry
		case e.Class == upstream.ClassContextLength:
			c.excluded[model] = true
			if l := t.ep.LargerModel; l != "" && !largerUsed && !c.excluded[l] {
				largerUsed, model = true, l
				retries++ // another model, not a retry
				break
			}
			return false
		case e.Class == upstream.ClassRateLimited && e.RetryAfter > 0:
			if e.RetryAfter > ms(c.g.plan.cfg.RetryAfterMaxMS) || !fitsDeadline(ctx, e.RetryAfter) {
				c.g.cool.set(target{ep: withModel(t.ep, model)}.key(), time.Now().Add(min(e.RetryAfter, maxCooldown)))
				return false
			}
			if !last || retries <= 0 {
				return false
			}
			wait = e.RetryAfter
		case e.Class == upstream.ClassRateLimited, e.Class == upstream.ClassServer:
			if !last || retries <= 0 {
				return false
			}
			wait = c.g.backoff(n)
		default:
			return false
		}
		retries--
		if !c.g.sleep(ctx, wait) {
			c.g.m.gatewayResponse(outcomeCanceled)
			return true
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

// account records one attempt's end: metrics, logs, and the circuit of
// its endpoint (and model), which opens after repeated failures.
func (c *gatewayCall) account(t target, res attemptResult) {
	name := t.ep.Name
	if res.err == nil {
		c.g.m.request(name, upstream.ClassNone)
		c.g.circuits.Report(t.circuit, upstream.ClassNone)
		return
	}
	e := res.err
	if res.diverged || res.prefillRefused {
		// The endpoint worked: it answered another text, or refused the
		// prefill as a request it does not take. Neither is its failure.
		c.g.m.request(name, upstream.ClassNone)
		c.g.circuits.Report(t.circuit, upstream.ClassNone)
		return
	}
	c.g.m.request(name, e.Class)
	c.g.circuits.Report(t.circuit, e.Class)
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

// order returns ts with the targets whose circuit is open moved last:
// they are tried only when everything else has failed (and probes or
// trials close their circuit when they recover); allowed has the circuits
// that let a request through, each of which run reports once.
func (g *Handler) order(ts []target) ([]target, map[string]bool) {
	allowed := map[string]bool{}
	open := map[string]bool{}
	for _, t := range ts {
		if allowed[t.circuit] || open[t.circuit] {
			continue
		}
		if g.circuits.Allow(t.circuit) {
			allowed[t.circuit] = true
		} else {
			open[t.circuit] = true
		}
	}
	out := slices.Clone(ts)
	slices.SortStableFunc(out, func(x, y target) int {
		return boolRank(open[x.circuit]) - boolRank(open[y.circuit])
	})
	return out, allowed
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
