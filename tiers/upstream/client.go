package upstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/rs/zerolog"
)

// Transport tunables of the shared HTTP client. Streams have no overall
// timeout: the caller's ctx, the first-token timeout and the stall
// watchdog bound them.
const (
	dialTimeout           = 3 * time.Second
	tlsHandshakeTimeout   = 5 * time.Second
	responseHeaderTimeout = 30 * time.Second // a backstop; first-token timeouts are shorter
	idleConnTimeout       = 90 * time.Second
	drainTimeout          = 250 * time.Millisecond // reading past the finish chunk

	// maxIdleConnsPerHost covers the streams a busy node holds open to one
	// backend at once (about 500 per vendor at 1,000 sessions in the load
	// benchmark). At 64 the pool closed connections as the load swayed and
	// dialled them again: dials were 1.7% of poise's CPU, 0.8% at 1024. An
	// idle connection costs about 20 KiB until idleConnTimeout.
	maxIdleConnsPerHost = 1024
)

// defaultStallMS is an endpoint's stall_ms when it sets none.
const defaultStallMS = 2000

// Finish reasons of a stream.
const (
	FinishLength = "length"
	FinishFilter = "content_filter"
)

// NewHTTPClient returns the HTTP client shared by every client and probe:
// bounded dial, TLS and response-header waits, pooled connections, and no
// overall timeout (streams are bounded by their ctx and watchdogs).
func NewHTTPClient() *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		IdleConnTimeout:       idleConnTimeout,
		MaxIdleConns:          4 * maxIdleConnsPerHost,
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: tr}
}

// Client streams chat completions from one OpenAI-compatible server (a
// vendor, the local model, a gateway endpoint). It never retries by
// itself: its caller decides what comes next. Safe for concurrent use.
type Client struct {
	ep    Endpoint
	api   openai.Client
	stall time.Duration
	m     *Metrics // nil: none
	log   zerolog.Logger
}

// Option configures a Client.
type Option func(*Client)

// WithMetrics counts the client's bad stream events in m
// (poise_upstream_bad_events_total{backend}).
func WithMetrics(m *Metrics) Option { return func(c *Client) { c.m = m } }

// WithLog logs the client's skipped stream events to log (default: none).
func WithLog(log zerolog.Logger) Option { return func(c *Client) { c.log = log } }

// New returns a client for ep using hc (NewHTTPClient if nil). ep's zero
// StallMS means defaultStallMS.
func New(ep Endpoint, hc *http.Client, opts ...Option) *Client {
	if hc == nil {
		hc = NewHTTPClient()
	}
	api := openai.NewClient(
		option.WithBaseURL(ep.BaseURL),
		option.WithAPIKey(ep.APIKey), // even when empty: never inherit OPENAI_API_KEY
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(errorBodies(ep.APIKey), inMemoryBody),
	)
	stall := ep.StallMS
	if stall == 0 {
		stall = defaultStallMS
	}
	c := &Client{ep: ep, api: api, stall: time.Duration(stall) * time.Millisecond, log: zerolog.Nop()}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Name is the backend name.
func (c *Client) Name() string { return c.ep.Name }

// Endpoint is the endpoint the client was made for.
func (c *Client) Endpoint() Endpoint { return c.ep }

// Call is one streaming request: either Messages with Model, MaxTokens,
// Temperature and Usage, built into an OpenAI request, or a ready Body.
type Call struct {
	Messages    []openai.ChatCompletionMessageParamUnion
	Model       string
	MaxTokens   int64   // 0: no max_tokens
	Temperature float64 // 0: the server's default
	Usage       bool    // ask for the usage chunk (stream_options.include_usage)
	// Body, when set, is sent as the request body as it is (the gateway's
	// client request, with stream and the model set); the fields above
	// are then not used.
	Body []byte
	// Prefill continues this partial answer: it is sent as a trailing
	// assistant message with the flags vLLM needs to continue it. With
	// Body, the body carries the message itself, and Prefill only marks
	// the call as a continuation (an empty answer is then no failure).
	Prefill string
	// HeaderTimeout bounds the wait for the response headers (0: none but
	// FirstToken's): a server that does not answer at all fails with
	// ClassTimeout.
	HeaderTimeout time.Duration
	// FirstToken bounds the wait for the first content: from the request
	// when HeaderTimeout is 0 (the engine's tight budgets: a silent server
	// is slow too), else from the response headers, so that the two
	// limits are separate.
	FirstToken time.Duration
	// Stall is the silence after the first content that cuts the stream
	// (0: the endpoint's stall_ms).
	Stall time.Duration
	// Pacer spaces the stream's reads after its first content; nil reads
	// as events come.
	Pacer *Pacer
}

// Handler takes the chunks of one stream, in order, on the goroutine that
// called Stream.
type Handler interface {
	// Chunk takes one chunk. content reports that it carried the answer's
	// content (the first one ends the first-token wait; from then on the
	// stall watchdog runs). A non-empty finish reports that the answer is
	// complete: Stream then reads what follows (a usage chunk, [DONE]) for
	// a short while, passing it to Chunk, and ends. A non-nil err stops
	// the stream: an *Error is its result, anything else (a client that
	// went away) ends it with ClassCanceled.
	Chunk(ch openai.ChatCompletionChunk) (content bool, finish string, err error)
	// Ended is the finish_reason to take when the stream ended cleanly
	// ([DONE]) before Chunk reported one; "" means none, and the stream
	// counts as broken.
	Ended() string
}

// Result is how a stream ended.
type Result struct {
	Started bool   // content arrived
	Finish  string // the finish_reason; "" when the stream ended without one
	Err     *Error // nil on success
}

// stream sends call and passes each chunk to its handler (through s)
// until the answer is complete, fails, or ctx is done. Its timers: no response headers within
// HeaderTimeout, or no first content within FirstToken, fail with
// ClassTimeout; silence longer than Stall after the first content is a cut
// (ClassCut): only a decoded chunk ends a silence, undecodable events do
// not. An undecodable event is skipped and counted (see eventReader); one
// that may have carried content, or a stream of mostly such events, is
// broken. After the finish it reads at most drainTimeout more, so a server
// that never sends [DONE] cannot hold a complete answer back. A broken
// stream after its first content is always a cut: its text is partial
// whatever broke it.
func (c *Client) stream(ctx context.Context, call Call, s sink) Result {
	body := call.Body
	if body == nil {
		var err error
		if body, err = chatBody(call); err != nil {
			return Result{Err: &Error{Class: ClassBadRequest, Message: "encoding the request: " + err.Error()}}
		}
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := call.Stall
	if stall <= 0 {
		stall = c.stall
	}
	k := startClocks(call, stall, cancel)
	defer k.stop()

	// Post returns once the response headers have arrived.
	var raw *http.Response
	err := c.api.Post(sctx, "chat/completions", nil, &raw, option.WithRequestBody("application/json", body))
	k.headers()
	if err != nil {
		return Result{Err: c.endError(ctx, sctx, err, Result{}, call.Prefill != "")}
	}
	defer raw.Body.Close()
	ev := newEventReader(raw.Body, c.ep.APIKey)
	res := c.relay(ev, s, k, pacing{p: call.Pacer})
	if res.Err != nil {
		return res
	}
	streamErr := ev.err
	if errors.Is(streamErr, io.EOF) {
		streamErr = nil
	}
	if res.Finish == "" && streamErr == nil {
		res.Finish = s.ended()
	}
	res.Err = c.endError(ctx, sctx, streamErr, res, call.Prefill != "")
	return res
}

// relay passes the events of ev to the handler (through s) until the
// finish (then drains what follows), the end of the stream, or the
// handler's error, which is the result's Err. It flushes the handler when
// no further event is at hand and, after the first content, then waits
// for the pacer before the next read.
func (c *Client) relay(ev *eventReader, s sink, k *clocks, pace pacing) Result {
	var res Result
	for {
		kind, ok := ev.next(s.decode)
		if kind == eventBad {
			c.badEvent(ev)
		}
		if !ok || kind == eventDone {
			break
		}
		if kind == eventBad {
			continue
		}
		if res.Started {
			k.pause()
		}
		content, finish, err := s.take()
		if content && !res.Started {
			res.Started = true
			k.started()
		}
		pause := false
		if err == nil && (finish != "" || !ev.ready()) {
			err = s.flush() // nothing more at hand: the handler passes on what it gathered
			pause = res.Started
		}
		if err != nil {
			res.Err = asError(err)
			return res
		}
		if finish != "" {
			res.Finish = finish
			drain(ev, s, k)
			break
		}
		if pause {
			pace.pause()
		}
		if res.Started {
			k.rearm()
		}
	}
	if err := s.flush(); err != nil { // what came before a break
		res.Err = asError(err)
	}
	return res
}

// badEvent counts an undecodable event, and logs the first of a stream.
func (c *Client) badEvent(ev *eventReader) {
	c.m.BadEvent(c.ep.Name)
	if ev.bad == 1 {
		c.log.Warn().Str("backend", c.ep.Name).Int("bytes", len(ev.data)).AnErr("ended", ev.err).
			Msg("upstream: undecodable stream event skipped (logged once per stream)")
	}
}

// asError is the result of a stream that its handler stopped.
func asError(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Class: ClassCanceled, Err: err}
}

// drain reads what follows the finish chunk (a usage chunk, [DONE]) so
// that the connection can be reused, for at most drainTimeout in all.
// Whatever goes wrong here does not change the answer.
func drain(ev *eventReader, s sink, k *clocks) {
	k.drain()
	defer k.stop()
	for {
		kind, ok := ev.next(s.decode)
		if !ok || kind == eventDone {
			return
		}
		if kind != eventChunk {
			continue
		}
		if _, _, err := s.take(); err != nil {
			return
		}
	}
}

// endError classifies how a stream ended: the watchdog's cause, the
// caller's cancellation, the stream's error, or a missing finish_reason.
// An empty answer is a server failure, except for a continuation (the
// prefill may have been complete already).
func (c *Client) endError(ctx, sctx context.Context, err error, res Result, continuation bool) *Error {
	switch cause := context.Cause(sctx); {
	case res.Finish == FinishFilter:
		return &Error{Class: ClassRefused, Code: FinishFilter, Message: "finish_reason content_filter"}
	case res.Finish != "" && !res.Started && !continuation:
		return &Error{Class: ClassServer, Message: "empty answer, finish_reason " + res.Finish}
	case res.Finish != "":
		return nil // complete ("stop"), or truncated by the caller's own limit ("length"); errors while draining do not matter
	case ctx.Err() != nil:
		return &Error{Class: ClassCanceled, Err: context.Cause(ctx)}
	case errors.Is(cause, errFirstToken), errors.Is(cause, errStall), errors.Is(cause, errNoResponse):
		if res.Started { // the watchdog raced the first token, or a stall
			return &Error{Class: ClassCut, Err: cause}
		}
		return &Error{Class: ClassTimeout, Err: cause}
	}
	e := withoutKey(classify(err), c.ep.APIKey)
	if e == nil {
		e = &Error{Class: ClassServer, Message: "stream ended without finish_reason"}
	}
	if res.Started && e.Class.Fallbackable() {
		cut := *e
		cut.Class = ClassCut
		return &cut
	}
	return e
}
