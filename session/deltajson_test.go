package session

import (
	"encoding/json"
	"testing"
)

// FuzzDeltaJSON: an answer delta's hand-written encoding is json.Marshal's,
// byte for byte, whatever its id and text (escapes, HTML characters,
// U+2028, invalid UTF-8).
func FuzzDeltaJSON(f *testing.F) {
	for _, s := range []string{"", "plain text", `"quoted" \ back`, "<b>&amp;</b>", "line\nbreak\ttab\r\b\f\x00\x1f",
		"中文回答，带标点。", "\u2028\u2029", "\xff\xfe bad utf8 \xc3", "emoji 🙂", "\x7f"} {
		f.Add(uint64(7), "q3", s)
	}
	f.Fuzz(func(t *testing.T, seq uint64, id, text string) {
		m := &answerDeltaMsg{head: head{Type: "answer_delta", Seq: seq}, ID: id, Text: text}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := encode(m); string(got) != string(want) {
			t.Fatalf("encode\n %q\nwant\n %q", got, want)
		}
	})
}

// BenchmarkDeltaJSON compares an answer delta's encoding by json.Marshal
// and by appendJSON (what encode uses).
func BenchmarkDeltaJSON(b *testing.B) {
	m := &answerDeltaMsg{head: head{Type: "answer_delta", Seq: 1234}, ID: "q17", Text: " the cache, and then we"}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encode(m)
		}
	})
}
