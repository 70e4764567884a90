package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// chunkEvent is one content chunk's SSE event.
func chunkEvent(content string) string {
	return fmt.Sprintf(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", content)
}

// readAll reads every event of body, returning the chunks' content.
func readAll(body string) (text string, bad int, err error) {
	ev := newEventReader(strings.NewReader(body), "")
	var b strings.Builder
	s := &chunkSink{}
	for {
		kind, ok := ev.next(s.decode)
		if ok && kind == eventChunk {
			for _, c := range s.ch.Choices {
				b.WriteString(c.Delta.Content)
			}
		}
		if !ok || kind == eventDone {
			break
		}
	}
	return b.String(), ev.bad, ev.err
}

// readDeltas is readAll through the Delta decoder.
func readDeltas(body string) (text string, bad int, err error) {
	ev := newEventReader(strings.NewReader(body), "")
	var b strings.Builder
	s := &deltaSink{}
	for {
		kind, ok := ev.next(s.decode)
		if ok && kind == eventChunk {
			b.WriteString(s.d.Content)
		}
		if !ok || kind == eventDone {
			break
		}
	}
	return b.String(), ev.bad, ev.err
}

func TestEventReaderTolerance(t *testing.T) {
	words := []string{"one ", "two ", "three ", "four"}
	whole := func(garbage map[int]string) string {
		var b strings.Builder
		for i, w := range words {
			b.WriteString(chunkEvent(w))
			if g, ok := garbage[i]; ok {
				b.WriteString(g)
			}
		}
		return b.String() + "data: [DONE]\n\n"
	}
	for _, tc := range []struct {
		name    string
		body    string
		text    string
		bad     int
		wantErr error // nil: a clean end
	}{
		{"clean", whole(nil), "one two three four", 0, nil},
		{"one garbage event is skipped", whole(map[int]string{1: "data: {oops\n\n"}), "one two three four", 1, nil},
		{"comments and other fields are no events", whole(map[int]string{0: ": ping\n\nevent: x\nid: 3\n\n"}), "one two three four", 0, nil},
		{"a broken chunk may hold words: a cut", whole(map[int]string{1: `data: {"id":"c","object":"chat.completion.chunk","choices":[{"delta":{"content":"fi` + "\n\n"}), "one two ", 1, errLostChunk},
		{"mostly garbage: a cut", "data: x\n\ndata: y\n\n" + whole(nil), "", 2, errGarbage},
		{"CRLF lines", strings.ReplaceAll(whole(nil), "\n", "\r\n"), "one two three four", 0, nil},
		{"cut mid-event", chunkEvent("one ") + `data: {"id"`, "one ", 0, io.ErrUnexpectedEOF},
		{"an event over 1 MiB", chunkEvent("one ") + "data: " + strings.Repeat("x", maxEventSize+1), "one ", 0, errEventTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, read := range map[string]func(string) (string, int, error){"chunks": readAll, "deltas": readDeltas} {
				text, bad, err := read(tc.body)
				if text != tc.text || bad != tc.bad {
					t.Fatalf("%s: text %q with %d bad events, want %q with %d", name, text, bad, tc.text, tc.bad)
				}
				if tc.wantErr == nil && !errors.Is(err, io.EOF) || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("%s: ended with %v, want %v", name, err, tc.wantErr)
				}
			}
		})
	}
}

// FuzzEventReader: any bytes: no panic, and it ends. Bodies made of whole
// chunks with garbage lines between them (not chunk-like) arrive whole
// while good events outnumber the bad.
func FuzzEventReader(f *testing.F) {
	for _, s := range sseSeeds() {
		f.Add([]byte(s), []byte("data: {oops\n\n"))
	}
	f.Add([]byte(chunkEvent("a")+chunkEvent("b")), []byte(": comment\n\ndata: 42x\n\n"))
	f.Fuzz(func(t *testing.T, body, garbage []byte) {
		_, _, _ = readAll(string(body))
		if bytes.Contains(garbage, []byte("\n\n")) || looksLikeChunk(garbage) || bytes.Contains(garbage, []byte("[DONE]")) ||
			bytes.Contains(garbage, []byte(`"error"`)) || bytes.ContainsAny(garbage, "\r") {
			return
		}
		g := string(garbage)
		if g != "" {
			g = "data: " + strings.ReplaceAll(g, "\n", "") + "\n\n"
		}
		text, _, err := readAll(chunkEvent("a") + chunkEvent("b") + g + chunkEvent("c") + "data: [DONE]\n\n")
		if text != "abc" || !errors.Is(err, io.EOF) {
			t.Fatalf("with garbage %q: text %q, end %v", g, text, err)
		}
	})
}
