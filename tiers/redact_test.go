package tiers

import (
	"context"
	"errors"
	"strings"
	"testing"
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
