package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/tiers"
)

// TestBadInput: each malformed or refused input gets a short error message
// with a seq, and the session goes on: a question afterwards is answered.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name   string
		binary bool
		raw    string
		code   string
	}{
		{"malformed JSON", false, `{"type": "question", "text": `, codeBadJSON},
		{"not an object", false, `[1, 2, 3]`, codeBadJSON},
		{"unknown type", false, `{"type": "dance"}`, codeUnknownType},
		{"long unknown type", false, `{"type": "` + strings.Repeat("d", 4000) + `"}`, codeUnknownType},
		{"missing type", false, `{"text": "hi"}`, codeMissingField},
		{"question without text", false, `{"type": "question"}`, codeMissingField},
		{"empty question", false, `{"type": "question", "text": "   "}`, codeBadField},
		{"profile without profile", false, `{"type": "profile"}`, codeMissingField},
		{"bad lang", false, `{"type": "profile", "profile": {"lang": "fr"}}`, codeBadField},
		{"second hello", false, `{"type": "hello", "v": 1}`, codeSecondHello},
		{"binary before audio_start", true, "\x01\x02\x03\x04", codeAudio},
		{"bad sample rate", false, `{"type": "audio_start", "sample_rate": 44100, "encoding": "pcm_s16le"}`, codeAudio},
		{"bad encoding", false, `{"type": "audio_start", "sample_rate": 16000, "encoding": "opus"}`, codeAudio},
		{"text too large", false, `{"type": "ping", "t": "` + strings.Repeat("x", maxTextMessage) + `"}`, codeTooLarge},
		{"question too large", false, `{"type": "question", "text": "` + strings.Repeat("为", maxQuestionBytes/3+1) + `"}`, codeTooLarge},
		{"question id too long", false, `{"type": "question", "id": "` + strings.Repeat("q", maxIDBytes+1) + `", "text": "Why?"}`, codeTooLarge},
		{"question id with a space", false, `{"type": "question", "id": "q 1", "text": "Why?"}`, codeBadField},
		{"question id with a newline", false, `{"type": "question", "id": "q\n1", "text": "Why?"}`, codeBadField},
		{"NUL in question", false, `{"type": "question", "text": "Why\u0000?"}`, codeBadField},
		{"escape sequence in role", false, `{"type": "profile", "profile": {"role": "\u001b[2Jadmin"}}`, codeBadField},
		{"role too large", false, `{"type": "profile", "profile": {"role": "` + strings.Repeat("r", maxRoleBytes+1) + `"}}`, codeTooLarge},
		{"resume too large", false, `{"type": "profile", "profile": {"resume": "` + strings.Repeat("简历", maxResumeBytes/6+1) + `"}}`, codeTooLarge},
		{"ping t too large", false, `{"type": "ping", "t": "` + strings.Repeat("t", maxPingBytes) + `"}`, codeTooLarge},
		{"invalid UTF-8 in a string", false, "{\"type\": \"question\", \"text\": \"Why \xff\xfe?\"}", codeBadUTF8},
		{"truncated UTF-8 sequence", false, "{\"type\": \"question\", \"text\": \"\xe4\xb8\"}", codeBadUTF8},
		{"UTF-16 surrogate encoded as UTF-8", false, "{\"type\": \"ping\", \"t\": \"\xed\xa0\x80\"}", codeBadUTF8},
		{"invalid UTF-8 outside JSON", false, "\xc3\x28", codeBadUTF8},
	}
	ts := newTestServer(t, answeringConfig())
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := ts.start(t, "en")
			typ := websocket.MessageText
			if tc.binary {
				typ = websocket.MessageBinary
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := c.ws.Write(ctx, typ, []byte(tc.raw)); err != nil {
				t.Fatal(err)
			}
			m := c.readType("error")
			if m.str("code") != tc.code || m.str("message") == "" || m.seq() == 0 {
				t.Fatalf("error = %v, want code %s with a message and a seq", m, tc.code)
			}
			if n := len(m.str("message")); n > maxErrorMessage {
				t.Fatalf("error message of %d bytes echoes the input: %.200s", n, m.str("message"))
			}
			c.askAnswered(fmt.Sprintf("after-%d", i))
		})
	}
}

const maxErrorMessage = 200 // bytes: refusals describe the input, they never echo it

// TestUnknownFieldsAccepted: fields the protocol does not name are
// ignored, as long as the message is within its size.
func TestUnknownFieldsAccepted(t *testing.T) {
	ts := newTestServer(t, answeringConfig())
	c, _ := ts.start(t, "en")
	c.send(map[string]any{"type": "question", "id": "x1", "text": "Why us?", "client": map[string]any{"build": "7", "tags": []string{"a", "b"}}})
	if m := c.readType("answer_start"); m.str("id") != "x1" {
		t.Fatalf("answer_start = %v", m)
	}
	c.readType("answer_end")
}

func TestAudioFrameValidation(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	c, _ := ts.start(t, "en")
	c.send(map[string]any{"type": "audio_start", "sample_rate": 16000, "encoding": "pcm_s16le", "source": "mic"})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for _, frame := range [][]byte{make([]byte, 3), make([]byte, maxAudioFrame+2)} {
		if err := c.ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
			t.Fatal(err)
		}
		if m := c.readType("error"); m.str("code") != codeAudio {
			t.Fatalf("error = %v", m)
		}
	}
	c.send(map[string]any{"type": "ping", "t": "ok"})
	c.readType("pong")
}

// TestHandshakeErrors: before a session exists, each bad hello gets an
// error and the connection waits for a good one.
func TestHandshakeErrors(t *testing.T) {
	ts := newTestServer(t, answeringConfig())
	c := ts.dial(t)
	bad := []struct {
		raw  string
		code string
	}{
		{`{"type": "question", "text": "hi"}`, codeNotHello},
		{`{"type": "hello", "v": 2}`, codeBadVersion},
		{"{\"type\": \"hello\", \"v\": 1, \"profile\": {\"role\": \"\xff\"}}", codeBadUTF8},
		{`{"type": "hello", "v": 1, "pad": "` + strings.Repeat("p", maxTextMessage) + `"}`, codeTooLarge},
		{`{"type": "hello", "v": 1, "token": "` + strings.Repeat("k", maxTokenBytes+1) + `"}`, codeTooLarge},
		{`{"type": "hello", "v": 1, "token": "v1.ab cd"}`, codeBadField},
		{`{"type": "hello", "v": 1, "profile": {"resume": "` + strings.Repeat("r", maxResumeBytes+1) + `"}}`, codeTooLarge},
		{`{"type": "hello", "v": 1, "resume": {"session_id": "` + strings.Repeat("s", maxIDBytes+1) + `", "token": "t"}}`, codeTooLarge},
		{`{"type": "hello", "v": 1, "resume": {"session_id": "../../etc", "token": "t"}}`, codeBadField},
		{`{"type": "hello", "v": 1, "resume": {"session_id": "s1", "token": "` + strings.Repeat("t", maxResumeToken+1) + `"}}`, codeTooLarge},
	}
	for _, b := range bad {
		c.sendRaw([]byte(b.raw))
		if m := c.readType("error"); m.str("code") != b.code || len(m.str("message")) > maxErrorMessage {
			t.Fatalf("hello %.80s: error = %.300v, want %s", b.raw, m, b.code)
		}
	}
	c.send(hello("en"))
	if m := c.read(); m.str("type") != "welcome" {
		t.Fatalf("got %v, want welcome", m)
	}
	c.askAnswered("q-after-bad-hellos")
}

// TestOversizedFrameCloses: a frame over the read limit closes that
// connection with 1009; its session goes on (a resume is answered) and
// other sessions are untouched.
func TestOversizedFrameCloses(t *testing.T) {
	ts := newTestServer(t, answeringConfig())
	other, _ := ts.start(t, "en")
	c, w := ts.start(t, "en")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c.ws.Write(ctx, websocket.MessageBinary, make([]byte, readLimit+1))
	_, err := c.tryRead(waitLimit)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("close status = %v (%v), want 1009", got, err)
	}
	other.askAnswered("other")
	r := ts.dial(t)
	r.send(resumeHello(w, 0))
	if m := r.read(); m.str("type") != "welcome" || m["resumed"] != true {
		t.Fatalf("resume after 1009: %v", m)
	}
	r.askAnswered("after-1009")
}

func TestOriginCheck(t *testing.T) {
	ts := newTestServer(t, Config{AllowedOrigins: []string{"app.example.com:*"}})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for origin, ok := range map[string]bool{"https://evil.example.com": false, "https://app.example.com:8443": true} {
		hdr := map[string][]string{"Origin": {origin}}
		ws, resp, err := websocket.Dial(ctx, ts.url, &websocket.DialOptions{HTTPHeader: hdr})
		if ok != (err == nil) {
			t.Fatalf("origin %s: err = %v, want allowed=%v", origin, err, ok)
		}
		if err == nil {
			ws.CloseNow()
		} else if resp == nil || resp.StatusCode != 403 {
			t.Fatalf("origin %s: response %v, want 403", origin, resp)
		}
	}
}

// TestSlowClientClosed: a client that stops reading during a long answer
// is closed with 1008 instead of blocking its session; it can resume and
// lose nothing.
func TestSlowClientClosed(t *testing.T) {
	tokens := make([]string, 3000)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("token %d of a long answer that the client does not read; ", i)
	}
	gate := gatedAnswerer{tokens: tokens, emitted: make(chan struct{}), release: make(chan struct{})}
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L1), Answerer: gate, SendQueue: 4})
	c, w := ts.startSmallBuffers(t)
	c.send(map[string]any{"type": "question", "id": "long", "text": "Walk me through your last project."})
	var last uint64
	var err error
	for {
		var m msg
		if m, err = c.tryRead(waitLimit); err != nil {
			break
		}
		last = m.seq()
	}
	if got := websocket.CloseStatus(err); got != websocket.StatusPolicyViolation {
		t.Fatalf("close status = %v (%v), want 1008", got, err)
	}
	// Resume once every token is in the session's inbox, ahead of the
	// resume, so that the replay carries them all; the answer ends only
	// after the resume.
	select {
	case <-gate.emitted:
	case <-time.After(waitLimit):
		t.Fatal("the answer did not stream")
	}
	r := ts.dial(t)
	r.send(resumeHello(w, last))
	r.readType("welcome")
	close(gate.release)
	for want := last + 1; ; want++ {
		m := r.read()
		if m.seq() != want {
			t.Fatalf("seq %d, want %d", m.seq(), want)
		}
		if m.str("type") == "answer_end" {
			if m.str("id") != "long" || m.str("reason") != endDone {
				t.Fatalf("answer_end = %v", m)
			}
			break
		}
	}
	r.askAnswered("after-resume")
}

// gatedAnswerer streams its tokens at once for the question "long", says
// so by closing emitted, and holds that answer open until release is
// closed. Other questions get a one-token answer.
type gatedAnswerer struct {
	tokens           []string
	emitted, release chan struct{}
}

func (a gatedAnswerer) Answer(ctx context.Context, req tiers.Request, emit func(tiers.Event)) {
	emit(tiers.Event{Kind: tiers.EventStart, Level: req.Level, Source: "gated"})
	if req.ID != "long" {
		emit(tiers.Event{Kind: tiers.EventDelta, Text: "short"})
	} else {
		for _, tok := range a.tokens {
			emit(tiers.Event{Kind: tiers.EventDelta, Text: tok})
		}
		close(a.emitted)
		select {
		case <-a.release:
		case <-ctx.Done():
			return
		}
	}
	emit(tiers.Event{Kind: tiers.EventEnd, Reason: endDone})
}
