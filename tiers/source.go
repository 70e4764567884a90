package tiers

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// Transport tunables of the shared HTTP client. Streams have no overall
// timeout: the caller's ctx, the first-token timeout and the stall
// watchdog bound them.
const (
	dialTimeout           = 3 * time.Second
	tlsHandshakeTimeout   = 5 * time.Second
	responseHeaderTimeout = 30 * time.Second // a backstop; first-token timeouts are shorter
	idleConnTimeout       = 90 * time.Second
	maxIdleConnsPerHost   = 64                     // connections kept per backend
	drainTimeout          = 250 * time.Millisecond // reading past the finish chunk
)

// Completion limits: about 120 words or 200 characters, with room to spare.
const (
	maxTokensFull  = 400 // tokens, L1
	maxTokensShort = 300 // tokens, L2
	temperature    = 0.3
)

// Finish reasons of a stream.
const (
	finishStop   = "stop"
	finishLength = "length"
	finishFilter = "content_filter"
)

// NewHTTPClient returns the HTTP client shared by every source and probe:
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

// Source is one OpenAI-compatible streaming backend (a vendor or the local
// model). It never retries by itself: the engine decides what comes next.
// Safe for concurrent use.
type Source struct {
	ep     Endpoint
	client openai.Client
	stall  time.Duration
}

// NewSource returns a source for ep using hc (NewHTTPClient if nil). ep's
// zero StallMS means the default.
func NewSource(ep Endpoint, hc *http.Client) *Source {
	if hc == nil {
		hc = NewHTTPClient()
	}
	client := openai.NewClient(
		option.WithBaseURL(ep.BaseURL),
		option.WithAPIKey(ep.APIKey), // even when empty: never inherit OPENAI_API_KEY
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(errorBodies(ep.APIKey)),
	)
	return &Source{ep: ep, client: client, stall: ms(orDefault(ep.StallMS, defaultStallMS))}
}

// Name is the backend name.
func (s *Source) Name() string { return s.ep.Name }

// call is one streaming request.
type call struct {
	messages   []openai.ChatCompletionMessageParamUnion
	model      string        // the endpoint's Model or LargerModel
	prefill    string        // non-empty: continue this partial answer
	firstToken time.Duration // first-token timeout
	maxTokens  int64
	usage      bool // ask for the usage chunk (stream_options.include_usage): set when a Budget counts
}

// result is how a call ended.
type result struct {
	text    string      // the content this call produced
	started bool        // at least one content token arrived
	finish  string      // the finish_reason, "" when the stream ended without one
	err     *Error      // nil on success
	usage   *tokenUsage // the tokens the backend reported, nil when it sent no usage chunk
}

// tokenUsage is a backend's own count of one call's tokens.
type tokenUsage struct {
	prompt, completion int
}

// chunkUsage returns the usage a chunk carries, if any: OpenAI sends it on
// a last chunk with empty choices when include_usage is asked.
func chunkUsage(ch openai.ChatCompletionChunk) *tokenUsage {
	u := ch.Usage
	if u.PromptTokens == 0 && u.CompletionTokens == 0 {
		return nil
	}
	return &tokenUsage{prompt: int(u.PromptTokens), completion: int(u.CompletionTokens)}
}

// Errors that the watchdog puts as the cause of a call's context.
var (
	errFirstToken = errors.New("tiers: no first token in time")
	errStall      = errors.New("tiers: stream stalled")
)

// stream runs c and passes each content token to onToken, in order, on
// the calling goroutine. onToken returns false when nobody wants more
// tokens; stream then stops and reports ClassCanceled. stream returns when
// the answer is complete, fails, or ctx is done.
func (s *Source) stream(ctx context.Context, c call, onToken func(string) bool) result {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// One watchdog timer: first the first-token timeout, then, after the
	// first token, the stall timeout, armed only while waiting for a chunk.
	var started atomic.Bool
	watchdog := time.AfterFunc(c.firstToken, func() {
		if started.Load() {
			cancel(errStall)
		} else {
			cancel(errFirstToken)
		}
	})
	defer watchdog.Stop()

	st := s.client.Chat.Completions.NewStreaming(sctx, s.params(c), s.callOptions(c)...)
	defer st.Close()
	var (
		res  result
		text strings.Builder
	)
	for {
		if res.started {
			watchdog.Reset(s.stall)
		}
		ok := st.Next()
		if res.started {
			watchdog.Stop()
		}
		if !ok {
			break
		}
		chunk := st.Current()
		if u := chunkUsage(chunk); u != nil {
			res.usage = u
		}
		if len(chunk.Choices) == 0 {
			continue // a usage chunk
		}
		ch := chunk.Choices[0]
		if ch.Delta.Refusal != "" {
			res.err = &Error{Class: ClassRefused, Message: ch.Delta.Refusal}
			break
		}
		if tok := ch.Delta.Content; tok != "" {
			if !res.started {
				res.started = true
				started.Store(true)
				watchdog.Stop()
			}
			text.WriteString(tok)
			if !onToken(tok) {
				res.err = &Error{Class: ClassCanceled, Err: context.Canceled}
				break
			}
		}
		if ch.FinishReason != "" {
			res.finish = ch.FinishReason
			if u := s.drain(st, watchdog); u != nil {
				res.usage = u
			}
			break
		}
	}
	res.text = text.String()
	if res.err == nil {
		res.err = s.endError(ctx, sctx, st.Err(), res, c.prefill != "")
	}
	return res
}

// drain reads what follows the finish chunk (a usage chunk, [DONE]) so
// that the connection can be reused, for at most drainTimeout: a server
// that never sends [DONE] must not hold a complete answer back. Whatever
// goes wrong here does not change the answer. It returns the usage of a
// usage chunk, if one came.
func (s *Source) drain(st *ssestream.Stream[openai.ChatCompletionChunk], watchdog *time.Timer) *tokenUsage {
	watchdog.Reset(drainTimeout)
	var u *tokenUsage
	for st.Next() {
		if cu := chunkUsage(st.Current()); cu != nil {
			u = cu
		}
	}
	watchdog.Stop()
	return u
}

// endError classifies how a stream ended: the watchdog's cause, the
// caller's cancellation, the stream's error, or a missing finish_reason.
// An empty answer is a server failure, except for a continuation (the
// prefill may have been complete already).
func (s *Source) endError(ctx, sctx context.Context, err error, res result, continuation bool) *Error {
	switch cause := context.Cause(sctx); {
	case res.finish == finishFilter:
		return &Error{Class: ClassRefused, Code: finishFilter, Message: "finish_reason content_filter"}
	case res.finish != "" && !res.started && !continuation:
		return &Error{Class: ClassServer, Message: "empty answer, finish_reason " + res.finish}
	case res.finish != "":
		return nil // complete ("stop"), or truncated by our own limit ("length"); errors while draining do not matter
	case ctx.Err() != nil:
		return &Error{Class: ClassCanceled, Err: context.Cause(ctx)}
	case errors.Is(cause, errFirstToken), errors.Is(cause, errStall), errors.Is(cause, errNoResponse):
		if res.started { // the watchdog raced the first token, or a stall
			return &Error{Class: ClassCut, Err: cause}
		}
		return &Error{Class: ClassTimeout, Err: cause}
	}
	e := withoutKey(classify(err), s.ep.APIKey)
	if e == nil {
		e = &Error{Class: ClassServer, Message: "stream ended without finish_reason"}
	}
	if res.started && e.Class.Fallbackable() {
		// After the first token any broken stream is a cut: its text
		// is partial whatever broke it.
		cut := *e
		cut.Class = ClassCut
		return &cut
	}
	return e
}

// params builds the request body of c.
func (s *Source) params(c call) openai.ChatCompletionNewParams {
	msgs := c.messages
	if c.prefill != "" {
		msgs = append(msgs[:len(msgs):len(msgs)], openai.AssistantMessage(c.prefill))
	}
	p := openai.ChatCompletionNewParams{
		Model:       c.model,
		Messages:    msgs,
		Temperature: openai.Float(temperature),
	}
	if c.maxTokens > 0 {
		// max_tokens rather than max_completion_tokens: every
		// OpenAI-compatible server we target accepts it.
		p.MaxTokens = openai.Int(c.maxTokens)
	}
	if c.usage {
		// Only when a Budget counts: an old server may reject the field.
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p
}

// callOptions are the per-request options of c: a continuation asks vLLM
// to continue the trailing assistant message rather than start a new one
// (servers that need no such flag ignore unknown fields).
func (s *Source) callOptions(c call) []option.RequestOption {
	if c.prefill == "" {
		return nil
	}
	return []option.RequestOption{
		option.WithJSONSet("continue_final_message", true),
		option.WithJSONSet("add_generation_prompt", false),
	}
}
