package tiers

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// Engine answers questions from the best healthy source, falling through
// L1 → L2 → L3 within one question. Safe for concurrent use; one Engine
// serves every session.
type Engine struct {
	cfg     Config
	vendors []*upstream.Client // L1, in priority order
	local   *upstream.Client   // L2; nil when not configured
	slots   chan struct{}      // the L2 bulkhead: one token per local request in flight
	tpl     Templates          // L3; nil when not configured
	vision  *upstream.Client   // Tier V; nil when not configured
	reader  Reader             // Tier O; nil when not configured
	pacer   *upstream.Pacer    // nil: streams are read as their events come
	health  Health             // nil: every configured level is usable
	hc      *http.Client
	log     zerolog.Logger
	m       *Metrics
}

// NewEngine returns an engine for cfg (zero fields mean their defaults).
// health may be nil (no health decisions; a nil *health.Center is not
// nil here), tpl may be nil (no L3), m may
// be nil (no metrics). All sources share one HTTP client.
func NewEngine(cfg Config, health Health, tpl Templates, log zerolog.Logger, m *Metrics, opts ...Option) *Engine {
	cfg = cfg.WithDefaults()
	hc := cfg.HTTPClient
	if hc == nil {
		hc = upstream.NewHTTPClient()
	}
	e := &Engine{cfg: cfg, tpl: tpl, health: health, hc: hc, log: log, m: m}
	for _, o := range opts {
		o(e)
	}
	if v := cfg.L1.Vision; v.BaseURL != "" {
		e.vision = upstream.New(v.Endpoint, hc)
	}
	for _, v := range cfg.L1.Vendors {
		e.vendors = append(e.vendors, upstream.New(v, hc))
	}
	if cfg.L2.BaseURL != "" {
		e.local = upstream.New(cfg.L2.Endpoint(), hc)
		e.slots = make(chan struct{}, cfg.L2.MaxInFlight)
	}
	return e
}

// Close releases the engine's idle connections. Call it after the last
// Answer has returned.
func (e *Engine) Close() { e.hc.CloseIdleConnections() }

// answering is the state of one Answer call. Owned by the Answer
// goroutine: the L1 attempts send it tokens through channels.
type answering struct {
	e     *Engine
	req   Request
	emit  func(Event)
	start time.Time
	sla   time.Time // start + sla_ms: the budget a Retry-After must fit in

	answered   bool            // Start was emitted
	refused    bool            // a provider refused (content filter or policy): try no model
	overBudget []string        // backends the Budget had no room for (Event.OverBudget)
	text       strings.Builder // every content token emitted so far
	via        string          // a screenshot question's Event.Via: how the answer read it
	noModels   bool            // a bad_request: no more model attempts
	failed     map[string]bool // sources that failed (or were cut) this question
}

// Answer answers req, emitting Start, Deltas and End through emit on the
// calling goroutine: the events are the whole story of the answer, and
// when no source had content, a lone End with ReasonNone tells it (the
// caller shows the coach). It starts at req.Level and
// falls through L1 → L2 → L3 as each fails before its first token,
// skipping levels the health center marks down and levels that are not
// configured. A stream cut after its first token continues on the next
// source that accepts a prefill, else ends with Reason "cut".
//
// Answer does not show the coach when sla_ms passes: the caller does, and
// may let Answer finish. When ctx is done Answer stops every request and
// returns promptly without emitting End; the caller knows why it
// cancelled. Every goroutine Answer starts has returned when it returns.
//
// A screenshot question (req.Image) goes to the vision model and, at
// once and beside it, to OCR; when the vision model has no first token
// within l1.vision.first_token_ms (or fails, or its circuit is open, or
// there is none), the OCR text (sent as EventRead) is answered like a
// typed question through the levels above (see screenshot.go).
func (e *Engine) Answer(ctx context.Context, req Request, emit func(Event)) {
	var a *answering
	if req.Image != nil {
		a = e.answerScreenshot(ctx, req, emit)
	} else {
		a = e.answer(ctx, req, emit)
	}
	if !a.answered && ctx.Err() == nil {
		emit(Event{Kind: EventEnd, Reason: ReasonNone, OverBudget: a.overBudget})
	}
}

// answer runs the levels of one Answer call.
func (e *Engine) answer(ctx context.Context, req Request, emit func(Event)) *answering {
	a := e.newAnswering(req, emit)
	a.levels(ctx)
	return a
}

func (e *Engine) newAnswering(req Request, emit func(Event)) *answering {
	now := time.Now()
	return &answering{e: e, req: req, emit: emit, start: now, sla: now.Add(ms(e.cfg.SLAms)),
		failed: map[string]bool{}}
}

// levels runs the levels of a text question, from the request's level.
func (a *answering) levels(ctx context.Context) {
	req := a.req
	level := max(req.Level, L1)
	if level <= L1 && a.usable(L1) {
		if a.runL1(ctx) {
			return
		}
	}
	if level <= L2 && a.usable(L2) {
		if a.runL2(ctx) {
			return
		}
	}
	if level <= L3 && !req.NoTemplates && a.usable(L3) && ctx.Err() == nil {
		a.runL3(ctx)
	}
}

// usable reports whether level l is configured, allowed after a
// bad_request, and not marked down by the health center (unless the
// request asks to retry every level).
func (a *answering) usable(l Level) bool {
	if a.refused || a.answered {
		return false
	}
	switch l {
	case L1:
		if a.noModels || len(a.e.vendors) == 0 {
			return false
		}
	case L2:
		if a.noModels || a.e.local == nil {
			return false
		}
	case L3:
		if a.e.tpl == nil {
			return false
		}
	}
	return a.e.health == nil || a.req.Retry || !a.e.health.Down(l)
}

// begin emits Start once, when the first useful content exists.
func (a *answering) begin(l Level, source, note string) {
	a.beginWith(Event{Level: l, Source: source, Note: note})
}

// beginWith is begin for a Start with more fields (L3's Matched, Outline).
func (a *answering) beginWith(ev Event) {
	if a.answered {
		return
	}
	a.answered = true
	a.e.m.observeFirstContent(ev.Level, time.Since(a.start).Seconds())
	ev.Kind, ev.Via, ev.OverBudget = EventStart, a.via, slices.Clone(a.overBudget)
	a.emit(ev)
}

// delta emits one piece of content.
func (a *answering) delta(text string) {
	a.text.WriteString(text)
	a.emit(Event{Kind: EventDelta, Text: text})
}

// end emits End.
func (a *answering) end(reason string) {
	a.emit(Event{Kind: EventEnd, Reason: reason, OverBudget: slices.Clone(a.overBudget)})
}

// fits reports whether waiting d still leaves the retry, and as long again
// for its first token, inside the question's budget (and ctx's deadline).
func (a *answering) fits(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return false // no Retry-After: move on rather than hammer a limited vendor
	}
	// The retry needs time of its own for a first token: wait only if as
	// long again is left after it. Otherwise the next source is faster.
	at := time.Now().Add(2 * d)
	if dl, ok := ctx.Deadline(); ok && !at.Before(dl) {
		return false
	}
	return at.Before(a.sla)
}

// finish ends an answer whose source produced its first token and then
// ended with res: done, cut by our own token limit, refused part-way, or
// broken (continued elsewhere if possible, else cut).
func (a *answering) finish(ctx context.Context, level Level, src *upstream.Client, res result) {
	a.account(level, src, res.err)
	switch {
	case res.err == nil && res.finish == upstream.FinishLength:
		a.end(ReasonCut) // our own token limit: honest, but not complete
	case res.err == nil:
		a.end(ReasonDone)
	case res.err.Class == upstream.ClassRefused:
		a.end(ReasonCut)
	case res.err.Class == upstream.ClassCanceled || ctx.Err() != nil:
		// The caller cancelled: no End, see Answer.
	default:
		a.continueCut(ctx)
	}
}

// reportResult counts one request's end in metrics and health.
func (e *Engine) reportResult(l Level, backend string, c upstream.Class) {
	if e.health != nil {
		e.health.ReportResult(l, backend, c)
	}
}

// logFailure logs one failed request once; bad_request is our bug and is
// logged as an error with the provider's code and message.
func (e *Engine) logFailure(req Request, src string, err *upstream.Error) {
	ev := e.log.Debug()
	switch err.Class {
	case upstream.ClassBadRequest:
		ev = e.log.Error()
	case upstream.ClassCanceled:
		return
	case upstream.ClassRefused:
		ev = e.log.Info()
	}
	ev.Str("question", req.ID).Str("backend", src).Str("class", string(err.Class)).
		Int("status", err.Status).Str("code", err.Code).Str("message", err.Message).
		AnErr("cause", err.Err).Msg("tiers: backend request failed")
}
