package upstream

import (
	"strings"
	"testing"
)

// TestDeltaDecode: the Delta decoder reads what the whole-chunk decoder
// reads of choice 0 and the usage, and an absent field of a later chunk
// is empty, not the earlier chunk's.
func TestDeltaDecode(t *testing.T) {
	events := []string{
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":"stop"}]}`,
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"refusal":"no"}}]}`,
		`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}`,
	}
	ds, cs := &deltaSink{h: &deltaRecorder{}}, &chunkSink{}
	for _, e := range events {
		if !ds.decode([]byte(e)) || !cs.decode([]byte(e)) {
			t.Fatalf("%s: not decoded", e)
		}
		ds.take()
		ch := cs.ch
		want := Delta{Choices: len(ch.Choices), PromptTokens: ch.Usage.PromptTokens, CompletionTokens: ch.Usage.CompletionTokens}
		if len(ch.Choices) > 0 {
			want.Content, want.Refusal, want.Finish = ch.Choices[0].Delta.Content, ch.Choices[0].Delta.Refusal, ch.Choices[0].FinishReason
		}
		got := ds.h.(*deltaRecorder).last
		if got != want {
			t.Errorf("%s:\n delta %+v\n chunk %+v", e, got, want)
		}
	}
	if ds.decode([]byte(`{"choices":[{"delta":{"content":5}}]}`)) {
		t.Error("a content that is no string decoded")
	}
	if !strings.Contains(events[0], `"Hel"`) {
		t.Fatal("fixture changed")
	}
}

// TestDeltaDecodeEdges: the one-pass reader's answer on the chunks a
// vendor seldom sends: several choices, nulls, a key given twice, and the
// types that make a chunk undecodable.
func TestDeltaDecodeEdges(t *testing.T) {
	cases := []struct {
		in   string
		want Delta
		ok   bool
	}{
		{`{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"},{"delta":{"content":"b"}}]}`, Delta{Choices: 2, Content: "a", Finish: "stop"}, true},
		{`{"choices":null,"usage":{"prompt_tokens":3,"completion_tokens":4}}`, Delta{PromptTokens: 3, CompletionTokens: 4}, true},
		{`{"choices":[{"delta":{"content":"a","content":"b"}}]}`, Delta{Choices: 1, Content: "b"}, true},
		{`{"choices":[{"delta":{"content":"a","content":null}}]}`, Delta{Choices: 1, Content: "a"}, true},
		{`{"choices":[{"delta":"x","finish_reason":null}],"usage":null}`, Delta{Choices: 1}, true},
		{`{"choices":[{"delta":{"con\u0074ent":"\u00e9"}}]}`, Delta{Choices: 1, Content: "é"}, true},
		{`{"choices":[7]}`, Delta{Choices: 1}, true},
		{`[]`, Delta{}, true},
		{`{"choices":{"0":{}}}`, Delta{}, false},
		{`{"choices":[{"finish_reason":1}]}`, Delta{}, false},
		{`{"choices":[{"delta":{"refusal":true}}]}`, Delta{}, false},
		{`{"choices":[],"usage":{"prompt_tokens":"3"}}`, Delta{}, false},
		{`{"choices":[{"delta":{"content":"a"}}`, Delta{}, false},
	}
	for _, c := range cases {
		s := &deltaSink{}
		ok := s.decode([]byte(c.in))
		if ok != c.ok || (ok && s.d != c.want) {
			t.Errorf("%s: decoded %v %+v, want %v %+v", c.in, ok, s.d, c.ok, c.want)
		}
	}
}

type deltaRecorder struct{ last Delta }

func (r *deltaRecorder) Delta(d Delta) (bool, string, error) {
	r.last = d
	return d.Content != "", d.Finish, nil
}
func (r *deltaRecorder) Ended() string { return "" }

// BenchmarkChunkDecode compares decoding one content chunk whole (with
// openai-go) and as a Delta.
func BenchmarkChunkDecode(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-sim-1","object":"chat.completion.chunk","created":1764600000,"model":"gpt-4o-mini","system_fingerprint":"fp_sim","choices":[{"index":0,"delta":{"content":" about"},"logprobs":null,"finish_reason":null}]}`)
	b.Run("chunk", func(b *testing.B) {
		s := &chunkSink{}
		b.ReportAllocs()
		for b.Loop() {
			s.decode(data)
		}
	})
	b.Run("delta", func(b *testing.B) {
		s := &deltaSink{}
		b.ReportAllocs()
		for b.Loop() {
			s.decode(data)
		}
	})
}
