package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/poise-dev/poise/tiers/upstream/upstreamtest"
	"github.com/rs/zerolog"
)

// sseSeeds are upstream bodies: a complete answer, its variants and its
// failures.
func sseSeeds() []string {
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\n\n"
	}
	usage := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}` + "\n\n"
	done := "data: [DONE]\n\n"
	role, hello, world := chunk(`{"role":"assistant","content":""}`, ""), chunk(`{"content":"Hello"}`, ""), chunk(`{"content":" world"}`, "")
	return []string{
		role + hello + world + chunk(`{}`, "stop") + usage + done,
		role + hello + chunk(`{}`, "length") + done,
		role + hello + world, // cut: no finish
		role + hello + done,  // [DONE] without a finish
		role + chunk(`{}`, "stop") + done,
		role + hello + chunk(`{}`, "content_filter") + done,
		role + chunk(`{"refusal":"I can't help with that."}`, "") + done,
		role + hello + `data: {"error":{"message":"overloaded","type":"server_error","code":null}}` + "\n\n",
		`data: {"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}` + "\n\n",
		`data: {"error":{"message":"slow down","code":429}}` + "\n\n",
		": keep-alive\n\n" + strings.ReplaceAll(role+hello+chunk(`{}`, "stop")+done, "\n", "\r\n"),
		"event: thread.message\ndata: {}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\ndata: more\n\n", "data: {not json\n\n", "",
	}
}

// FuzzGatewayRelay serves the same fuzz responses to the gateway, which
// relays them to a client of /v1/chat/completions (streaming or not),
// with one endpoint in the chain. Properties: no panic; the request ends
// by itself; a non-streaming client gets a chat.completion with a
// finish_reason and an answer, or a JSON error; a streaming
// client gets a JSON error response (an OpenAI error, or the provider's
// own error object), or an event stream of JSON chunks
// that ends either with [DONE] after a finish_reason or with an error
// event — never a stream cut short that looks complete.
func FuzzGatewayRelay(f *testing.F) {
	for _, s := range sseSeeds() {
		f.Add(byte(0), []byte(s), false, true)
	}
	f.Add(byte(0), []byte(sseSeeds()[0]), false, false)
	f.Add(byte(0), []byte(sseSeeds()[2]), true, true)
	f.Add(byte(11), []byte(`{"error":{"message":"boom","type":"server_error"}}`), false, true)
	f.Fuzz(func(t *testing.T, status byte, body []byte, hang, stream bool) {
		up := upstreamtest.Fuzz{Status: upstreamtest.FuzzStatuses[int(status)%len(upstreamtest.FuzzStatuses)], Body: body, Hang: hang}
		synctest.Test(t, func(t *testing.T) {
			checkGatewayRelay(t, up, stream)
		})
	})
}

func checkGatewayRelay(t *testing.T, up upstreamtest.Fuzz, stream bool) {
	cfg := Config{Chains: map[string][]Endpoint{"chat": {{Endpoint: upstream.Endpoint{
		Name: "up", BaseURL: "http://vendor.invalid/v1", APIKey: "sk-up", Model: "m"}}}}}
	gw, err := New(cfg, nil, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	gw.clients["up"] = upstream.New(gw.clients["up"].Endpoint(), &http.Client{Transport: up})
	gw.sleep = func(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }

	reqBody, _ := json.Marshal(map[string]any{"model": "chat", "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": "Why this job?"}}})
	ctx, cancel := context.WithTimeout(t.Context(), 10*fuzzDeadline)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", bytes.NewReader(reqBody))
	r.RemoteAddr = "127.0.0.1:40000"
	w := httptest.NewRecorder()
	gw.ServeHTTP(w, r)
	if ctx.Err() != nil {
		t.Fatalf("the client's deadline ended the request")
	}
	switch {
	case w.Code != http.StatusOK:
		checkErrorBody(t, w.Code, w.Body.Bytes())
	case stream:
		checkRelayedStream(t, w, up)
	default:
		checkCompletion(t, w.Body.Bytes())
	}
}

// checkErrorBody: an OpenAI error, {"error": {"message", "type", ...}},
// with a string message and type (the gateway fills them into a
// provider's own error object that lacks them).
func checkErrorBody(t *testing.T, status int, body []byte) {
	t.Helper()
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || len(e.Error) == 0 || e.Error[0] != '{' {
		t.Fatalf("status %d with a body that is no OpenAI error: %q", status, body)
	}
	var obj struct {
		Message any `json:"message"`
		Type    any `json:"type"`
	}
	_ = json.Unmarshal(e.Error, &obj) // an object: it decodes
	msg, _ := obj.Message.(string)
	typ, _ := obj.Type.(string)
	if msg == "" || typ == "" {
		t.Fatalf("status %d with an error without a message or type: %q", status, body)
	}
}

func checkCompletion(t *testing.T, body []byte) {
	t.Helper()
	var c openai.ChatCompletion
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 {
		t.Fatalf("200 with a body that is no completion: %q", body)
	}
	ch := c.Choices[0]
	empty := ch.Message.Content == "" && ch.Message.Refusal == "" && len(ch.Message.ToolCalls) == 0
	// An empty answer is fine only as a filter's refusal, passed on as
	// OpenAI itself answers it: 200 with finish_reason content_filter.
	if ch.FinishReason == "" || (empty && ch.FinishReason != upstream.FinishFilter) {
		t.Fatalf("200 with an empty or unfinished completion: %q", body)
	}
}

// checkRelayedStream reads the client's event stream.
func checkRelayedStream(t *testing.T, w *httptest.ResponseRecorder, up upstreamtest.Fuzz) {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("200 stream with Content-Type %q", ct)
	}
	body := w.Body.String()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("stream does not end with a whole event: %q", body)
	}
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	finished := false
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("event %d is not one data line: %q", i, ev)
		}
		last := i == len(events)-1
		if data == "[DONE]" {
			if !last || !finished {
				t.Fatalf("[DONE] at event %d of %d, after a finish_reason: %v", i, len(events), finished)
			}
			return
		}
		var ch struct {
			Error   json.RawMessage `json:"error"`
			Choices []struct {
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("event %d is not JSON: %q", i, data)
		}
		if ch.Error != nil {
			if !last {
				t.Fatalf("error event %d is not the last of %d", i, len(events))
			}
			checkErrorBody(t, http.StatusOK, []byte(data))
			return
		}
		for _, c := range ch.Choices {
			finished = finished || (c.FinishReason != nil && *c.FinishReason != "")
		}
	}
	t.Fatalf("stream ends with neither [DONE] nor an error: %q", body)
}

// fuzzDeadline is the client's deadline, far beyond every watchdog.
const fuzzDeadline = time.Minute
