package sim

import (
	"maps"
	"time"
)

// Fault is what a model does wrong. The zero Fault behaves normally. Fields
// combine: for example Status with FirstTokenDelayMS is a slow error,
// HealthDown with Status 503 is a full outage, and Status 503 alone is a
// partial outage (completions fail while /v1/models and /health answer).
type Fault struct {
	// Status answers with this HTTP status and an OpenAI error body: 429,
	// 500, 503, 402, 404 (model_not_found), 400 ... Statuses outside
	// 400..599 are ignored.
	Status int `json:"status,omitempty"`
	// Code is the error code in the body, e.g. "context_length_exceeded",
	// "content_filter", "content_policy_violation", "insufficient_quota",
	// "model_not_found", "rate_limit_exceeded"; empty picks the usual code
	// for Status.
	Code string `json:"code,omitempty"`
	// RetryAfter is the Retry-After header value (seconds) sent with Status.
	RetryAfter string `json:"retry_after,omitempty"`
	// FailNext limits the whole fault to the next N requests of the model,
	// after which the fault is removed and the model behaves normally;
	// 0 applies it to every request.
	FailNext int `json:"fail_next,omitempty"`
	// NoAnswer accepts the request and never answers, until the client
	// gives up.
	NoAnswer bool `json:"no_answer,omitempty"`
	// ResetBeforeHeaders closes the TCP connection with a reset (SO_LINGER
	// 0) before any header.
	ResetBeforeHeaders bool `json:"reset,omitempty"`
	// FirstTokenDelayMS waits this long before the headers and the first
	// chunk, overriding Options.FirstTokenDelay.
	FirstTokenDelayMS int `json:"first_token_delay_ms,omitempty"`
	// FirstContentDelayMS sends the headers and the opening role chunk at
	// once, then waits this long before the first content chunk (a server
	// that accepts at once and thinks for long; FirstTokenDelayMS delays
	// the headers too).
	FirstContentDelayMS int `json:"first_content_delay_ms,omitempty"`
	// GarbageAfter sends one undecodable event (not a chunk: a bare
	// "data: {oops" line) after content chunk N, then goes on normally: the
	// answer itself is whole.
	GarbageAfter int `json:"garbage_after,omitempty"`
	// RejectPrefill answers 400 invalid_request_error to a request whose
	// messages end with an assistant message (a server that does not
	// accept an assistant prefill); other requests are not affected.
	RejectPrefill bool `json:"reject_prefill,omitempty"`
	// StallAfter streams N content chunks, then stalls until the client
	// cancels. A non-streaming request never gets an answer.
	StallAfter int `json:"stall_after,omitempty"`
	// CutAfter streams N content chunks, then closes the connection without
	// a final chunk or [DONE]. A non-streaming request gets a truncated body.
	CutAfter int `json:"cut_after,omitempty"`
	// MalformedAt makes content chunk N (1-based; the opening role chunk is
	// not counted) invalid JSON. A non-streaming request gets an invalid
	// JSON body.
	MalformedAt int `json:"malformed_at,omitempty"`
	// ErrorAfter streams N content chunks, then an SSE error event
	// (data: {"error":{...}}) and ends the stream, as OpenAI does when a
	// generation fails mid-stream. A non-streaming request gets a 500.
	ErrorAfter int `json:"error_after,omitempty"`
	// NoDone finishes normally (finish_reason "stop") but never sends
	// data: [DONE], and closes the connection.
	NoDone bool `json:"no_done,omitempty"`
	// FilterFinish streams a few chunks, then finishes with finish_reason
	// "content_filter" (the non-streaming answer is cut the same way).
	FilterFinish bool `json:"filter_finish,omitempty"`
	// HealthDown makes GET /health?model=M and GET /v1/models answer 503
	// for this model, so probes fail. Model requests are not affected.
	HealthDown bool `json:"health_down,omitempty"`
	// InferenceDelayMS overrides Options.InferenceDelay for transcriptions
	// and whisper /inference.
	InferenceDelayMS int `json:"inference_delay_ms,omitempty"`
}

// filterFinishChunks is how many content chunks FilterFinish streams.
const filterFinishChunks = 3

// failsWithStatus reports whether the fault answers with an HTTP error.
func (f Fault) failsWithStatus() bool {
	return f.Status >= 400 && f.Status <= 599
}

// firstTokenDelay is the fault's override of def.
func (f Fault) firstTokenDelay(def time.Duration) time.Duration {
	if f.FirstTokenDelayMS > 0 {
		return time.Duration(f.FirstTokenDelayMS) * time.Millisecond
	}
	return def
}

// inferenceDelay is the fault's override of def.
func (f Fault) inferenceDelay(def time.Duration) time.Duration {
	if f.InferenceDelayMS > 0 {
		return time.Duration(f.InferenceDelayMS) * time.Millisecond
	}
	return def
}

// faultState is a fault with its FailNext countdown.
type faultState struct {
	fault     Fault
	remaining int // requests left when fault.FailNext > 0
}

// SetFault replaces model's fault. Model AnyModel ("*") applies to every
// model without a fault of its own. A zero Fault removes the model's fault.
func (s *Server) SetFault(model string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == (Fault{}) {
		delete(s.faults, model)
	} else {
		s.faults[model] = &faultState{fault: f, remaining: f.FailNext}
		s.noteModelLocked(model)
	}
	s.log.Info().Str("model", model).Interface("fault", f).Msg("vendorsim: fault set")
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
	s.log.Info().Msg("vendorsim: faults cleared")
}

// Faults returns the faults in force by model. A FailNext fault shows the
// requests it has left in FailNext.
func (s *Server) Faults() map[string]Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Fault, len(s.faults))
	for m, st := range s.faults {
		f := st.fault
		if f.FailNext > 0 {
			f.FailNext = st.remaining
		}
		out[m] = f
	}
	return out
}

// takeFault returns the fault that applies to one request of model and
// counts it against FailNext.
func (s *Server) takeFault(model string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := model
	st, ok := s.faults[key]
	if !ok {
		key = AnyModel
		st, ok = s.faults[key]
	}
	if !ok {
		return Fault{}
	}
	if st.fault.FailNext > 0 {
		st.remaining--
		if st.remaining <= 0 {
			delete(s.faults, key)
		}
	}
	return st.fault
}

// peekFault returns the fault that applies to model without counting it.
func (s *Server) peekFault(model string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.faults[model]; ok {
		return st.fault
	}
	if st, ok := s.faults[AnyModel]; ok {
		return st.fault
	}
	return Fault{}
}

// healthDown reports whether model's own fault or the AnyModel fault has
// HealthDown. An empty model checks AnyModel only.
func (s *Server) healthDown(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range []string{model, AnyModel} {
		if st, ok := s.faults[key]; ok && st.fault.HealthDown {
			return true
		}
	}
	return false
}

// configuredModels returns the models seen in requests or named in faults
// and replies.
func (s *Server) configuredModels() map[string]struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.models)
}

// maxTrackedModels bounds the per-model maps against clients that invent
// model names without end.
const maxTrackedModels = 1024 // model names

// noteModelLocked remembers model for /v1/models. Caller holds s.mu.
func (s *Server) noteModelLocked(model string) {
	if model == "" || model == AnyModel || len(s.models) >= maxTrackedModels {
		return
	}
	s.models[model] = struct{}{}
}
