package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
)

// TestProviderErrorWithoutKey: a vendor that echoes the key in a 400
// error body: the error object the gateway passes on to its client does
// not carry the key.
func TestProviderErrorWithoutKey(t *testing.T) {
	const key = "sk-proj-0123456789abcdef"
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+r.Header.Get("Authorization")[len("Bearer "):]+
			`","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer vendor.Close()
	c := upstream.New(upstream.Endpoint{Name: "v", BaseURL: vendor.URL, APIKey: key, Model: "m"}, nil)
	res := c.Stream(t.Context(), upstream.Call{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		Model: "m", FirstToken: time.Second}, nopHandler{})
	if res.Err == nil || res.Err.Status != http.StatusBadRequest {
		t.Fatalf("error = %v, want the vendor's 400", res.Err)
	}
	ge, _ := providerError(res.Err)
	if body := string(ge.body()); strings.Contains(body, key) || !strings.Contains(body, "[api key]") {
		t.Errorf("gateway body %q: key not replaced", body)
	}
}

// nopHandler takes no content; the call fails before any.
type nopHandler struct{}

func (nopHandler) Chunk(openai.ChatCompletionChunk) (bool, string, error) { return false, "", nil }
func (nopHandler) Ended() string                                          { return "" }
