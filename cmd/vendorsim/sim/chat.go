package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// chatRequest is the part of a chat completion request the Server reads.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string, an array of parts, or null
}

// text is the message's text: the string, or its text parts joined.
func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// maxTokens is the completion limit the request asked for; 0 means none.
func (r *chatRequest) maxTokens() int {
	switch {
	case r.MaxCompletionTokens != nil && *r.MaxCompletionTokens > 0:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil && *r.MaxTokens > 0:
		return *r.MaxTokens
	}
	return 0
}

func (r *chatRequest) includeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// question is the last user message; prefill is the trailing assistant
// message, if the conversation ends with one.
func (r *chatRequest) question() (question, prefill string) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if i == len(r.Messages)-1 && m.Role == "assistant" {
			prefill = m.text()
			continue
		}
		if m.Role == "user" {
			return m.text(), prefill
		}
	}
	return "", prefill
}

func (r *chatRequest) promptTokens() int {
	n := 0
	for _, m := range r.Messages {
		n += estimateTokens(m.text()) + 4 // per-message overhead, as OpenAI counts it
	}
	return n
}

// answer is what a chat request will be told: the pieces to stream and why
// the answer ends.
type answer struct {
	id           string
	created      int64
	model        string
	pieces       []string
	finish       string // "stop", "length" or "content_filter"
	promptTokens int
}

// plan computes the answer to req from the model's reply, the assistant
// prefill, max_tokens and a FilterFinish fault.
func (s *Server) plan(req *chatRequest, model string, f Fault) answer {
	question, prefill := req.question()
	reply := s.reply(model, question)
	a := answer{
		id:           newID("chatcmpl-"),
		created:      time.Now().Unix(),
		model:        model,
		pieces:       continuation(reply, prefill),
		finish:       "stop",
		promptTokens: req.promptTokens(),
	}
	if limit := req.maxTokens(); limit > 0 && len(a.pieces) > limit {
		a.pieces, a.finish = a.pieces[:limit], "length"
	}
	if f.FilterFinish {
		a.pieces, a.finish = a.pieces[:min(len(a.pieces), filterFinishChunks)], "content_filter"
	}
	return a
}

func (a answer) text() string { return strings.Join(a.pieces, "") }

// usage is OpenAI's token usage object.
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

func (a answer) usage() *usage {
	return &usage{PromptTokens: a.promptTokens, CompletionTokens: len(a.pieces), TotalTokens: a.promptTokens + len(a.pieces)}
}

// The constant fields OpenAI adds to every completion.
const (
	serviceTier       = "default"
	systemFingerprint = "fp_vendorsim"
)

// completion is a non-streaming chat completion body.
type completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	Choices           []completionChoice `json:"choices"`
	Usage             *usage             `json:"usage"`
	ServiceTier       string             `json:"service_tier"`
	SystemFingerprint string             `json:"system_fingerprint"`
}

type completionChoice struct {
	Index   int `json:"index"`
	Message struct {
		Role        string   `json:"role"`
		Content     string   `json:"content"`
		Refusal     *string  `json:"refusal"`
		Annotations []string `json:"annotations"`
	} `json:"message"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

func (a answer) completion() completion {
	c := completionChoice{FinishReason: a.finish}
	c.Message.Role = "assistant"
	c.Message.Content = a.text()
	c.Message.Annotations = []string{}
	return completion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		Choices: []completionChoice{c}, Usage: a.usage(),
		ServiceTier: serviceTier, SystemFingerprint: systemFingerprint,
	}
}

// handleChat serves POST /v1/chat/completions, streaming or not.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	setRequestID(w)
	var req chatRequest
	apiErr, status := readJSON(w, r, &req, false)
	model := modelOf(r, req.Model)
	if apiErr == nil {
		apiErr, status = validateChat(&req, model)
	}
	if apiErr == nil {
		apiErr, status = validateImages(&req)
	}
	c := s.begin(model, apiErr == nil && req.Stream)
	o := outcomeFailed // also when abortConn unwinds the handler
	defer func() { c.end(o) }()
	if apiErr == nil {
		s.noteImages(model, &req)
	}
	if apiErr != nil {
		writeAPIError(w, status, *apiErr)
		return
	}
	f := s.takeFault(model)
	if _, prefill := req.question(); f.RejectPrefill && prefill != "" {
		writeAPIError(w, http.StatusBadRequest, badRequest("the final message must be a user message: assistant prefill is not supported", "messages"))
		return
	}
	writeErr := func() { writeFault(w, model, f, req.promptTokens()) }
	if pre, handled := s.preamble(w, r, f, s.firstTokenDelay, writeErr); handled {
		o = pre
		return
	}
	a := s.plan(&req, model, f)
	if req.Stream {
		o = s.stream(w, r, a, f, req.includeUsage())
		return
	}
	o = s.respond(w, r, a, f)
}

// validateChat checks what OpenAI would reject.
func validateChat(req *chatRequest, model string) (*apiError, int) {
	if model == "" {
		e := badRequest("you must provide a model parameter", "")
		return &e, http.StatusBadRequest
	}
	if len(req.Messages) == 0 {
		e := badRequest("[] is too short - 'messages'", "messages")
		return &e, http.StatusBadRequest
	}
	return nil, 0
}

// preamble applies the faults that act before any answer: reset, no
// answer, the first-token delay (the fault's, else delay), and an error
// status, which writeErr writes. It reports whether it ended the request,
// and how.
func (s *Server) preamble(w http.ResponseWriter, r *http.Request, f Fault, delay time.Duration, writeErr func()) (outcome, bool) {
	ctx := r.Context()
	if f.ResetBeforeHeaders {
		abortConn(w, true)
		return outcomeFailed, true
	}
	if f.NoAnswer {
		return s.abandon(w, s.hold(ctx)), true
	}
	if err := s.sleep(ctx, f.firstTokenDelay(delay)); err != nil {
		return s.abandon(w, err), true
	}
	if f.failsWithStatus() {
		writeErr()
		return outcomeFailed, true
	}
	return 0, false
}

// abandon ends a request whose wait ended with err: the client went away
// (Cancelled), or Close released it, which closes the connection (Failed).
func (s *Server) abandon(w http.ResponseWriter, err error) outcome {
	if errors.Is(err, errClosed) {
		abortConn(w, false)
		return outcomeFailed
	}
	return outcomeCancelled
}

// respond writes a non-streaming completion after the time the stream
// would have taken, applying StallAfter, CutAfter, MalformedAt and
// ErrorAfter (a 500, as the generation failed).
func (s *Server) respond(w http.ResponseWriter, r *http.Request, a answer, f Fault) outcome {
	ctx := r.Context()
	if f.StallAfter > 0 {
		return s.abandon(w, s.hold(ctx))
	}
	if err := s.sleep(ctx, time.Duration(max(len(a.pieces)-1, 0))*s.tokenDelay); err != nil {
		return s.abandon(w, err)
	}
	if f.ErrorAfter > 0 {
		writeAPIError(w, http.StatusInternalServerError, streamError.Error)
		return outcomeFailed
	}
	body, _ := json.Marshal(a.completion()) // cannot fail: plain structs
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	switch {
	case f.CutAfter > 0:
		_, _ = w.Write(body[:len(body)/2])
		abortConn(w, false)
		return outcomeFailed
	case f.MalformedAt > 0:
		copy(body[len(body)/2:], bytes.Repeat([]byte(" "), len(body)-len(body)/2))
		_, _ = w.Write(body)
		return outcomeFailed
	}
	if _, err := w.Write(body); err != nil {
		return outcomeCancelled
	}
	return outcomeCompleted
}
