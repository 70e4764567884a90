package session

import (
	"strings"
	"testing"

	"github.com/poise-dev/poise/coach"
)

// Benchmarks of the WebSocket protocol's hot paths: decoding every client
// text message (on the connection's reader) and encoding every server
// message (on the session goroutine, before the writer queue).

var inboundSamples = []struct {
	name string
	raw  string
}{
	{"hello", `{"type":"hello","v":1,"profile":{"lang":"en","seniority":"senior","role":"Backend engineer","resume":"` +
		strings.Repeat("Built and ran payment services in Go. ", 40) + `"},"auto_answer":true}`},
	{"question", `{"type":"question","id":"t17","text":"Tell me about a time you handled a conflict at work."}`},
	{"ping", `{"type":"ping","t":1764441600000}`},
	{"audio_start", `{"type":"audio_start","sample_rate":16000,"encoding":"pcm_s16le","source":"tab"}`},
}

func BenchmarkDecodeInbound(b *testing.B) {
	for _, s := range inboundSamples {
		raw := []byte(s.raw)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, perr := decodeInbound(raw); perr != nil {
					b.Fatal(perr)
				}
			}
		})
	}
}

func BenchmarkEncodeOutbound(b *testing.B) {
	text := "I handled it by listening first, "
	samples := []struct {
		name string
		msg  outbound
	}{
		{"answer_delta", &answerDeltaMsg{head: head{Type: "answer_delta", Seq: 4711}, ID: "t17", Text: text}},
		{"caption", &captionMsg{head: head{Type: "caption", Seq: 4712}, UttID: "u42", Text: "Tell me about a time you handled a conflict", Final: true, Source: "whisper@127.0.0.1:8178"}},
		{"answer_start", &answerStartMsg{head: head{Type: "answer_start", Seq: 4713}, ID: "t18", Question: "Why do you want to join our team?", Level: "L3", Source: "motivation-why-us-mid", Note: "Based on a generic template — adapt it to your own experience."}},
		{"coach", &coachMsg{head: head{Type: "coach", Seq: 4714}, ID: "t19", Card: coach.CardFor("Tell me about a time you failed.", "en")}},
		{"level", &levelMsg{head: head{Type: "level", Seq: 4715}, Level: "L2", From: "L1", Reason: "vendor_all_down", Chip: &Chip{Text: "⚡ Lite mode", Hint: "Main model unavailable, using the local model; answers may be briefer"}}},
	}
	for _, s := range samples {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(encode(s.msg))))
			for b.Loop() {
				encode(s.msg)
			}
		})
	}
}
