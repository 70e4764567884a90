package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
)

// attemptResult is how one upstream request ended.
type attemptResult struct {
	started        bool            // content (text, refusal or tool calls) arrived
	finish         string          // choice 0's finish_reason; "" when the stream ended without one
	model          string          // the model the endpoint says answered
	err            *upstream.Error // nil on success
	diverged       bool            // a regenerated answer differed from what the client has
	prefillRefused bool            // the endpoint answered 400 to an assistant prefill
}

// errDiverged stops a regenerated stream that differs from the text the
// client already has.
var errDiverged = &upstream.Error{Class: upstream.ClassCanceled, Message: "the regenerated answer differs from the text already sent"}

// attempt sends one streaming request to t's endpoint for model and
// passes what comes back to the client (stream) or into c.acc (not),
// through upstream's client and its timers: no response headers within
// timeout_ms, or no first content within first_token_timeout_ms of the
// headers, give up (class timeout); silence longer than stall_ms after the
// first content is a stall (class cut). m says how it takes over a cut
// answer. Once every choice has finished, the usage chunk is waited for
// only briefly, so a stream that never sends [DONE] is finalised promptly.
func (c *gatewayCall) attempt(ctx context.Context, t target, model string, m mode) attemptResult {
	res := attemptResult{model: model}
	body := c.rq.upstreamBody(model, m.prefill)
	c.pending, c.usage, c.match = c.pending[:0], nil, nil
	if m.suppress {
		c.match = &matcher{have: c.acc.text()}
	}
	continuation := m.prefill != "" || m.suppress
	r := &relay{c: c, t: t, res: &res, continuation: continuation}
	out := t.client.Stream(ctx, upstream.Call{Body: body, Prefill: m.prefill, HeaderTimeout: ms(t.ep.TimeoutMS),
		FirstToken: ms(t.ep.FirstTokenTimeoutMS), Stall: ms(t.ep.StallMS)}, r)
	res.started, res.finish, res.err = out.Started, out.Finish, out.Err
	if res.err == nil && c.match != nil && !c.match.done() {
		res.diverged = true // it finished before it had said what the client has
	}
	if m.prefill != "" && !res.started && res.err != nil && res.err.Status == http.StatusBadRequest &&
		res.err.Class == upstream.ClassBadRequest {
		res.prefillRefused = true
	}
	c.match = nil
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
	return r.after(r.c.take(ch, r.t, r.res, r.continuation))
}

// after reports a chunk that take or takeScanned handled.
func (r *relay) after(payload bool, err error) (bool, string, error) {
	if payload {
		r.res.started = true
	}
	if err == errDiverged {
		r.res.diverged = true
	}
	if err != nil || !r.c.acc.finished(r.c.rq.n) {
		return payload, "", err
	}
	return payload, r.c.acc.finishReason(), nil
}

// Ended implements upstream.Handler: [DONE] before every choice asked
// for finished (a server that ignores n): what finished is the answer.
func (r *relay) Ended() string { return r.c.acc.finishReason() }

// take handles one decoded upstream chunk (the lean relay's takeScanned
// handles the common ones): usage is kept, choices go into c.acc and, for
// a streaming client, out to the client through emit, which holds back a
// chunk before the attempt's first content. A regenerated answer passes
// through c.match first, which holds back what the client has. payload
// reports whether the chunk carried content; err is a failed write,
// errDiverged, or an answer over max_response_mb.
func (c *gatewayCall) take(ch openai.ChatCompletionChunk, t target, res *attemptResult, continuation bool) (payload bool, err error) {
	if ch.Model != "" && ch.Model != res.model {
		res.model = upstream.RedactKey(ch.Model, t.ep.APIKey) // a hostile upstream's echo
	}
	if ch.JSON.Usage.Valid() && ch.Usage.JSON.TotalTokens.Valid() {
		c.usage = &usageOut{PromptTokens: int(ch.Usage.PromptTokens), CompletionTokens: int(ch.Usage.CompletionTokens),
			TotalTokens: int(ch.Usage.TotalTokens)}
	}
	if len(ch.Choices) == 0 {
		return false, nil // the usage chunk
	}
	if ch.SystemFingerprint != "" {
		c.rawFingerprint = ch.SystemFingerprint
		ch.SystemFingerprint = upstream.RedactKey(ch.SystemFingerprint, t.ep.APIKey)
		c.fingerprint = ch.SystemFingerprint
	}
	choices, heard, err := c.filter(ch)
	if err != nil {
		return heard, err
	}
	if choices == nil {
		return heard, nil // all of it is text the client has
	}
	payload, finish := c.acc.add(ch)
	if err := c.tooLarge(); err != nil {
		return payload, err
	}
	payload = payload || heard
	if !c.rq.stream {
		return payload, nil
	}
	return payload, c.emit(c.chunk(ch, t, res.model, choices), t, res, payload, finish, continuation)
}

// tooLarge is the error of an answer over max_response_mb, else nil.
func (c *gatewayCall) tooLarge() error {
	if c.acc.size() <= c.g.plan.cfg.MaxResponseMB<<20 {
		return nil
	}
	return &upstream.Error{Class: upstream.ClassBadRequest, Status: http.StatusBadGateway, Code: "response_too_large",
		Message: fmt.Sprintf("the answer is longer than gateway.max_response_mb (%d MiB)", c.g.plan.cfg.MaxResponseMB)}
}

// emit sends data, a chunk for the streaming client (payload: it carried
// content; finish: a finish_reason), or holds it back: a chunk before the
// attempt's first content waits in c.pending (a continuation drops it),
// so that an attempt failing before its first content leaves nothing
// behind. data may be reused once emit returns.
func (c *gatewayCall) emit(data []byte, t target, res *attemptResult, payload, finish, continuation bool) error {
	if !payload && !res.started && !(c.sent && finish) {
		if !continuation {
			c.pending = append(c.pending, bytes.Clone(data))
		}
		return nil
	}
	if !c.sent {
		c.startStream(t)
	}
	for _, p := range c.pending {
		if err := c.sse.event(p); err != nil {
			return err
		}
	}
	c.pending = c.pending[:0]
	return c.sse.event(data)
}

// filter passes ch's choices through c.match when the attempt regenerates
// text the client has: it returns the choices to send (ch itself changed
// to match: its content cut to what is new), nil when all of it was held
// back; heard reports content that was held back.
func (c *gatewayCall) filter(ch openai.ChatCompletionChunk) (choices []json.RawMessage, heard bool, err error) {
	choices = make([]json.RawMessage, 0, len(ch.Choices))
	for _, choice := range ch.Choices {
		if raw := choice.RawJSON(); raw != "" {
			choices = append(choices, json.RawMessage(raw))
		}
	}
	if c.match == nil || c.match.done() {
		return choices, false, nil
	}
	d := &ch.Choices[0].Delta
	rest, ok := c.match.take(d.Content)
	heard = d.Content != ""
	switch {
	case !ok:
		return nil, heard, errDiverged
	case !c.match.done() && ch.Choices[0].FinishReason != "":
		return nil, heard, errDiverged // it ends before it has said what the client has
	case !c.match.done() || (rest == "" && ch.Choices[0].FinishReason == ""):
		return nil, heard, nil
	}
	d.Content = rest
	choices[0] = withContent(choices[0], rest)
	return choices, heard, nil
}

// matcher holds back the start of a regenerated answer while it repeats
// the text the client already has. Owned by one attempt.
type matcher struct {
	have string // the text the client has
	pos  int    // bytes of have the new answer has repeated
}

// take reads the next piece of the new answer; rest is what goes beyond
// have (once it is all repeated), ok is false when the piece differs.
func (m *matcher) take(piece string) (rest string, ok bool) {
	left := m.have[m.pos:]
	if len(piece) <= len(left) {
		if left[:len(piece)] != piece {
			return "", false
		}
		m.pos += len(piece)
		return "", true
	}
	if piece[:len(left)] != left {
		return "", false
	}
	m.pos = len(m.have)
	return piece[len(left):], true
}

// done reports whether the new answer has repeated all the client has.
func (m *matcher) done() bool { return m.pos == len(m.have) }

// withContent returns the choice object raw with delta.content set to s.
func withContent(raw json.RawMessage, s string) json.RawMessage {
	var choice map[string]json.RawMessage
	var delta map[string]json.RawMessage
	if json.Unmarshal(raw, &choice) != nil || json.Unmarshal(choice["delta"], &delta) != nil || delta == nil {
		return raw
	}
	delta["content"], _ = json.Marshal(s)    // cannot fail: a string
	choice["delta"], _ = json.Marshal(delta) // cannot fail: raw values that parsed
	out, _ := json.Marshal(choice)           // cannot fail: raw values that parsed
	return out
}
