package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// Class is an error class of the table in docs/architecture.md (Error
// classes). It decides whether other models are tried and whether the
// failure counts against the backend.
type Class string

// The error classes. ClassNone is success; ClassCanceled is our own
// cancellation (a hedge loser, a superseded question), which is not a
// failure of anyone.
const (
	ClassNone          Class = ""
	ClassRateLimited   Class = "rate_limited"
	ClassServer        Class = "server"
	ClassTimeout       Class = "timeout"
	ClassContextLength Class = "context_length"
	ClassUnavailable   Class = "unavailable"
	ClassCut           Class = "cut"
	ClassRefused       Class = "refused"
	ClassBadRequest    Class = "bad_request"
	ClassCanceled      Class = "canceled"
)

// Fallbackable reports whether another model may be tried after this class.
func (c Class) Fallbackable() bool {
	switch c {
	case ClassRateLimited, ClassServer, ClassTimeout, ClassContextLength, ClassUnavailable, ClassCut:
		return true
	}
	return false
}

// CountsAgainstHealth reports whether the failure counts against the
// backend's health.
func (c Class) CountsAgainstHealth() bool {
	switch c {
	case ClassRateLimited, ClassServer, ClassTimeout, ClassUnavailable, ClassCut:
		return true
	}
	return false
}

// Error is a classified failure of one backend call. Error() includes the
// provider's Code and Message (openai-go's own Error() hides them).
type Error struct {
	Class      Class
	Status     int           // HTTP status, 0 when there was none
	Code       string        // the provider's error code, if any
	Message    string        // the provider's message, if any
	RetryAfter time.Duration // from Retry-After / retry-after-ms; 0 when absent
	Err        error         // the underlying error, may be nil
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("tiers: ")
	b.WriteString(string(e.Class))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (status %d)", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " code %q", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Classify returns the class of err; nil is ClassNone.
func Classify(err error) Class {
	if err == nil {
		return ClassNone
	}
	return classify(err).Class
}

// classify turns any error of a backend call into an *Error. A nil err
// gives nil.
func classify(err error) *Error {
	if err == nil {
		return nil
	}
	if ce, ok := errors.AsType[*Error](err); ok {
		return ce
	}
	if ae, ok := errors.AsType[*openai.Error](err); ok {
		return classifyAPI(ae, err)
	}
	if se, ok := errors.AsType[*ssestream.StreamError](err); ok {
		return classifyStreamError(se, err)
	}
	return &Error{Class: classifyTransport(err), Err: err}
}

// classifyAPI classifies an HTTP error response.
func classifyAPI(ae *openai.Error, err error) *Error {
	e := &Error{Status: ae.StatusCode, Code: ae.Code, Message: ae.Message, Err: err}
	if ae.Response != nil {
		e.RetryAfter, _ = parseRetryAfter(ae.Response.Header, time.Now())
	}
	e.Class = classifyStatus(ae.StatusCode, ae.Code, ae.Type, ae.Message)
	return e
}

// classifyStatus maps an HTTP status and the provider's code, type and
// message to a class.
func classifyStatus(status int, code, typ, msg string) Class {
	if c, ok := classifyCode(code, typ, msg); ok {
		return c
	}
	switch {
	case status == http.StatusTooManyRequests:
		return ClassRateLimited
	case status == http.StatusRequestTimeout:
		return ClassTimeout
	case status == http.StatusConflict:
		return ClassServer // OpenAI's transient conflicts; its own client retries them
	case status >= 500:
		return ClassServer
	case status == http.StatusNotFound, status == http.StatusPaymentRequired,
		status == http.StatusForbidden, status == http.StatusUnauthorized:
		// A missing model, billing, quota or a revoked key: this backend
		// cannot serve us, another one may.
		return ClassUnavailable
	case status == http.StatusRequestEntityTooLarge:
		return ClassContextLength
	case status >= 400:
		return ClassBadRequest
	}
	return ClassServer
}

// classifyCode recognises the codes that decide a class whatever the
// status.
func classifyCode(code, typ, msg string) (Class, bool) {
	switch code {
	case "context_length_exceeded", "string_above_max_length":
		return ClassContextLength, true
	case "content_filter", "content_policy_violation", "ResponsibleAIPolicyViolation":
		return ClassRefused, true
	case "insufficient_quota", "billing_hard_limit_reached", "model_not_found", "DeploymentNotFound":
		return ClassUnavailable, true
	case "rate_limit_exceeded", "429":
		return ClassRateLimited, true
	}
	switch typ {
	case "insufficient_quota":
		return ClassUnavailable, true
	case "server_error", "overloaded_error", "api_error":
		return ClassServer, true
	}
	// vLLM and llama.cpp report a too-long prompt as a plain 400 with a
	// message and no code.
	m := strings.ToLower(msg)
	if strings.Contains(m, "maximum context length") || strings.Contains(m, "context length") ||
		strings.Contains(m, "exceeds the available context size") {
		return ClassContextLength, true
	}
	return "", false
}

// streamErrorBody is the JSON of an SSE error event:
// {"error": {"message", "type", "code"}}; code may be a string or a number.
type streamErrorBody struct {
	Error struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// classifyStreamError classifies an error event inside an SSE stream.
func classifyStreamError(se *ssestream.StreamError, err error) *Error {
	var body streamErrorBody
	e := &Error{Class: ClassServer, Message: se.Message, Err: err}
	if json.Unmarshal(se.Event.Data, &body) != nil {
		return e
	}
	e.Message = body.Error.Message
	e.Code = rawCode(body.Error.Code)
	status, _ := strconv.Atoi(e.Code)
	if c, ok := classifyCode(e.Code, body.Error.Type, e.Message); ok {
		e.Class = c
	} else if status >= 400 {
		e.Status = status
		e.Class = classifyStatus(status, "", "", "")
	}
	return e
}

// rawCode turns a JSON string or number into a string ("" for null).
func rawCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// classifyTransport classifies errors that carry no HTTP response:
// context errors, network errors, broken streams.
func classifyTransport(err error) Class {
	switch {
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return ClassTimeout
	}
	// Refused, reset, DNS failures, a body that ends early, malformed
	// chunks, anything unknown: the server side is broken.
	return ClassServer
}

// parseRetryAfter reads how long the server asks us to wait:
// "retry-after-ms" (OpenAI), then "Retry-After" in seconds or as an HTTP
// date relative to now. ok is false when neither is present or valid.
func parseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
		return time.Duration(f * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
