package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/poise-dev/poise/tiers/upstream/upstreamtest"
	"github.com/rs/zerolog"
)

// hostileKey is the upstream key the hostile upstreams echo back.
const hostileKey = "sk-live-7f3a9c2e5b1d4f6a8c0e2b4d"

// keyPlaces are error objects with KEY standing for the key in every
// place and spelling: raw, \u-escaped, split across neighbouring strings,
// nested, as an object key, as the code, and beside a URL.
var keyPlaces = []string{
	`{"error":{"message":"key KEY rejected at http://10.1.2.3:8000/v1","code":"400"}}`,
	`{"error":{"message":"key ESCAPED rejected","type":"invalid_request_error","code":"invalid_api_key"}}`,
	`{"error":{"message":"key HALF1","param":"HALF2 rejected","code":"invalid_api_key"}}`,
	`{"error":{"message":"bad key","innererror":{"detail":{"keys":["KEY"],"again":{"k":"ESCAPED"}}}}}`,
	`{"error":{"message":"bad key","KEY":true,"code":"KEY"}}`,
	`{"error":{"message":"Incorrect API key provided: KEY. See https://platform.example.com/keys","type":"invalid_request_error"}}`,
	`{"error":"KEY is not valid"}`,
}

// spell puts key into an error object template.
func spell(obj, key string) string {
	var esc strings.Builder
	for _, r := range key {
		fmt.Fprintf(&esc, `\u%04x`, r)
	}
	half := len(key) / 2
	return strings.NewReplacer("ESCAPED", esc.String(), "HALF1", key[:half], "HALF2", key[half:], "KEY", key).Replace(obj)
}

// leak reports where body shows key: in its bytes, in a decoded string of
// any JSON in it (an SSE stream's data lines, or the body), or in the
// strings of one JSON value joined in order; a piece of 8 bytes is a leak.
func leak(body []byte, key string) string {
	has := func(s string) bool {
		for i := 0; i+8 <= len(key); i++ {
			if strings.Contains(s, key[i:i+8]) {
				return true
			}
		}
		return false
	}
	if has(string(body)) {
		return "raw bytes"
	}
	docs := [][]byte{body}
	if bytes.HasPrefix(body, []byte("data: ")) {
		docs = nil
		sc := bufio.NewScanner(bytes.NewReader(body))
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				docs = append(docs, bytes.Clone(d))
			}
		}
	}
	for _, d := range docs {
		dec := json.NewDecoder(bytes.NewReader(d))
		var joined strings.Builder
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if s, ok := tok.(string); ok {
				if has(s) {
					return fmt.Sprintf("decoded string %q", s)
				}
				joined.WriteString(s)
			}
		}
		if has(joined.String()) {
			return "strings joined"
		}
	}
	return ""
}

// hostileUpstream answers every chat request with obj (its KEY the key
// the request carried): as the body of an HTTP error with status, or,
// with status 200, as an SSE error event after partial words of content.
func hostileUpstream(t *testing.T, status int, obj string, partial int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		body := spell(obj, key)
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
		for i := range partial {
			fmt.Fprintf(w, `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word%d "},"finish_reason":null}]}`+"\n\n", i)
		}
		_, _ = io.WriteString(w, "data: "+body+"\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestGatewayNeverLeaksTheUpstreamKey: hostile upstreams echo the key
// they received in every place of their error objects; no response of the
// gateway shows it, streamed or not, before or after partial content, as
// the provider's own error (400) or inside the gateway's (500: no
// endpoint could answer).
func TestGatewayNeverLeaksTheUpstreamKey(t *testing.T) {
	for i, obj := range keyPlaces {
		for _, mode := range []struct {
			name    string
			status  int
			partial int
		}{{"400", 400, 0}, {"500", 500, 0}, {"event before content", 200, 0}, {"event after content", 200, 3}} {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%d/%s/stream=%v", i, mode.name, stream), func(t *testing.T) {
					up := hostileUpstream(t, mode.status, obj, mode.partial)
					cfg := Config{Keys: []string{clientKey}, Chains: map[string][]Endpoint{gwModel: {
						{Endpoint: upstream.Endpoint{Name: "up", BaseURL: up.URL + "/v1", APIKey: hostileKey, Model: "m"}}}}}
					gw, err := New(cfg, nil, zerolog.Nop(), nil)
					if err != nil {
						t.Fatal(err)
					}
					gw.sleep = func(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }
					srv := httptest.NewServer(gw)
					defer func() { srv.Close(); gw.Close() }()
					body := postChat(t, srv.URL, stream)
					if where := leak(body, hostileKey); where != "" {
						t.Fatalf("the key leaked (%s) in %s", where, body)
					}
					if strings.Contains(string(body), "10.1.2.3") || strings.Contains(string(body), "platform.example.com") {
						t.Fatalf("a host of the upstream's text reached the client: %s", body)
					}
				})
			}
		}
	}
}

// postChat posts a chat request to the gateway at url and returns the
// raw response body.
func postChat(t *testing.T, url string, stream bool) []byte {
	t.Helper()
	_, body := chatResponse(t, url, stream, "Why this job?")
	return body
}

// FuzzGatewayErrorObjectHasNoKey: whatever error object an upstream
// sends with the key put in it (placeholders KEY, ESCAPED, HALF1, HALF2),
// as an HTTP error or a stream's error event, before or after content, the
// gateway's response does not show the key in any spelling.
func FuzzGatewayErrorObjectHasNoKey(f *testing.F) {
	for _, obj := range keyPlaces {
		f.Add([]byte(obj), byte(0), false)
		f.Add([]byte(obj), byte(3), true)
	}
	f.Add([]byte(`{"error":{"message":"KEY","nested":[{"a":"HALF1"},{"b":"HALF2"}]}}`), byte(1), true)
	f.Fuzz(func(t *testing.T, obj []byte, mode byte, stream bool) {
		body := []byte(spell(string(obj), hostileKey))
		statuses := []int{200, 400, 429, 500, 503}
		status := statuses[int(mode)%len(statuses)]
		if status == http.StatusOK {
			role := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}` + "\n\n"
			if mode/8%2 == 0 {
				role = ""
			}
			body = []byte(role + "data: " + strings.ReplaceAll(string(body), "\n", " ") + "\n\n")
		}
		synctest.Test(t, func(t *testing.T) {
			cfg := Config{Chains: map[string][]Endpoint{"chat": {{Endpoint: upstream.Endpoint{
				Name: "up", BaseURL: "http://vendor.invalid/v1", APIKey: hostileKey, Model: "m"}}}}}
			gw, err := New(cfg, nil, zerolog.Nop(), nil, WithHTTPClient(&http.Client{Transport: upstreamtest.Fuzz{Status: status, Body: body}}))
			if err != nil {
				t.Fatal(err)
			}
			gw.sleep = func(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }
			reqBody, _ := json.Marshal(map[string]any{"model": "chat", "stream": stream,
				"messages": []map[string]string{{"role": "user", "content": "Why this job?"}}})
			r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/chat/completions", bytes.NewReader(reqBody))
			r.RemoteAddr = "127.0.0.1:40000"
			w := httptest.NewRecorder()
			gw.ServeHTTP(w, r)
			if where := leak(w.Body.Bytes(), hostileKey); where != "" {
				t.Fatalf("the key leaked (%s) in %s", where, w.Body.Bytes())
			}
		})
	})
}
