package gateway

import (
	"context"
	"fmt"
	"maps"
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

	acc            answerAcc       // the answer so far, across the attempts that continued it
	sent           bool            // stream: the response has started; no clean restart is possible
	pending        [][]byte        // stream: this attempt's chunks before its first content
	continued      bool            // acc holds a cut answer that another endpoint continues
	usage          *usageOut       // the last attempt's usage, as the endpoint reported it
	fingerprint    string          // the answering endpoint's system_fingerprint, the key cut out
	rawFingerprint string          // ... as it came, so that the lean relay redacts it once
	out            []byte          // stream: the lean relay's chunk being built, reused
	excluded       map[string]bool // upstream models that reported context_length: never again
	noPrefill      map[string]bool // targets (key) that refused an assistant prefill with a 400
	match          *matcher        // the attempt regenerates text the client has; nil otherwise
	last           *upstream.Error // the last failure, for the error response
	lastEndpoint   string
	cut            *upstream.Error // the failure that cut the answer the client has partly seen
	cutEndpoint    string
	attempted      bool
	coolingWait    time.Duration // the shortest cooldown that made a target be skipped
}

func newGatewayCall(g *Handler, rq *chatRequest, w http.ResponseWriter) *gatewayCall {
	id := newResponseID()
	return &gatewayCall{g: g, rq: rq, w: w, sse: newSSEWriter(w), id: id, created: time.Now().Unix(),
		log: g.log.With().Str("request", id).Logger(), excluded: map[string]bool{}, noPrefill: map[string]bool{}}
}

// run tries the targets in order (open circuits last) until one answers,
// a provider's refusal or our bad request ends the request, or none is
// left; then it writes the end of the response. It returns when the
// response is complete or the client has gone.
func (c *gatewayCall) run(ctx context.Context, targets []target) {
	ordered, allowed := c.g.order(targets)
	unused := maps.Clone(allowed)
	defer func() { // give back the circuits' trials that were not used
		for key := range unused {
			c.g.circuits.Report(key, upstream.ClassCanceled)
		}
	}()
	for i, t := range ordered {
		if ctx.Err() != nil {
			c.g.m.gatewayResponse(outcomeCanceled)
			return
		}
		if !c.usable(t, true) {
			continue
		}
		if !c.ocrBeforeTarget(ctx, t) {
			continue
		}
		delete(unused, t.circuit) // from here on, account reports it
		if c.tryTarget(ctx, t, !c.healthyAfter(ordered[i+1:], allowed)) {
			return
		}
	}
	c.exhausted()
}

// usable reports whether t may be tried now: its model has not reported
// context_length in this request and no Retry-After cools it down (note
// records the cooldown for the 429 the client may get).
func (c *gatewayCall) usable(t target, note bool) bool {
	if c.excluded[t.ep.Model] {
		return false
	}
	if wait, cooling := c.g.cool.remaining(t.key(), time.Now()); cooling {
		if note && (c.coolingWait == 0 || wait < c.coolingWait) {
			c.coolingWait = wait
		}
		return false
	}
	return true
}

// healthyAfter reports whether one of ts is usable and has its circuit
// closed: then a failing endpoint is left at once rather than retried.
func (c *gatewayCall) healthyAfter(ts []target, allowed map[string]bool) bool {
	for _, t := range ts {
		if allowed[t.circuit] && c.usable(t, false) {
			return true
		}
	}
	return false
}

// mode is how one attempt takes over an answer another attempt cut.
type mode struct {
	prefill  string // continue this partial answer as an assistant prefill
	suppress bool   // restart, and hold back the text the client already has
}

// prepare decides how t takes over an answer that an attempt cut: it
// continues the partial answer as an assistant prefill when t accepts one
// (and has not refused one in this request); else, if the client has seen
// none of it, the answer restarts cleanly; else t regenerates the answer
// and the text the client already has is held back (see matcher). ok is
// false when t cannot be used: the answer is not plain text of one choice.
func (c *gatewayCall) prepare(t target) (m mode, ok bool) {
	if c.acc.empty() {
		return mode{}, true
	}
	plain := c.acc.plainText() && c.rq.n == 1
	switch {
	case t.ep.Prefill && plain && !c.noPrefill[t.key()]:
		c.continued = true
		return mode{prefill: c.acc.text()}, true
	case !c.sent:
		c.acc.reset()
		c.continued = false
		return mode{}, true
	case plain:
		c.continued = true
		return mode{suppress: true}, true
	}
	return mode{}, false
}

// settle handles the end of one attempt on t and reports whether the
// request is over.
func (c *gatewayCall) settle(ctx context.Context, t target, res attemptResult) bool {
	switch e := res.err; {
	case res.diverged:
		c.diverged(t)
		return true
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
	case !e.Class.Fallbackable() && !res.prefillRefused:
		c.fail(t, e)
		return true
	}
	c.last, c.lastEndpoint = res.err, t.ep.Name
	if res.started && c.sent && c.cut == nil {
		c.cut, c.cutEndpoint = res.err, t.ep.Name
	}
	return false
}

// diverged ends a stream whose regenerated answer on t differs from what
// the client already has: an in-band error naming the cut, no [DONE].
func (c *gatewayCall) diverged(t target) {
	detail := "the stream was cut"
	if c.cut != nil {
		detail = fmt.Sprintf("%s: %s", c.cutEndpoint, failureDetail(c.cut))
	}
	ge := gatewayError{Type: typeServerError, Code: "stream_cut", Message: fmt.Sprintf(
		"poise gateway: the answer was cut (%s); %s regenerated a different answer, so it cannot be continued", detail, t.ep.Name)}
	c.log.Warn().Str("endpoint", t.ep.Name).Str("cut_endpoint", c.cutEndpoint).Msg("tiers: gateway: regenerated answer diverged after a cut")
	c.endWithError(http.StatusBadGateway, ge, outcomeCut)
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
