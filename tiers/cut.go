package tiers

import (
	"context"

	"github.com/poise-dev/poise/tiers/upstream"
)

// continueCut finishes an answer whose stream was cut after its first
// token: it sends the partial answer as an assistant prefill to the next
// source that accepts one (the L1 vendors in order, then the local model),
// one at a time, until one completes it. When none can, the answer ends
// with Reason "cut": a truncated answer is never presented as complete.
func (a *answering) continueCut(ctx context.Context) {
	for _, cand := range a.continuations() {
		if ctx.Err() != nil {
			return
		}
		res, ok := a.continueOn(ctx, cand.src, cand.level)
		if !ok {
			continue
		}
		a.account(cand.level, cand.src, res.err)
		switch {
		case res.err == nil && res.finish == upstream.FinishLength:
			a.end(ReasonCut)
			return
		case res.err == nil:
			a.e.log.Info().Str("question", a.req.ID).Str("backend", cand.src.Name()).Msg("tiers: cut answer continued")
			a.end(ReasonDone)
			return
		case res.err.Class == upstream.ClassRefused:
			a.end(ReasonCut)
			return
		case res.err.Class == upstream.ClassCanceled || ctx.Err() != nil:
			return
		}
		// This source failed or was cut too: the next one continues from
		// the longer prefix.
	}
	a.end(ReasonCut)
}

// candidate is a source that may continue a cut answer.
type candidate struct {
	src   *upstream.Client
	level Level
}

// continuations lists the sources that may continue a cut answer: they
// accept a prefill, have not failed this question, and their level is
// allowed for the question and not marked down.
func (a *answering) continuations() []candidate {
	if a.noModels || a.refused {
		return nil
	}
	allowed := func(l Level) bool {
		return a.req.Level <= l && (a.e.health == nil || !a.e.health.Down(l))
	}
	var out []candidate
	if allowed(L1) {
		for _, v := range a.e.vendorOrder() {
			if v.Endpoint().Prefill && !a.failed[v.Name()] {
				out = append(out, candidate{v, L1})
			}
		}
	}
	if l := a.e.local; l != nil && l.Endpoint().Prefill && !a.failed[l.Name()] && allowed(L2) {
		out = append(out, candidate{l, L2})
	}
	return out
}

// continueOn asks src to continue the answer so far. ok is false when the
// source could not be asked (a full bulkhead) or failed before producing
// a token; such a failure has been accounted.
func (a *answering) continueOn(ctx context.Context, src *upstream.Client, level Level) (result, bool) {
	if level == L2 {
		release, ok := a.e.acquireLocal()
		if !ok {
			a.e.m.shedOne(src.Name())
			return result{}, false
		}
		defer release()
	}
	res := a.try(ctx, src, level, a.text.String())
	if !res.started && res.err != nil {
		return res, false // accounted by try
	}
	return res, true
}
