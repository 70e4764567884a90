package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

func apiErr(status int, code, typ, msg string) error {
	return &openai.Error{StatusCode: status, Code: code, Type: typ, Message: msg}
}

func streamErr(data string) error {
	return &ssestream.StreamError{Message: "received error while streaming", Event: ssestream.Event{Data: []byte(data)}}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, ClassNone},
		{"429", apiErr(429, "rate_limit_exceeded", "requests", "slow down"), ClassRateLimited},
		{"429 without code", apiErr(429, "", "", ""), ClassRateLimited},
		{"429 insufficient_quota", apiErr(429, "insufficient_quota", "insufficient_quota", "quota"), ClassUnavailable},
		{"500", apiErr(500, "", "server_error", "oops"), ClassServer},
		{"502", apiErr(502, "", "", ""), ClassServer},
		{"503", apiErr(503, "", "", ""), ClassServer},
		{"408", apiErr(408, "", "", ""), ClassTimeout},
		{"400 context_length_exceeded", apiErr(400, "context_length_exceeded", "invalid_request_error", "too long"), ClassContextLength},
		{"400 vLLM context message", apiErr(400, "", "BadRequestError", "This model's maximum context length is 4096 tokens."), ClassContextLength},
		{"404 model_not_found", apiErr(404, "model_not_found", "invalid_request_error", "no such model"), ClassUnavailable},
		{"402 billing", apiErr(402, "", "", ""), ClassUnavailable},
		{"403 quota", apiErr(403, "", "", ""), ClassUnavailable},
		{"401 revoked key", apiErr(401, "invalid_api_key", "", ""), ClassUnavailable},
		{"400 Azure content_filter", apiErr(400, "content_filter", "", "filtered"), ClassRefused},
		{"400 OpenAI content_policy_violation", apiErr(400, "content_policy_violation", "", "policy"), ClassRefused},
		{"400 other", apiErr(400, "invalid_value", "invalid_request_error", "bad temperature"), ClassBadRequest},
		{"422", apiErr(422, "", "", ""), ClassBadRequest},
		{"stream error server", streamErr(`{"error":{"message":"The server had an error","type":"server_error","code":null}}`), ClassServer},
		{"stream error context length", streamErr(`{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`), ClassContextLength},
		{"stream error numeric 429", streamErr(`{"error":{"message":"busy","code":429}}`), ClassRateLimited},
		{"stream error numeric 503", streamErr(`{"error":{"message":"busy","code":503}}`), ClassServer},
		{"stream error garbage", streamErr(`{"error":`), ClassServer},
		{"refused", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, ClassServer},
		{"reset", &url.Error{Op: "Post", URL: "http://x", Err: syscall.ECONNRESET}, ClassServer},
		{"dns", &url.Error{Op: "Post", URL: "http://x", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}, ClassServer},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), ClassServer},
		{"malformed chunk", &json.SyntaxError{Offset: 3}, ClassServer},
		{"deadline", context.DeadlineExceeded, ClassTimeout},
		{"deadline in url error", &url.Error{Op: "Post", URL: "http://x", Err: context.DeadlineExceeded}, ClassTimeout},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, ClassTimeout},
		{"our cancel", &url.Error{Op: "Post", URL: "http://x", Err: context.Canceled}, ClassCanceled},
		{"classified passes through", fmt.Errorf("wrap: %w", &Error{Class: ClassCut}), ClassCut},
		{"unknown", errors.New("mystery"), ClassServer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassRules(t *testing.T) {
	t.Parallel()
	// docs/architecture.md's table: other models tried? counts against health?
	tests := []struct {
		class         Class
		fallback, hit bool
	}{
		{ClassRateLimited, true, true},
		{ClassServer, true, true},
		{ClassTimeout, true, true},
		{ClassContextLength, true, false},
		{ClassUnavailable, true, true},
		{ClassCut, true, true},
		{ClassRefused, false, false},
		{ClassBadRequest, false, false},
		{ClassCanceled, false, false},
		{ClassNone, false, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.class), func(t *testing.T) {
			if got := tc.class.Fallbackable(); got != tc.fallback {
				t.Errorf("Fallbackable = %v, want %v", got, tc.fallback)
			}
			if got := tc.class.CountsAgainstHealth(); got != tc.hit {
				t.Errorf("CountsAgainstHealth = %v, want %v", got, tc.hit)
			}
		})
	}
}

func TestClassifyKeepsProviderDetails(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("Retry-After", "2")
	err := &openai.Error{StatusCode: 429, Code: "rate_limit_exceeded", Message: "Rate limit reached",
		Response: &http.Response{StatusCode: 429, Header: h}}
	e := classify(fmt.Errorf("call: %w", err))
	if e.RetryAfter != 2*time.Second {
		t.Errorf("RetryAfter = %v, want 2s", e.RetryAfter)
	}
	msg := e.Error()
	for _, want := range []string{"rate_limited", "429", "rate_limit_exceeded", "Rate limit reached"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Error() = %q, missing %q", msg, want)
		}
	}
	if !errors.Is(e, err) {
		t.Error("the classified error does not wrap the openai error")
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"absent", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{"milliseconds win", map[string]string{"Retry-After": "3", "Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{"http date", map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"negative", map[string]string{"Retry-After": "-1"}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			got, ok := parseRetryAfter(h, now)
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseRetryAfter = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
