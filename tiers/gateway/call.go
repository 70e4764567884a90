package gateway

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// Outcomes of a gateway request (poise_gateway_responses_total{outcome}).
const (
	outcomeOK        = "ok"        // answered by one endpoint
	outcomeContinued = "continued" // a cut answer finished on another endpoint (prefill)
	outcomeRefused   = "refused"   // a content filter or policy refusal, passed on
	outcomeError     = "error"     // an error response before any content
	outcomeCut       = "cut"       // content was sent, then an in-band error event ended the stream
	outcomeCanceled  = "canceled"  // the client went away
)

// gatewayCall is one chat request being served. Owned by the handler
// goroutine: nothing else touches it.
type gatewayCall struct {
	g       *Handler
	rq      *chatRequest
	w       http.ResponseWriter
	sse     sseWriter
	id      string // the response id, the same across attempts
	created int64
	log     zerolog.Logger

	acc          answerAcc       // the answer so far, across the attempts that continued it
	sent         bool            // stream: the response has started; no clean restart is possible
	pending      [][]byte        // stream: this attempt's chunks before its first content
	continued    bool            // acc holds a cut answer that another endpoint continues
	usage        *usageOut       // the last attempt's usage, as the endpoint reported it
	fingerprint  string          // the answering endpoint's system_fingerprint
	excluded     map[string]bool // upstream models that reported context_length: never again
	last         *upstream.Error // the last failure, for the error response
	lastEndpoint string
	cut          *upstream.Error // the failure that cut the answer the client has partly seen
	cutEndpoint  string
	attempted    bool
	coolingWait  time.Duration // the shortest cooldown that made a target be skipped
}

func newGatewayCall(g *Handler, rq *chatRequest, w http.ResponseWriter) *gatewayCall {
	id := newResponseID()
	return &gatewayCall{g: g, rq: rq, w: w, sse: newSSEWriter(w), id: id, created: time.Now().Unix(),
		log: g.log.With().Str("request", id).Logger(), excluded: map[string]bool{}}
}

// run tries the targets in order (open circuits last) until one answers,
// a provider's refusal or our bad request ends the request, or none is
// left; then it writes the end of the response. It returns when the
// response is complete or the client has gone.
func (c *gatewayCall) run(ctx context.Context, targets []target) {
	for _, t := range c.g.order(targets) {
		if ctx.Err() != nil {
			c.g.m.gatewayResponse(outcomeCanceled)
			return
		}
		if c.excluded[t.ep.Model] {
			continue
		}
		if wait, cooling := c.g.cool.remaining(t.key(), time.Now()); cooling {
			if c.coolingWait == 0 || wait < c.coolingWait {
				c.coolingWait = wait
			}
			continue
		}
		if !c.ocrBeforeTarget(ctx, t) {
			continue
		}
		prefill, ok := c.prepare(t)
		if !ok {
			continue
		}
		c.continued = c.continued || prefill != ""
		c.attempted = true
		res := c.tryTarget(ctx, t, prefill)
		if c.settle(ctx, t, res) {
			return
		}
	}
	c.exhausted()
}

// prepare decides how t takes over an answer that another endpoint cut:
// it continues the partial answer as an assistant prefill when it accepts
// one, else the answer restarts cleanly on t if the client has seen none
// of it. ok is false when t cannot be used (the client has seen the
// partial answer and t cannot continue it).
func (c *gatewayCall) prepare(t target) (prefill string, ok bool) {
	if c.acc.empty() {
		return "", true
	}
	switch {
	case t.ep.Prefill && c.acc.plainText():
		return c.acc.text(), true
	case c.sent:
		return "", false
	}
	c.acc.reset()
	c.continued = false
	return "", true
}

// settle handles the end of t's attempts and reports whether the request
// is over.
func (c *gatewayCall) settle(ctx context.Context, t target, res attemptResult) bool {
	switch e := res.err; {
	case ctx.Err() != nil || (e != nil && e.Class == upstream.ClassCanceled):
		c.g.m.gatewayResponse(outcomeCanceled)
		return true
	case e == nil:
		outcome := outcomeOK
		if c.continued {
			outcome = outcomeContinued
			c.log.Info().Str("endpoint", t.ep.Name).Msg("tiers: gateway: cut answer continued")
		}
		c.finish(t, res, outcome)
		return true
	case e.Class == upstream.ClassRefused && res.finish == upstream.FinishFilter:
		// The endpoint answered, and its filter cut the answer: that is the
		// provider's answer, passed on with finish_reason content_filter.
		c.finish(t, res, outcomeRefused)
		return true
	case !e.Class.Fallbackable():
		c.fail(t, e)
		return true
	}
	c.last, c.lastEndpoint = res.err, t.ep.Name
	if res.started && c.sent {
		c.cut, c.cutEndpoint = res.err, t.ep.Name
	}
	return false
}

// finish writes the end of a successful response: the rest of the stream
// (usage chunk when asked for, [DONE]) or the whole completion, and
// accounts its tokens to the endpoint that finished it.
func (c *gatewayCall) finish(t target, res attemptResult, outcome string) {
	u := c.finalUsage()
	c.g.m.gatewayTokens(t.ep.Name, u.PromptTokens, u.CompletionTokens)
	c.g.m.gatewayResponse(outcome)
	if !c.rq.stream {
		c.w.Header().Set(headerEndpoint, t.ep.Name)
		writeJSONBody(c.w, http.StatusOK, c.completion(t, res.model, u))
		return
	}
	if !c.sent { // a continuation that added nothing, or an answer with no content
		c.startStream(t)
	}
	// What the attempt held back before content: for an answer with no
	// content (a filter's refusal), its role and finish_reason chunks.
	for _, p := range c.pending {
		if c.sse.event(p) != nil {
			return
		}
	}
	c.pending = c.pending[:0]
	if c.rq.includeUsage {
		if c.sse.event(c.usageChunk(t, res.model, u)) != nil {
			return
		}
	}
	_ = c.sse.event(doneEvent)
}

// fail passes on a failure that no other endpoint may fix (a refusal, a
// bad request): the provider's status, code and message.
func (c *gatewayCall) fail(t target, e *upstream.Error) {
	ge, status := providerError(e)
	c.log.Info().Str("endpoint", t.ep.Name).Str("class", string(e.Class)).Int("status", e.Status).
		Str("code", e.Code).Msg("tiers: gateway: passing the provider's error on")
	c.endWithError(status, ge, outcomeErrorOf(e))
}

func outcomeErrorOf(e *upstream.Error) string {
	if e.Class == upstream.ClassRefused {
		return outcomeRefused
	}
	return outcomeError
}

// exhausted ends a request that no target answered.
func (c *gatewayCall) exhausted() {
	if !c.attempted && c.coolingWait > 0 && c.last == nil {
		c.g.m.gatewayResponse(outcomeError)
		writeGatewayError(c.w, http.StatusTooManyRequests, gatewayError{
			Message: fmt.Sprintf("every endpoint for model %q is rate limited; retry after %s", c.rq.model, c.coolingWait.Round(time.Millisecond)),
			Type:    typeRateLimit, Code: "rate_limit_exceeded", retryAfter: c.coolingWait})
		return
	}
	e, endpoint := c.last, c.lastEndpoint
	if c.sent && c.cut != nil {
		e, endpoint = c.cut, c.cutEndpoint
	}
	if e == nil {
		e = &upstream.Error{Class: upstream.ClassServer, Message: "no endpoint could be tried"}
	}
	ge, status := exhaustedError(c.rq.model, endpoint, e, c.sent)
	c.log.Warn().Str("model", c.rq.model).Str("endpoint", endpoint).Str("class", string(e.Class)).
		Int("status", e.Status).Str("code", e.Code).Str("message", e.Message).Bool("cut", c.sent).
		Msg("tiers: gateway: no endpoint could answer")
	outcome := outcomeError
	if c.sent {
		outcome = outcomeCut
	}
	c.endWithError(status, ge, outcome)
}

// endWithError sends ge: as the HTTP error response when nothing was sent
// yet, else as an in-band SSE error event, without [DONE], so that the
// client never takes a truncated answer for a complete one.
func (c *gatewayCall) endWithError(status int, ge gatewayError, outcome string) {
	c.g.m.gatewayResponse(outcome)
	if !c.sent {
		writeGatewayError(c.w, status, ge)
		return
	}
	_ = c.sse.event(ge.body())
}

// startStream writes the headers of a streaming response, naming the
// endpoint that answers.
func (c *gatewayCall) startStream(t target) {
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set(headerEndpoint, t.ep.Name)
	c.w.WriteHeader(http.StatusOK)
	c.sent = true
}

// finalUsage is the usage the client is told: the endpoint's own when one
// endpoint produced the whole answer and reported it, else (a continued
// answer, an endpoint that reports no usage) an estimate of the prompt and
// of the answer the client got. Tokens of failed attempts are not billed.
func (c *gatewayCall) finalUsage() usageOut {
	if !c.continued && c.usage != nil {
		return *c.usage
	}
	p, comp := c.rq.promptTokens(), upstream.EstimateTokens(c.acc.allText())
	return usageOut{PromptTokens: p, CompletionTokens: comp, TotalTokens: p + comp}
}

// newResponseID returns a chat completion id shaped like OpenAI's.
func newResponseID() string {
	return "chatcmpl-" + strconv.FormatUint(rand.Uint64(), 36) + strconv.FormatUint(rand.Uint64(), 36)
}
