package gateway

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
)

// attemptResult is how one upstream request ended.
type attemptResult struct {
	started bool            // content (text, refusal or tool calls) arrived
	finish  string          // choice 0's finish_reason; "" when the stream ended without one
	model   string          // the model the endpoint says answered
	err     *upstream.Error // nil on success
}

// attempt sends one streaming request to t's endpoint for model and
// passes what comes back to the client (stream) or into c.acc (not),
// through upstream's client and its timers: no response headers within
// timeout_ms, or no first content within first_token_timeout_ms, give up
// (class timeout); silence longer than stall_ms after the first content is
// a stall (class cut). Once every choice has finished, the usage chunk is
// waited for only briefly, so a stream that never sends [DONE] is
// finalised promptly.
func (c *gatewayCall) attempt(ctx context.Context, t target, model, prefill string) attemptResult {
	res := attemptResult{model: model}
	body, err := c.rq.upstreamBody(model, prefill)
	if err != nil {
		res.err = &upstream.Error{Class: upstream.ClassBadRequest, Err: err}
		return res
	}
	c.pending, c.usage = c.pending[:0], nil
	r := &relay{c: c, t: t, res: &res, continuation: prefill != ""}
	out := t.client.Stream(ctx, upstream.Call{Body: body, Prefill: prefill, HeaderTimeout: ms(t.ep.TimeoutMS),
		FirstToken: ms(t.ep.FirstTokenTimeoutMS), Stall: ms(t.ep.StallMS)}, r)
	res.started, res.finish, res.err = out.Started, out.Finish, out.Err
	return res
}

// relay is the upstream.Handler of one attempt: it hands each chunk to
// take and reports the finish once every choice asked for has finished.
type relay struct {
	c            *gatewayCall
	t            target
	res          *attemptResult
	continuation bool
}

// Chunk implements upstream.Handler.
func (r *relay) Chunk(ch openai.ChatCompletionChunk) (bool, string, error) {
	payload, err := r.c.take(ch, r.t, r.res, r.continuation)
	if payload {
		r.res.started = true
	}
	if err != nil || !r.c.acc.finished(r.c.rq.n) {
		return payload, "", err
	}
	return payload, r.c.acc.finishReason(), nil
}

// Ended implements upstream.Handler: [DONE] before every choice asked
// for finished (a server that ignores n): what finished is the answer.
func (r *relay) Ended() string { return r.c.acc.finishReason() }

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
