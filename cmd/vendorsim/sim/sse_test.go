package sim

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRawSSEFraming checks the bytes on the wire: every event is
// "data: <json>\n\n", the first carries the role, content follows one
// piece per chunk, then the finish chunk, the usage chunk and
// "data: [DONE]\n\n".
func TestRawSSEFraming(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	raw := rawStream(t, h, ctx, `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)

	if !strings.HasSuffix(raw, "\n\ndata: [DONE]\n\n") {
		t.Fatalf("stream does not end with data: [DONE]: %q", raw[max(0, len(raw)-80):])
	}
	events := strings.Split(strings.TrimSuffix(raw, "\n\n"), "\n\n")
	want := pieces(defaultReply("gpt-4o-mini", "hi"))
	if len(events) != len(want)+4 { // role, pieces, finish, usage, [DONE]
		t.Fatalf("%d events, want %d", len(events), len(want)+4)
	}
	var id string
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("event %d is not one data line: %q", i, ev)
		}
		if i == len(events)-1 {
			if data != "[DONE]" {
				t.Errorf("last event = %q", data)
			}
			continue
		}
		var c struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Created int64  `json:"created"`
			Model   string `json:"model"`
			Usage   *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
			Choices []struct {
				Index        int             `json:"index"`
				Delta        map[string]any  `json:"delta"`
				Logprobs     json.RawMessage `json:"logprobs"`
				FinishReason *string         `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %d: %v: %s", i, err, data)
		}
		if id == "" {
			id = c.ID
		}
		if c.ID != id || !strings.HasPrefix(id, "chatcmpl-") || c.Object != "chat.completion.chunk" || c.Model != "gpt-4o-mini" || c.Created == 0 {
			t.Errorf("event %d envelope: %s", i, data)
		}
		if !strings.Contains(data, `"usage":`) {
			t.Errorf("event %d has no usage field although include_usage is set: %s", i, data)
		}
		switch {
		case i == 0:
			if len(c.Choices) != 1 || c.Choices[0].Delta["role"] != "assistant" || c.Choices[0].Delta["content"] != "" || c.Choices[0].FinishReason != nil {
				t.Errorf("role chunk: %s", data)
			}
		case i <= len(want):
			if len(c.Choices) != 1 || c.Choices[0].Delta["content"] != want[i-1] || c.Choices[0].FinishReason != nil ||
				string(c.Choices[0].Logprobs) != "null" || c.Usage != nil {
				t.Errorf("content chunk %d: %s", i, data)
			}
		case i == len(want)+1:
			if len(c.Choices) != 1 || len(c.Choices[0].Delta) != 0 || c.Choices[0].FinishReason == nil || *c.Choices[0].FinishReason != "stop" {
				t.Errorf("finish chunk: %s", data)
			}
		default:
			if len(c.Choices) != 0 || c.Usage == nil || c.Usage.CompletionTokens != len(want) {
				t.Errorf("usage chunk: %s", data)
			}
		}
	}
}

func TestRawSSEWithoutUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	raw := rawStream(t, h, ctx, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if strings.Contains(raw, `"usage"`) {
		t.Errorf("usage sent without stream_options.include_usage")
	}
	first, _, _ := strings.Cut(raw, "\n\n")
	wantPrefix := `data: {"id":"chatcmpl-`
	if !strings.HasPrefix(first, wantPrefix) || !strings.HasSuffix(first, `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`) {
		t.Errorf("first event = %q", first)
	}
}

func TestRawMalformedChunk(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("m", Fault{MalformedAt: 1})
	raw := rawStream(t, h, ctx, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	events := strings.Split(raw, "\n\n")
	var v any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(events[0], "data: ")), &v); err != nil {
		t.Errorf("role chunk is malformed: %v", err)
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(events[1], "data: ")), &v); err == nil {
		t.Errorf("chunk 1 is valid JSON: %s", events[1])
	}
	if !strings.HasSuffix(raw, "data: [DONE]\n\n") {
		t.Error("the stream after a malformed chunk did not go on to [DONE]")
	}
}
