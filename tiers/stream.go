package tiers

import (
	"context"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
)

// Completion limits: about 120 words or 200 characters, with room to spare.
const (
	maxTokensFull  = 400 // tokens, L1
	maxTokensShort = 300 // tokens, L2
	temperature    = 0.3
)

// call is one streaming request of the engine.
type call struct {
	messages   []openai.ChatCompletionMessageParamUnion
	model      string        // the endpoint's Model or LargerModel
	prefill    string        // non-empty: continue this partial answer
	firstToken time.Duration // first-token timeout
	maxTokens  int64
	usage      bool // ask for the usage chunk (stream_options.include_usage): set when a Budget counts
	pacer      *upstream.Pacer
}

// WithPacer spaces the engine's model streams after their first content
// (upstream.Pacer, while the caller runs its Run); without it a stream is
// read as its events come.
func WithPacer(p *upstream.Pacer) Option { return func(e *Engine) { e.pacer = p } }

// result is how a call ended.
type result struct {
	text    string          // the content this call produced
	started bool            // at least one content token arrived
	finish  string          // the finish_reason, "" when the stream ended without one
	err     *upstream.Error // nil on success
	usage   *tokenUsage     // the tokens the backend reported, nil when it sent no usage chunk
}

// tokenUsage is a backend's own count of one call's tokens.
type tokenUsage struct {
	prompt, completion int
}

// stream runs c on src and passes its content to onToken, in order, on the
// calling goroutine: the tokens of one read from the server as one piece.
// onToken returns false when nobody wants more; stream then stops and
// reports ClassCanceled. stream returns when the answer is complete,
// fails, or ctx is done.
func stream(ctx context.Context, src *upstream.Client, c call, onToken func(string) bool) result {
	h := &tokens{onToken: onToken}
	res := src.StreamDeltas(ctx, upstream.Call{Messages: c.messages, Model: c.model, MaxTokens: c.maxTokens,
		Temperature: temperature, Usage: c.usage, Prefill: c.prefill, FirstToken: c.firstToken, Pacer: c.pacer}, h)
	return result{text: h.text.String(), started: res.Started, finish: res.Finish, err: res.Err, usage: h.usage}
}

// tokens reads an answer stream for the engine: choice 0's content, a
// refusal as ClassRefused, the usage chunk. Owned by one stream call.
type tokens struct {
	onToken  func(string) bool
	text     strings.Builder
	pending  int // bytes at the end of text not yet passed to onToken
	usage    *tokenUsage
	finished bool // the finish chunk came: only usage matters now
}

// Delta implements upstream.DeltaHandler.
func (t *tokens) Delta(d upstream.Delta) (bool, string, error) {
	if d.PromptTokens != 0 || d.CompletionTokens != 0 { // OpenAI sends usage on a last chunk with empty choices when include_usage is asked
		t.usage = &tokenUsage{prompt: int(d.PromptTokens), completion: int(d.CompletionTokens)}
	}
	if t.finished || d.Choices == 0 {
		return false, "", nil // a usage chunk, or what follows the finish
	}
	if d.Refusal != "" {
		return false, "", &upstream.Error{Class: upstream.ClassRefused, Message: d.Refusal}
	}
	t.text.WriteString(d.Content)
	t.pending += len(d.Content)
	t.finished = d.Finish != ""
	return d.Content != "", d.Finish, nil
}

// Flush implements upstream.Flusher: the content gathered since the last
// Flush goes to onToken as one piece.
func (t *tokens) Flush() error {
	if t.pending == 0 {
		return nil
	}
	s := t.text.String()
	piece := s[len(s)-t.pending:]
	t.pending = 0
	if !t.onToken(piece) {
		return &upstream.Error{Class: upstream.ClassCanceled, Err: context.Canceled}
	}
	return nil
}

// Ended implements upstream.DeltaHandler: a stream without a finish_reason is
// broken.
func (t *tokens) Ended() string { return "" }
