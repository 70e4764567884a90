package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// limitKey is the upstream key of the limit tests' endpoint: no response
// may show it.
const limitKey = "sk-limit-3b9d1f7a2c4e6b8d0f1a"

// bigAnswer is an upstream that streams pieces content chunks of size
// bytes each, then a finish and [DONE]; when hold is not nil, it first
// waits for hold to close (or the request to end).
func bigAnswer(t *testing.T, pieces, size int, hold chan struct{}) *httptest.Server {
	t.Helper()
	piece := strings.Repeat("w", size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for range pieces {
			if _, err := io.WriteString(w, chunkJSON(piece, "")); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, chunkJSON("", "stop")+"data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// limitGateway serves chain gwModel from up, with adjust applied to the
// config, behind a real HTTP server.
func limitGateway(t *testing.T, up *httptest.Server, adjust func(*Config)) (*Handler, *httptest.Server) {
	t.Helper()
	cfg := Config{Keys: []string{clientKey}, Chains: map[string][]Endpoint{gwModel: {{Endpoint: upstream.Endpoint{
		Name: "up", BaseURL: up.URL + "/v1", APIKey: limitKey, Model: "m"}}}}}
	adjust(&cfg)
	gw, err := New(cfg, nil, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(func() { srv.Close(); gw.Close() })
	return gw, srv
}

// chatResponse posts a chat request whose user message is content and
// returns the response, its body read.
func chatResponse(t *testing.T, url string, stream bool, content string) (*http.Response, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": gwModel, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": content}}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, got
}

// errorOf decodes an OpenAI error body's code and message.
func errorOf(t *testing.T, body []byte) (code, msg string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" || e.Error.Code == nil {
		t.Fatalf("not an OpenAI error with a code: %q", body)
	}
	return *e.Error.Code, e.Error.Message
}

// TestGatewayMaxResponseMB: an answer longer than gateway.max_response_mb
// (1 MiB here: 20 chunks of 64 KiB) is 502 response_too_large for a
// non-streaming client, with a message naming the config key, and ends a stream
// with that error in-band, without [DONE]; neither shows the upstream key.
func TestGatewayMaxResponseMB(t *testing.T) {
	up := bigAnswer(t, 20, 64<<10, nil)
	_, srv := limitGateway(t, up, func(c *Config) { c.MaxResponseMB = 1 })

	resp, body := chatResponse(t, srv.URL, false, "Tell me everything.")
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, want 502: %.300s", resp.StatusCode, body)
	}
	code, msg := errorOf(t, body)
	if code != "response_too_large" || !strings.Contains(msg, "gateway.max_response_mb (1 MiB)") {
		t.Errorf("code %q, message %q: want response_too_large naming gateway.max_response_mb", code, msg)
	}
	if !bytes.Contains(body, []byte(`"type":"server_error"`)) {
		t.Errorf("a 502 of the gateway's own should be a server_error: %s", body)
	}
	if where := leak(body, limitKey); where != "" {
		t.Errorf("the key leaked (%s): %s", where, body)
	}

	resp, body = chatResponse(t, srv.URL, true, "Tell me everything.")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream status %d: %.300s", resp.StatusCode, body)
	}
	events := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
	last, _ := strings.CutPrefix(events[len(events)-1], "data: ")
	if code, _ := errorOf(t, []byte(last)); code != "response_too_large" || bytes.Contains(body, doneEvent) {
		t.Errorf("stream ends with code %q (done %v), want response_too_large and no [DONE]", code, bytes.Contains(body, doneEvent))
	}
	if len(body) > 2<<20 {
		t.Errorf("the stream sent %d bytes, past the 1 MiB bound and a chunk", len(body))
	}
	if where := leak(body, limitKey); where != "" {
		t.Errorf("the key leaked in the stream (%s)", where)
	}
}

// TestGatewayMaxInflightMB: with gateway.max_inflight_mb 1, a request
// whose body can never fit gets 503 overloaded with Retry-After at once;
// one that must wait for room behind a request in flight gets 503 when
// its wait ends; once the first is done, the room is back.
func TestGatewayMaxInflightMB(t *testing.T) {
	hold := make(chan struct{})
	up := bigAnswer(t, 1, 16, hold)
	gw, srv := limitGateway(t, up, func(c *Config) { c.MaxInflightMB = 1 })
	gw.bodyWait = 50 * time.Millisecond // the wait is not what is tested; its end is

	resp, body := chatResponse(t, srv.URL, false, strings.Repeat("x", 300<<10)) // 4 × 300 KiB > 1 MiB
	wantOverloaded(t, resp, body)

	first := make(chan int, 1)
	go func() { // 800 KiB of the 1 MiB, held until hold closes
		body, _ := json.Marshal(map[string]any{"model": gwModel,
			"messages": []map[string]string{{"role": "user", "content": strings.Repeat("x", 200<<10)}}})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+clientKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	waitInflight(t, gw)
	resp, body = chatResponse(t, srv.URL, false, strings.Repeat("y", 200<<10))
	wantOverloaded(t, resp, body)

	close(hold)
	if status := <-first; status != http.StatusOK {
		t.Fatalf("the request in flight got %d", status)
	}
	if resp, body := chatResponse(t, srv.URL, false, strings.Repeat("z", 200<<10)); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the first finished: %d %.300s", resp.StatusCode, body)
	}
}

func wantOverloaded(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q: want 503 with Retry-After (%.300s)", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if code, msg := errorOf(t, body); code != "overloaded" || !strings.Contains(msg, "gateway.max_inflight_mb") {
		t.Errorf("code %q, message %q: want overloaded naming gateway.max_inflight_mb", code, msg)
	}
	if where := leak(body, limitKey); where != "" {
		t.Errorf("the key leaked (%s): %s", where, body)
	}
}

// waitInflight waits until a request holds bytes of max_inflight_mb.
func waitInflight(t *testing.T, gw *Handler) {
	t.Helper()
	for !gw.inflightHeld() {
		select {
		case <-t.Context().Done():
			t.Fatal("no request in flight")
		case <-time.After(time.Millisecond):
		}
	}
}

// inflightHeld reports whether any bytes of max_inflight_mb are held.
func (g *Handler) inflightHeld() bool {
	all := int64(g.plan.cfg.MaxInflightMB) << 20
	if g.inflight.TryAcquire(all) {
		g.inflight.Release(all)
		return false
	}
	return true
}
