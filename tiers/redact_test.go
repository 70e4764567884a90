package tiers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
)

func TestWithoutKey(t *testing.T) {
	const key = "sk-proj-0123456789abcdef"
	cause := errors.New(`POST "https://api.example/v1/chat/completions": 401 {"message":"Incorrect API key provided: ` + key + `"}`)
	e := &Error{Class: ClassUnavailable, Status: 401, Code: "invalid_api_key",
		Message: "Incorrect API key provided: " + key + ".", Err: cause}
	r := withoutKey(e, key)
	for _, s := range []string{r.Message, r.Err.Error(), r.Error()} {
		if strings.Contains(s, key) || !strings.Contains(s, redactedKey) {
			t.Errorf("%q: key not replaced", s)
		}
	}
	if !errors.Is(r, cause) || r.Class != e.Class || r.Code != e.Code || r.Status != e.Status {
		t.Errorf("redacted error lost its cause or class: %+v", r)
	}
	if !strings.Contains(e.Message, key) {
		t.Error("the original error was changed")
	}
	if got := withoutKey(e, "demo"); got != e {
		t.Error("a placeholder key was redacted")
	}
	clean := &Error{Class: ClassServer, Message: "overloaded", Err: context.DeadlineExceeded}
	if got := withoutKey(clean, key); got != clean {
		t.Error("an error without the key was copied")
	}
	if withoutKey(nil, key) != nil {
		t.Error("nil in, not nil out")
	}
}

// TestErrorBodyWithoutKey: a vendor that echoes the key in a 400 error
// body: neither the engine's error nor the error object the gateway
// passes on to its client carries the key.
func TestErrorBodyWithoutKey(t *testing.T) {
	const key = "sk-proj-0123456789abcdef"
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+r.Header.Get("Authorization")[len("Bearer "):]+
			`","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer vendor.Close()
	src := NewSource(Endpoint{Name: "v", BaseURL: vendor.URL, APIKey: key, Model: "m"}, nil)
	res := src.stream(t.Context(), call{messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		model: "m", firstToken: time.Second, maxTokens: maxTokensFull}, func(string) bool { return true })
	if res.err == nil || res.err.Status != http.StatusBadRequest {
		t.Fatalf("error = %v, want the vendor's 400", res.err)
	}
	ge, _ := providerError(res.err)
	for what, s := range map[string]string{"error": res.err.Error(), "message": res.err.Message, "gateway body": string(ge.body())} {
		if strings.Contains(s, key) || !strings.Contains(s, redactedKey) {
			t.Errorf("%s %q: key not replaced", what, s)
		}
	}
}
