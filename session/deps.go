package session

import (
	"context"

	"github.com/poise-dev/poise/tiers"
)

// Answerer answers one question, streaming its parts through emit: the
// events are the answer's whole story. Answer blocks until the answer is
// complete or ctx is done; emit is called from Answer's goroutine. An
// answer that never starts (a lone End with tiers.ReasonNone, or no event
// at all) means no source had content, and the session shows the coach
// instead. tiers.Engine is the production Answerer.
type Answerer interface {
	Answer(ctx context.Context, req tiers.Request, emit func(tiers.Event))
}

// Health tells sessions the highest level the shared health state supports
// and when that may have changed. tiers/health.Center is the production
// Health.
// Subscribe returns a channel of signals that the caller must stop reading
// only after calling the returned cancel function.
type Health interface {
	Supported() tiers.Level
	Subscribe(buf int) (<-chan tiers.Signal, func())
}

// staticHealth supports one fixed level and never signals.
type staticHealth tiers.Level

func (h staticHealth) Supported() tiers.Level { return tiers.Level(h) }

func (h staticHealth) Subscribe(int) (<-chan tiers.Signal, func()) { return nil, func() {} }
