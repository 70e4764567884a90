package gateway

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// leanSeeds are upstream chunks (one per line), as servers send them and
// as a hostile one might.
var leanSeeds = []string{
	`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello "},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"x","model":"m-2","choices":[{"index":0,"delta":{"content":"a \"quoted\" <b> & \u00e9\n"},"finish_reason":null}]}`,
	`{"id":"x","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	`{"id":"x","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}},{"index":1,"delta":{"content":"y"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"y"}}]}`,
	`{"choices":[{"index":0,"delta":{"refusal":"no"}}]}`,
	`{"choices":[{"delta":{"content":"one"},"delta":{"content":"two"}}]}`,
	`{"Choices":[{"delta":{"content":"case"}}],"MODEL":"sk-secret"}`,
	`{"cho\u0069ces":[{"delta":{"content":"esc"}}]}`,
	`{"model":"key sk-secret here","system_fingerprint":"fp sk-secret","choices":[{"delta":{"content":"k"}}]}`,
	`{ "model" : "m" , "choices" : [ { "index" : 0 , "delta" : { "content" : "spaced" } , "finish_reason" : "length" } ] }`,
	`{"choices":null,"model":null}`,
	`{"choices":[{"index":0,"delta":{"content":5}}]}`,
	`{"choices":[{"index":0,"delta":null,"finish_reason":7}]}`,
	`{"choices":[1,2]}`,
	`{"choices":[{"index":0.0,"delta":{"content":"float index"}}]}`,
}

// FuzzLeanRelay checks the lean relay against the full decoder: for any
// sequence of chunks, what the client gets (each event's JSON), the
// answer accumulated, the model and fingerprint, and each chunk's result
// are the same whichever path took them.
func FuzzLeanRelay(f *testing.F) {
	f.Add(strings.Join(leanSeeds[:4], "\n"), "", false)
	f.Add(strings.Join(leanSeeds, "\n"), "", false)
	f.Add(strings.Join(leanSeeds[1:4], "\n"), "Hello", true)
	for _, s := range leanSeeds {
		f.Add(s, "", false)
	}
	f.Fuzz(func(t *testing.T, chunks, have string, continuation bool) {
		lean, full := newLeanCall(have, continuation), newLeanCall(have, continuation)
		for i, data := range strings.Split(chunks, "\n") {
			if !json.Valid([]byte(data)) || !strings.HasPrefix(data, "{") {
				continue // not a chunk: the upstream reader never passes it
			}
			lp, lf, lerr := lean.r.RawChunk([]byte(data))
			var ch openai.ChatCompletionChunk
			_ = json.Unmarshal([]byte(data), &ch)
			fp, ff, ferr := full.r.Chunk(ch)
			if lp != fp || lf != ff || (lerr == nil) != (ferr == nil) {
				t.Fatalf("chunk %d %s: lean (%v %q %v), full (%v %q %v)", i, data, lp, lf, lerr, fp, ff, ferr)
			}
			if lerr != nil {
				break
			}
		}
		if got, want := lean.state(), full.state(); got != want {
			t.Fatalf("state: lean %q, full %q", got, want)
		}
		if got, want := events(t, lean.w.Body.Bytes()), events(t, full.w.Body.Bytes()); !reflect.DeepEqual(got, want) {
			t.Fatalf("events:\nlean %v\nfull %v", got, want)
		}
		if strings.Contains(lean.w.Body.String(), "sk-secret") && !strings.Contains(full.w.Body.String(), "sk-secret") {
			t.Fatalf("the lean relay leaks the key: %s", lean.w.Body.String())
		}
	})
}

// leanCase is a streaming call and one attempt's relay, on a recorder.
type leanCase struct {
	c *gatewayCall
	r *relay
	w *httptest.ResponseRecorder
}

func newLeanCall(have string, continuation bool) leanCase {
	g := &Handler{plan: routes{cfg: Config{MaxResponseMB: defaultMaxResponseMB}}, log: zerolog.Nop()}
	w := httptest.NewRecorder()
	c := newGatewayCall(g, &chatRequest{n: 1, stream: true}, w)
	c.id, c.created = "chatcmpl-test", 1
	if have != "" {
		c.acc.addText([]byte(have), "")
		c.sent, c.match = true, &matcher{have: have}
	}
	t := target{ep: Endpoint{Endpoint: upstream.Endpoint{Name: "ep", APIKey: "sk-secret"}}}
	return leanCase{c: c, w: w, r: &relay{c: c, t: t, res: &attemptResult{model: "m"}, continuation: continuation}}
}

// state is what the call has accumulated.
func (l leanCase) state() string {
	return strings.Join([]string{l.c.acc.allText(), l.c.acc.finishReason(), l.r.res.model, l.c.fingerprint,
		string(bytes.Join(l.c.pending, []byte("|")))}, "\x00")
}

// events decodes a recorded stream's events.
func events(t *testing.T, body []byte) []any {
	t.Helper()
	var out []any
	for _, ev := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		if ev == "" {
			continue
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.ContainsAny(data, "\r\n") {
			t.Fatalf("event is not one data line: %q", ev)
		}
		var v any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatalf("event is not JSON: %q", data)
		}
		out = append(out, v)
	}
	return out
}

// TestScanChunkTakesTheCommonChunks: the chunks of a plain text answer
// take the lean path (the fuzz target checks that it is right; this that
// it is taken, which is what makes it lean).
func TestScanChunkTakesTheCommonChunks(t *testing.T) {
	for i, data := range leanSeeds[:4] {
		s, ok := scanChunk([]byte(data))
		if !ok {
			t.Errorf("seed %d left to the full decoder: %s", i, data)
			continue
		}
		if s.n != 1 {
			t.Errorf("seed %d: %d choices, want 1", i, s.n)
		}
	}
	for i, data := range leanSeeds[4:12] {
		if _, ok := scanChunk([]byte(data)); ok {
			t.Errorf("seed %d taken by the lean path: %s", i+4, data)
		}
	}
}
