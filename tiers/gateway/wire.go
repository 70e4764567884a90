package gateway

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/poise-dev/poise/tiers/upstream"
)

// headerEndpoint names the gateway endpoint that answered (for a stream,
// the one that started the answer).
const headerEndpoint = "X-Poise-Endpoint"

// OpenAI error types the gateway sends.
const (
	typeInvalidRequest = "invalid_request_error"
	typeServerError    = "server_error"
	typeRateLimit      = "requests"
)

var doneEvent = []byte("[DONE]")

// gatewayError is an OpenAI error object: {"message", "type", "param",
// "code"}, with null for an empty param or code.
type gatewayError struct {
	Message string
	Type    string
	Param   string
	Code    string

	raw        json.RawMessage // the provider's own error object; sent as is when set
	retryAfter time.Duration   // sets Retry-After on the response
}

// body is {"error": {...}}.
func (e gatewayError) body() []byte {
	var obj map[string]json.RawMessage
	if len(e.raw) > 0 && e.raw[0] == '{' && json.Unmarshal(e.raw, &obj) == nil {
		// The provider's own error object, with the message and type a
		// client relies on filled in where the provider left them out.
		for key, v := range map[string]string{"message": e.Message, "type": e.Type} {
			var s string
			if json.Unmarshal(obj[key], &s) != nil || s == "" {
				obj[key], _ = json.Marshal(v) // cannot fail: a string
			}
		}
		b, _ := json.Marshal(map[string]any{"error": obj}) // cannot fail: valid raw JSON
		return b
	}
	nullable := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{ // cannot fail: strings
		"message": e.Message, "type": e.Type, "param": nullable(e.Param), "code": nullable(e.Code)}})
	return b
}

// writeGatewayError writes e as an OpenAI error response with status.
func writeGatewayError(w http.ResponseWriter, status int, e gatewayError) {
	if e.retryAfter > 0 {
		secs := int((e.retryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(e.retryAfter.Milliseconds(), 10))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(e.body())
}

// writeJSONBody writes v as an application/json response with status.
func writeJSONBody(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeGatewayError(w, http.StatusInternalServerError, gatewayError{Message: "tiers: gateway: encode response", Type: typeServerError})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// providerError is the provider's own error for the client: its status
// (400 for an error that came inside a stream), and its error object as
// it sent it when there is one, with its free text made public (see
// publicError). The API key was cut out of every string of it already
// (upstream).
func providerError(e *upstream.Error) (gatewayError, int) {
	ge := gatewayError{Message: e.Message, Type: typeInvalidRequest, Code: e.Code}
	if e.Status >= 500 { // a server's failure, such as the gateway's own response_too_large, not the client's
		ge.Type = typeServerError
	}
	status := e.Status
	if ae, ok := errors.AsType[*openai.Error](e); ok {
		ge.Type, ge.Param, ge.raw = cmp.Or(ae.Type, ge.Type), ae.Param, json.RawMessage(ae.RawJSON())
		status = ae.StatusCode
	} else if se, ok := errors.AsType[*ssestream.StreamError](e); ok {
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(se.Event.Data, &body) == nil {
			ge.raw = body.Error
		}
	}
	if ge.Message == "" {
		ge.Message = e.Error()
	}
	if status < 400 || status > 599 {
		status = http.StatusBadRequest
	}
	return publicError(ge, status), status
}

// withheld replaces a provider's string that names a URL or a host.
const withheld = "[withheld: names a URL or host]"

// publicError returns ge with the provider's free text that names a URL
// or a host (an internal address of its own error pages, a proxy's name)
// replaced: the message by a generic one that keeps the status and the
// provider's code, any other string of its error object by withheld. The
// full text is in the gateway's log.
func publicError(ge gatewayError, status int) gatewayError {
	if namesHost(ge.Message) {
		ge.Message = genericMessage(status, ge.Code)
	}
	if namesHost(ge.Param) {
		ge.Param = withheld
	}
	if namesHost(ge.Code) {
		ge.Code = withheld
	}
	if len(ge.raw) > 0 {
		var obj any
		if json.Unmarshal(ge.raw, &obj) != nil {
			ge.raw = nil
			return ge
		}
		obj = withoutHosts(obj, ge.Message)
		ge.raw, _ = json.Marshal(obj) // cannot fail: decoded JSON
	}
	return ge
}

// withoutHosts replaces every string of v (keys too) that names a host:
// the top-level message by msg, the others by withheld.
func withoutHosts(v any, msg string) any {
	switch x := v.(type) {
	case string:
		if namesHost(x) {
			return withheld
		}
	case []any:
		for i := range x {
			x[i] = withoutHosts(x[i], msg)
		}
	case map[string]any:
		for k, val := range x {
			if namesHost(k) {
				delete(x, k)
				continue
			}
			if s, ok := val.(string); ok && k == "message" && namesHost(s) {
				x[k] = msg
				continue
			}
			x[k] = withoutHosts(val, msg)
		}
	}
	return v
}

// genericMessage stands for a provider's message that named a host.
func genericMessage(status int, code string) string {
	msg := fmt.Sprintf("the upstream endpoint answered with an error (status %d", status)
	if code != "" && !namesHost(code) {
		msg += ", code " + code
	}
	return msg + "); its message named a URL or host and is in the gateway's log"
}

// hostPattern finds URLs, IP addresses, host:port pairs and host names
// under common or internal top-level domains in free text.
var hostPattern = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://|\b\d{1,3}(\.\d{1,3}){3}\b|\[[0-9a-f:]*:[0-9a-f:]*\]|` +
	`\blocalhost\b|\b[a-z0-9-]+(\.[a-z0-9-]+)*:\d{2,5}\b|` +
	`\b[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|net|org|io|ai|dev|app|cloud|co|us|eu|de|uk|fr|cn|jp|in|internal|local|localdomain|lan|corp|home|svc|cluster|intranet|example|test|invalid)\b`)

// namesHost reports whether s names a URL or a host.
func namesHost(s string) bool { return s != "" && hostPattern.MatchString(s) }

// failureDetail is a failure's class, status and message, for the
// gateway's own messages (the message only when it names no host).
func failureDetail(e *upstream.Error) string {
	detail := string(e.Class)
	if e.Status != 0 {
		detail += fmt.Sprintf(" %d", e.Status)
	}
	if e.Message != "" && !namesHost(e.Message) {
		detail += ": " + e.Message
	}
	return detail
}

// exhaustedError is the error a client gets when no endpoint could answer
// model, from the last failure e (of endpoint). After content was sent
// (cut) it names that.
func exhaustedError(model, endpoint string, e *upstream.Error, cut bool) (gatewayError, int) {
	detail := failureDetail(e)
	ge := gatewayError{Type: typeServerError,
		Message: fmt.Sprintf("poise gateway: no endpoint could answer model %q; last failure (%s): %s", model, endpoint, detail)}
	if cut {
		ge.Code = "stream_cut"
		ge.Message = fmt.Sprintf("poise gateway: the answer was cut (%s: %s) and no fallback could continue it", endpoint, detail)
		return ge, http.StatusBadGateway
	}
	switch e.Class {
	case upstream.ClassRateLimited:
		ge.Type, ge.Code, ge.retryAfter = typeRateLimit, "rate_limit_exceeded", e.RetryAfter
		return ge, http.StatusTooManyRequests
	case upstream.ClassTimeout:
		ge.Code = "timeout"
		return ge, http.StatusGatewayTimeout
	case upstream.ClassContextLength:
		pe, _ := providerError(e)
		pe.Code = "context_length_exceeded"
		return pe, http.StatusBadRequest
	case upstream.ClassUnavailable:
		if e.Status == http.StatusNotFound {
			ge.Type, ge.Code = typeInvalidRequest, "model_not_found"
			return ge, http.StatusNotFound
		}
		ge.Code = "unavailable"
		return ge, http.StatusServiceUnavailable
	}
	ge.Code = "upstream_error"
	return ge, http.StatusBadGateway
}

// sseWriter writes server-sent events to a client, each in one write and
// one flush, within gatewayWriteLimit. Owned by one gatewayCall.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte // the event being written, reused
}

func newSSEWriter(w http.ResponseWriter) sseWriter {
	return sseWriter{w: w, rc: http.NewResponseController(w)}
}

// event writes "data: <data>\n\n" and flushes it.
func (s *sseWriter) event(data []byte) error {
	if err := s.rc.SetWriteDeadline(time.Now().Add(gatewayWriteLimit)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	s.buf = append(append(append(s.buf[:0], "data: "...), data...), "\n\n"...)
	if _, err := s.w.Write(s.buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// usageOut is OpenAI's usage object; raw is the endpoint's own, passed on
// as is when set.
type usageOut struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	raw              json.RawMessage
}

func (u usageOut) json() json.RawMessage {
	if len(u.raw) > 0 && json.Valid(u.raw) {
		return u.raw
	}
	b, _ := json.Marshal(u) // cannot fail: ints
	return b
}

// outChunk is a chat.completion.chunk to the client: the gateway's id and
// envelope around the endpoint's choices, as it sent them. provider names
// the endpoint (as OpenRouter's responses do).
type outChunk struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	Provider          string            `json:"provider"`
	SystemFingerprint string            `json:"system_fingerprint,omitempty"`
	Choices           []json.RawMessage `json:"choices"`
	Usage             json.RawMessage   `json:"usage,omitempty"`
}

// chunk renders an endpoint's chunk for the client, with choices (the
// endpoint's, as it sent them, or as filter cut them).
func (c *gatewayCall) chunk(ch openai.ChatCompletionChunk, t target, model string, choices []json.RawMessage) []byte {
	out := outChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: model,
		Provider: t.ep.Name, SystemFingerprint: ch.SystemFingerprint, Choices: choices}
	b, _ := json.Marshal(out) // cannot fail: raw JSON the decoder accepted
	return b
}

// usageChunk is the last chunk of a stream whose client asked for usage.
func (c *gatewayCall) usageChunk(t target, model string, u usageOut) []byte {
	b, _ := json.Marshal(outChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: model,
		Provider: t.ep.Name, SystemFingerprint: c.fingerprint, Choices: []json.RawMessage{}, Usage: u.json()}) // cannot fail
	return b
}

// outCompletion is a chat.completion to a non-streaming client.
type outCompletion struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	Provider          string          `json:"provider"`
	SystemFingerprint string          `json:"system_fingerprint,omitempty"`
	Choices           []outChoice     `json:"choices"`
	Usage             json.RawMessage `json:"usage"`
}

type outChoice struct {
	Index        int64      `json:"index"`
	Message      outMessage `json:"message"`
	Logprobs     *struct{}  `json:"logprobs"`
	FinishReason string     `json:"finish_reason"`
}

type outMessage struct {
	Role      string        `json:"role"`
	Content   *string       `json:"content"`
	Refusal   *string       `json:"refusal"`
	ToolCalls []outToolCall `json:"tool_calls,omitempty"`
}

type outToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// completion renders the accumulated answer.
func (c *gatewayCall) completion(t target, model string, u usageOut) outCompletion {
	return outCompletion{ID: c.id, Object: "chat.completion", Created: c.created, Model: model, Provider: t.ep.Name,
		SystemFingerprint: c.fingerprint, Choices: c.acc.choicesOut(), Usage: u.json()}
}
