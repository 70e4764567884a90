package sim

import (
	"context"
	"sync"
)

// Counters tell what one model saw. Every request ends as exactly one of
// Completed, Cancelled or Failed, so once nothing is in flight
// Requests == Completed + Cancelled + Failed.
type Counters struct {
	Requests  int64 `json:"requests"`  // model requests received (chat, embeddings, transcriptions, /inference)
	Completed int64 `json:"completed"` // answered in full as the fault intended (also NoDone and FilterFinish)
	Cancelled int64 `json:"cancelled"` // the client went away before the answer was finished
	Failed    int64 `json:"failed"`    // ended by an error status, reset, cut, malformed chunk, error event or a bad request
	Streams   int64 `json:"streams"`   // requests that asked for an SSE stream
	Probes    int64 `json:"probes"`    // GET /health and /v1/models; counted under ?model=, else under ""
	InFlight  int64 `json:"in_flight"` // requests not yet ended
	Images    int64 `json:"images"`    // image_url parts in chat requests that were accepted
}

func (c *Counters) add(o Counters) {
	c.Requests += o.Requests
	c.Completed += o.Completed
	c.Cancelled += o.Cancelled
	c.Failed += o.Failed
	c.Streams += o.Streams
	c.Probes += o.Probes
	c.InFlight += o.InFlight
	c.Images += o.Images
}

// overflowModel collects the counts of models beyond maxTrackedModels.
const overflowModel = "_overflow"

// Counters returns model's counters. Counters(AnyModel) returns the sum
// over every model, including probes that named no model.
func (s *Server) Counters(model string) Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.countersLocked(model)
}

func (s *Server) countersLocked(model string) Counters {
	if model != AnyModel {
		if c, ok := s.counters[model]; ok {
			return *c
		}
		return Counters{}
	}
	var sum Counters
	for _, c := range s.counters {
		sum.add(*c)
	}
	return sum
}

// AllCounters returns every model's counters; probes that named no model
// are under "".
func (s *Server) AllCounters() map[string]Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Counters, len(s.counters))
	for m, c := range s.counters {
		out[m] = *c
	}
	return out
}

// WaitFor blocks until cond holds for model's counters (AnyModel: the sum),
// or ctx is done. It returns the counters it last saw and ctx's error if
// cond never held. Tests use it instead of sleeping: the server notices a
// client that went away a little after the client returns.
func (s *Server) WaitFor(ctx context.Context, model string, cond func(Counters) bool) (Counters, error) {
	for {
		s.mu.Lock()
		c := s.countersLocked(model)
		changed := s.changed
		s.mu.Unlock()
		if cond(c) {
			return c, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return c, ctx.Err()
		}
	}
}

// resetCounters zeroes every counter, except requests still in flight.
func (s *Server) resetCounters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for m, c := range s.counters {
		if c.InFlight == 0 {
			delete(s.counters, m)
			continue
		}
		*c = Counters{InFlight: c.InFlight}
	}
	s.notifyLocked()
}

// count adds d to model's counters and wakes WaitFor.
func (s *Server) count(model string, d Counters) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.counters[model]
	if !ok {
		if len(s.counters) >= maxTrackedModels {
			model = overflowModel
			c, ok = s.counters[model]
		}
		if !ok {
			c = &Counters{}
			s.counters[model] = c
		}
	}
	c.add(d)
	if d.Requests > 0 {
		s.noteModelLocked(model)
	}
	s.notifyLocked()
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// outcome is how a model request ended.
type outcome int

const (
	outcomeCompleted outcome = iota + 1
	outcomeCancelled
	outcomeFailed
)

func (o outcome) String() string {
	switch o {
	case outcomeCompleted:
		return "completed"
	case outcomeCancelled:
		return "cancelled"
	case outcomeFailed:
		return "failed"
	}
	return "unknown"
}

// call tracks one model request from begin to end.
type call struct {
	s     *Server
	model string
	once  sync.Once
}

// begin counts a new request of model.
func (s *Server) begin(model string, stream bool) *call {
	d := Counters{Requests: 1, InFlight: 1}
	if stream {
		d.Streams = 1
	}
	s.count(model, d)
	return &call{s: s, model: model}
}

// end counts how the request ended; only the first call counts.
func (c *call) end(o outcome) {
	c.once.Do(func() {
		d := Counters{InFlight: -1}
		switch o {
		case outcomeCompleted:
			d.Completed = 1
		case outcomeCancelled:
			d.Cancelled = 1
		default:
			d.Failed = 1
		}
		c.s.count(c.model, d)
		c.s.log.Debug().Str("model", c.model).Stringer("outcome", o).Msg("vendorsim: request ended")
	})
}
