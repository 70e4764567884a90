package upstream

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
	t.Parallel()
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
// body: the client's error does not carry the key (the gateway's tests
// check the error object it passes on).
func TestErrorBodyWithoutKey(t *testing.T) {
	t.Parallel()
	const key = "sk-proj-0123456789abcdef"
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+r.Header.Get("Authorization")[len("Bearer "):]+
			`","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer vendor.Close()
	c := New(Endpoint{Name: "v", BaseURL: vendor.URL, APIKey: key, Model: "m"}, nil)
	res := c.Stream(t.Context(), Call{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		Model: "m", FirstToken: time.Second, MaxTokens: 400}, &textHandler{})
	if res.Err == nil || res.Err.Status != http.StatusBadRequest {
		t.Fatalf("error = %v, want the vendor's 400", res.Err)
	}
	for what, s := range map[string]string{"error": res.Err.Error(), "message": res.Err.Message, "raw body": string(rawBody(res.Err))} {
		if strings.Contains(s, key) || !strings.Contains(s, redactedKey) {
			t.Errorf("%s %q: key not replaced", what, s)
		}
	}
}

// rawBody is the provider's error object as openai-go kept it.
func rawBody(e *Error) string {
	if ae, ok := errors.AsType[*openai.Error](e); ok {
		return ae.RawJSON()
	}
	return ""
}
