package tiers

import (
	"encoding/json"

	"context"
	"errors"
	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
	"slices"
)

// Budget caps the tokens that one request may spend per model backend:
// the session's daily token budget per vendor. The engine asks before
// every model attempt (each hedged attempt, each retry, each
// continuation) and settles after it. Implementations must be safe for
// concurrent use: hedged attempts reserve and settle at once.
type Budget interface {
	// Reserve asks for tokens (the attempt's estimate: its prompt plus
	// the most it may generate) on backend. ok false means the backend
	// has no room: the engine skips it, which is no health failure, and
	// the answer falls to the next source or level. Otherwise settle must
	// be called exactly once, with the tokens the attempt actually used.
	Reserve(ctx context.Context, backend string, tokens int) (settle func(actual int), ok bool)
}

// ErrOverBudget is the cause of an attempt skipped because the request's
// Budget had no room for it.
var ErrOverBudget = errors.New("tiers: over the token budget")

// AttemptTokens is what one model attempt of req at level l (L1 or L2)
// reserves from a Budget: its estimated prompt and its completion limit.
// A daily budget per vendor of n × AttemptTokens allows about n answers
// of that vendor (more, since each settles at what it used).
func AttemptTokens(req Request, l Level) int {
	short := l == L2
	limit := maxTokensFull
	if short {
		limit = maxTokensShort
	}
	return promptTokens(BuildPrompt(req, short), "") + limit
}

// spend settles an attempt's reservation once its call has ended; nil
// means the call was never sent (cancelled during its Retry-After wait).
type spend func(res *result)

// reserve asks the request's Budget for the tokens of call c on src. It
// reports false, and notes src for Event.OverBudget, when src is over budget;
// otherwise the returned spend settles the reservation with what the
// call used. Without a Budget every call may go and spend does nothing.
func (a *answering) reserve(ctx context.Context, src *upstream.Client, c *call) (spend, bool) {
	b := a.req.Budget
	if b == nil {
		return func(*result) {}, true
	}
	c.usage = true
	prompt := promptTokens(c.messages, c.prefill)
	settle, ok := b.Reserve(ctx, src.Name(), prompt+int(c.maxTokens))
	if !ok {
		if !slices.Contains(a.overBudget, src.Name()) {
			a.overBudget = append(a.overBudget, src.Name())
		}
		a.e.log.Debug().Str("question", a.req.ID).Str("backend", src.Name()).Msg("tiers: backend over the token budget; skipped")
		return nil, false
	}
	return func(res *result) {
		if res == nil {
			settle(0)
			return
		}
		settle(usedTokens(prompt, *res))
	}, true
}

// usedTokens is what a call cost: the usage the backend reported, else an
// estimate from the prompt and the text received. A call refused with an
// HTTP error before any token is not billed by vendors and costs nothing.
func usedTokens(prompt int, res result) int {
	switch {
	case res.usage != nil:
		return res.usage.prompt + res.usage.completion
	case !res.started && res.err != nil && res.err.Status != 0:
		return 0
	}
	return prompt + upstream.EstimateTokens(res.text)
}

// overBudget is the result of an attempt the Budget did not allow.
func overBudget() result {
	return result{err: &upstream.Error{Class: upstream.ClassCanceled, Err: ErrOverBudget}}
}

// promptTokens estimates the prompt of a call: its messages and, for a
// continuation, the assistant prefill.
func promptTokens(msgs []openai.ChatCompletionMessageParamUnion, prefill string) int {
	n := 0
	for _, m := range msgs {
		raw, err := json.Marshal(m)
		if err != nil {
			continue
		}
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(raw, &msg)
		n += upstream.MessageTokens(msg.Content)
	}
	if prefill != "" {
		n += upstream.TextMessageTokens(prefill)
	}
	return n
}
