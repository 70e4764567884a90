package tiers

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// errNoResponse is the cause an attempt's context gets when the endpoint
// sent no response headers within its timeout_ms.
var errNoResponse = errors.New("tiers: no response in time")

// Phases of an attempt, read by its timers.
const (
	phaseHeaders    int32 = iota // waiting for the response headers
	phaseFirstToken              // headers came, waiting for the first content
	phaseStreaming               // content is flowing
)

// attemptResult is how one upstream request ended.
type attemptResult struct {
	started bool   // content (text, refusal or tool calls) arrived
	finish  string // choice 0's finish_reason; "" when the stream ended without one
	model   string // the model the endpoint says answered
	err     *Error // nil on success
}

// attempt sends one streaming request to t's endpoint for model and
// passes what comes back to the client (stream) or into c.acc (not). Its
// timers: no response headers within timeout_ms, or no first content
// within first_token_timeout_ms, give up (class timeout); silence longer
// than stall_ms after the first content is a stall (class cut). After
// every choice has finished it waits at most drainTimeout for the usage
// chunk, so a stream that never sends [DONE] is finalised promptly.
func (c *gatewayCall) attempt(ctx context.Context, t target, model, prefill string) attemptResult {
	res := attemptResult{model: model}
	body, err := c.rq.upstreamBody(model, prefill)
	if err != nil {
		res.err = &Error{Class: ClassBadRequest, Err: err}
		return res
	}
	c.pending, c.usage = c.pending[:0], nil
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var phase atomic.Int32
	noResponse := time.AfterFunc(ms(t.ep.TimeoutMS), func() {
		if phase.Load() == phaseHeaders {
			cancel(errNoResponse)
		}
	})
	defer noResponse.Stop()
	watchdog := time.AfterFunc(ms(t.ep.FirstTokenTimeoutMS), func() {
		if phase.Load() == phaseStreaming {
			cancel(errStall)
		} else {
			cancel(errFirstToken)
		}
	})
	defer watchdog.Stop()

	// NewStreaming returns once the response headers have arrived.
	st := t.src.client.Chat.Completions.NewStreaming(sctx, openai.ChatCompletionNewParams{},
		option.WithRequestBody("application/json", body))
	defer st.Close()
	phase.CompareAndSwap(phaseHeaders, phaseFirstToken)
	stall := ms(t.ep.StallMS)
	for {
		if res.started {
			watchdog.Reset(stall)
		}
		ok := st.Next()
		if res.started {
			watchdog.Stop()
		}
		if !ok {
			break
		}
		payload, werr := c.take(st.Current(), t, &res, prefill != "")
		if werr != nil { // the client went away
			res.err = &Error{Class: ClassCanceled, Err: werr}
			return res
		}
		if payload && !res.started {
			res.started = true
			phase.Store(phaseStreaming)
			watchdog.Stop()
		}
		if c.acc.finished(c.rq.n) {
			res.finish = c.acc.finishReason()
			c.drain(st, t, &res, watchdog)
			break
		}
	}
	if res.finish == "" && st.Err() == nil {
		// [DONE] came before every choice asked for finished (a server
		// that ignores n): what finished is the answer.
		res.finish = c.acc.finishReason()
	}
	res.err = t.src.endError(ctx, sctx, st.Err(), result{started: res.started, finish: res.finish}, prefill != "")
	return res
}

// drain reads what follows the last finish chunk (the usage chunk, [DONE])
// for at most drainTimeout per read; whatever goes wrong here does not
// change the answer.
func (c *gatewayCall) drain(st *ssestream.Stream[openai.ChatCompletionChunk], t target, res *attemptResult, watchdog *time.Timer) {
	watchdog.Reset(drainTimeout)
	defer watchdog.Stop()
	for st.Next() {
		if _, err := c.take(st.Current(), t, res, false); err != nil {
			return
		}
		watchdog.Reset(drainTimeout)
	}
}

// take handles one upstream chunk: usage is kept, choices go into c.acc
// and, for a streaming client, out to the client. A chunk before the
// attempt's first content (the role chunk) is held back, so that an
// attempt failing before its first content leaves nothing behind; a
// continuation drops it (the client has its role already). payload
// reports whether the chunk carried content; err is a failed write.
func (c *gatewayCall) take(ch openai.ChatCompletionChunk, t target, res *attemptResult, continuation bool) (payload bool, err error) {
	if ch.Model != "" {
		res.model = ch.Model
	}
	if ch.JSON.Usage.Valid() && ch.Usage.JSON.TotalTokens.Valid() {
		c.usage = &usageOut{PromptTokens: int(ch.Usage.PromptTokens), CompletionTokens: int(ch.Usage.CompletionTokens),
			TotalTokens: int(ch.Usage.TotalTokens), raw: json.RawMessage(ch.Usage.RawJSON())}
	}
	if len(ch.Choices) == 0 {
		return false, nil // the usage chunk
	}
	if ch.SystemFingerprint != "" {
		c.fingerprint = ch.SystemFingerprint
	}
	payload, finish := c.acc.add(ch)
	if !c.rq.stream {
		return payload, nil
	}
	data := c.chunk(ch, t, res.model)
	if !payload && !res.started && !(c.sent && finish) {
		if !continuation {
			c.pending = append(c.pending, data)
		}
		return false, nil
	}
	if !c.sent {
		c.startStream(t)
	}
	for _, p := range c.pending {
		if err := c.sse.event(p); err != nil {
			return payload, err
		}
	}
	c.pending = c.pending[:0]
	return payload, c.sse.event(data)
}
