package tiers

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
)

// maxAttemptsPerVendor bounds the L1 attempts on one vendor per question:
// its model, its larger model (context_length), one Retry-After retry.
const maxAttemptsPerVendor = 3

// attempt is one L1 request in flight.
type attempt struct {
	src    *upstream.Client
	model  string
	delay  time.Duration // a Retry-After wait before the request
	cancel context.CancelFunc
	won    chan struct{} // closed by win: this attempt emits its own tokens now
}

type tokenMsg struct {
	at   *attempt
	text string
}

type doneMsg struct {
	at  *attempt
	res result
}

// hedge runs the L1 vendors of one question. Owned by runL1's goroutine;
// the attempt goroutines talk to it only through tokens and done. The
// answering a is the hedge's until an attempt wins: win emits the first
// token and closes the winner's won, and from then the winner's goroutine
// emits the rest itself (one goroutine hop less per token) until its
// done hands a back.
type hedge struct {
	a          *answering
	ctx        context.Context    // cancelled when the hedge ends
	order      []*upstream.Client // vendors, the ones the health center marks down last
	next       int                // index in order of the next vendor to launch
	firstToken time.Duration

	tokens chan tokenMsg // unbuffered: a loser's send gives up when its ctx is done
	done   chan doneMsg  // sized for every attempt, so no attempt ever blocks on it
	wg     sync.WaitGroup

	running     map[*attempt]bool
	winner      *attempt
	stop        bool            // refused or bad_request: launch nothing more
	largerUsed  map[string]bool // vendor name → its larger model was tried
	retried     map[string]bool // vendor name → its Retry-After retry was used
	failedCount map[string]bool // vendor name → failed with a class that counts against health
}

// runL1 runs the hedged vendors. It reports whether Answer is over: the
// answer was given (completely, or cut), or a provider refused. Every
// attempt goroutine has returned when runL1 returns.
func (a *answering) runL1(ctx context.Context) bool {
	hctx, cancel := context.WithCancel(ctx)
	n := len(a.e.vendors)
	h := &hedge{
		a: a, ctx: hctx, order: a.e.vendorOrder(), firstToken: ms(a.e.cfg.L1.FirstTokenTimeoutMS),
		tokens: make(chan tokenMsg), done: make(chan doneMsg, maxAttemptsPerVendor*n),
		running: map[*attempt]bool{}, largerUsed: map[string]bool{}, retried: map[string]bool{},
		failedCount: map[string]bool{},
	}
	winner, res := h.run()
	cancel()
	h.wg.Wait()
	switch {
	case winner != nil:
		a.finish(ctx, L1, winner.src, res)
		return true
	case ctx.Err() != nil:
		return true
	case !h.stop && len(h.failedCount) == n:
		a.e.log.Warn().Str("question", a.req.ID).Msg("tiers: every L1 vendor failed")
		a.e.m.allDownOne() // each vendor's failure went to its circuit already
	}
	return a.refused
}

// vendorOrder is the L1 vendors in priority order, the ones the health
// center marks down moved last, so a known outage costs no hedge delay.
func (e *Engine) vendorOrder() []*upstream.Client {
	order := slices.Clone(e.vendors)
	if e.health != nil {
		slices.SortStableFunc(order, func(x, y *upstream.Client) int {
			return boolRank(!e.health.BackendUp(x.Name())) - boolRank(!e.health.BackendUp(y.Name()))
		})
	}
	return order
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// run launches vendors and returns the winner and its final result, or a
// nil winner when every attempt failed or the hedge was stopped.
func (h *hedge) run() (*attempt, result) {
	if h.a.e.cfg.L1.Mode == ModeRace {
		for h.launchNext() {
		}
		return h.loop(nil, nil)
	}
	h.launchNext()
	hedgeAfter := ms(h.a.e.cfg.L1.HedgeAfterMS)
	t := time.NewTimer(hedgeAfter)
	defer t.Stop()
	return h.loop(t.C, func() <-chan time.Time { t.Reset(hedgeAfter); return t.C })
}

// loop is run's select loop; rearm restarts the hedge timer for the next
// vendor (nil in race mode).
func (h *hedge) loop(hedgeC <-chan time.Time, rearm func() <-chan time.Time) (*attempt, result) {
	for len(h.running) > 0 && !h.stop {
		select {
		case <-h.ctx.Done():
			return nil, result{}
		case <-hedgeC:
			hedgeC = nil
			if h.winner == nil && h.launchNext() && h.next < len(h.order) {
				hedgeC = rearm()
			}
		case t := <-h.tokens:
			if h.winner == nil {
				h.win(t.at, t.text)
				hedgeC = nil
			} // a loser's token after the win is dropped: its context is cancelled
		case d := <-h.done:
			delete(h.running, d.at)
			if d.at == h.winner {
				return d.at, d.res
			}
			if h.winner == nil {
				h.failed(d.at, d.res)
			}
		}
	}
	return nil, result{}
}

// win makes at the winner: every other attempt is cancelled at once, the
// answer begins with first, and at emits its later tokens itself.
func (h *hedge) win(at *attempt, first string) {
	h.winner = at
	for other := range h.running {
		if other != at {
			other.cancel()
		}
	}
	h.a.begin(L1, at.src.Name(), "")
	h.a.delta(first)
	close(at.won)
}

// failed handles an attempt that ended before its first token.
func (h *hedge) failed(at *attempt, res result) {
	err := res.err
	if err == nil { // cannot happen: stream reports an empty answer as an error
		err = &upstream.Error{Class: upstream.ClassServer, Message: "no answer"}
	}
	name := at.src.Name()
	h.a.account(L1, at.src, err)
	if err.Class.CountsAgainstHealth() {
		h.failedCount[name] = true
	}
	switch c := err.Class; {
	case c == upstream.ClassCanceled:
	case c == upstream.ClassRefused, c == upstream.ClassBadRequest:
		h.stop = true
	case c == upstream.ClassContextLength && at.src.Endpoint().LargerModel != "" && !h.largerUsed[name]:
		h.largerUsed[name] = true
		if !h.launch(at.src, at.src.Endpoint().LargerModel, 0) {
			h.launchNext() // the larger model is over budget
		}
	case c == upstream.ClassRateLimited && !h.retried[name] && h.a.fits(h.ctx, err.RetryAfter):
		h.retried[name] = true
		h.launch(at.src, at.model, err.RetryAfter)
		h.launchNext() // the backup need not wait for the primary's Retry-After
	default:
		h.launchNext()
	}
}

// launchNext launches the next vendor in order that the request's
// Budget allows, if any is left.
func (h *hedge) launchNext() bool {
	for !h.stop && h.winner == nil && h.next < len(h.order) {
		src := h.order[h.next]
		h.next++
		if h.launch(src, src.Endpoint().Model, 0) {
			return true
		}
	}
	return false
}

// launch starts one attempt in its own goroutine under a child context. It
// reports false, launching nothing, when the Budget has no room for it.
// Each attempt settles its own reservation, so a hedged question counts
// both attempts, the loser's included.
func (h *hedge) launch(src *upstream.Client, model string, delay time.Duration) bool {
	c := call{messages: BuildPrompt(h.a.req, false), model: model, firstToken: h.firstToken, maxTokens: maxTokensFull, pacer: h.a.e.pacer}
	spent, ok := h.a.reserve(h.ctx, src, &c)
	if !ok {
		return false
	}
	actx, cancel := context.WithCancel(h.ctx)
	at := &attempt{src: src, model: model, delay: delay, cancel: cancel, won: make(chan struct{})}
	h.running[at] = true
	h.wg.Go(func() {
		defer cancel()
		if !sleepCtx(actx, delay) {
			spent(nil)
			h.done <- doneMsg{at: at, res: result{err: &upstream.Error{Class: upstream.ClassCanceled, Err: actx.Err()}}}
			return
		}
		res := stream(actx, src, c, h.tokensOf(actx, at))
		spent(&res)
		h.done <- doneMsg{at: at, res: res}
	})
	return true
}

// tokensOf is attempt at's token callback: its first token goes to the
// hedge, which decides the winner; a winner emits every later token
// itself, and a loser stops at its cancelled context.
func (h *hedge) tokensOf(actx context.Context, at *attempt) func(string) bool {
	winning := false
	return func(tok string) bool {
		if winning {
			h.a.delta(tok)
			return actx.Err() == nil
		}
		select {
		case h.tokens <- tokenMsg{at: at, text: tok}:
		case <-actx.Done():
			return false
		}
		select {
		case <-at.won:
			winning = true
			return true
		case <-actx.Done():
			return false
		}
	}
}

// sleepCtx waits d; it reports false when ctx ended the wait.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
