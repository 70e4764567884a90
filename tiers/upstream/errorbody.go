package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/option"
)

const (
	maxErrorBody    = 64 << 10 // bytes of an error response kept (openai-go would read it all)
	maxErrorMessage = 512      // bytes of a non-JSON error body kept as the message
)

// errorBodies returns the middleware of a source's client for its API
// key: it bounds an error response's body, cuts the key out of it (some
// OpenAI-compatible servers echo the key they got, "Incorrect API key
// provided: sk-…", and the gateway passes a provider's error object on to
// its clients; every string of the body is cleaned, decoded, at any
// depth), and rewrites a body openai-go cannot decode as an OpenAI
// error — not JSON (a proxy's HTML page, "Bad Gateway"), or an "error"
// that is not an object ({"error": "Unauthorized"}) — into
// {"error": {"message": ...}}. openai-go would return the decoding error
// instead of an *openai.Error and so lose the status: a 429 or a 401
// would classify as a server error.
func errorBodies(key string) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res.StatusCode < http.StatusBadRequest {
			return res, err
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody)) // a broken body: what came is the message
		res.Body.Close()
		body = cleanErrorJSON(body, key)
		if msg, rewrite := errorMessage(body); rewrite {
			body, _ = json.Marshal(map[string]map[string]string{"error": {"message": msg}}) // cannot fail
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		return res, nil
	}
}

// errorMessage reports whether an error body needs rewriting, and the
// message to keep: the "error" string, or the start of a non-JSON body.
func errorMessage(body []byte) (string, bool) {
	var wrapper struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &wrapper) != nil {
		text := strings.ToValidUTF8(string(body[:min(len(body), maxErrorMessage)]), "")
		return strings.TrimSpace(text), true
	}
	if len(wrapper.Error) == 0 || wrapper.Error[0] == '{' || string(wrapper.Error) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(wrapper.Error, &s) != nil {
		s = string(wrapper.Error) // a number, an array…: its text
	}
	return s, true
}
