package session

import (
	"context"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/tiers"
)

// TestBadInput: each malformed or refused input gets an error message and
// the session goes on (checked with a ping after each).
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
	}
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	c, _ := ts.start(t, "en")
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
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
			c.send(map[string]any{"type": "ping", "t": i})
			if p := c.readType("pong"); p["t"] != float64(i) {
				t.Fatalf("pong = %v", p)
			}
		})
	}
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

func TestHandshakeErrors(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	c := ts.dial(t)
	c.send(map[string]any{"type": "question", "text": "hi"})
	if m := c.readType("error"); m.str("code") != codeNotHello {
		t.Fatalf("error = %v", m)
	}
	c.send(map[string]any{"type": "hello", "v": 2})
	if m := c.readType("error"); m.str("code") != codeBadVersion {
		t.Fatalf("error = %v", m)
	}
	c.send(hello("en"))
	if m := c.read(); m.str("type") != "welcome" {
		t.Fatalf("got %v, want welcome", m)
	}
}

// TestOversizedFrameCloses: a frame over the read limit closes that
// connection with 1009; other sessions are untouched.
func TestOversizedFrameCloses(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	other, _ := ts.start(t, "en")
	c, _ := ts.start(t, "en")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c.ws.Write(ctx, websocket.MessageBinary, make([]byte, readLimit+1))
	_, err := c.tryRead(waitLimit)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("close status = %v (%v), want 1009", got, err)
	}
	other.send(map[string]any{"type": "ping", "t": 1})
	other.readType("pong")
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

// TestSlowClientClosed: a client that stops reading is closed with 1008
// instead of blocking its session; it can resume and lose nothing.
func TestSlowClientClosed(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3), SendQueue: 4})
	c, w := ts.startSmallBuffers(t)
	const pings = 20000
	for i := 1; i <= pings; i++ {
		c.send(map[string]any{"type": "ping", "t": i})
	}
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
	r := ts.dial(t)
	r.send(resumeHello(w, last))
	r.readType("welcome")
	r.send(map[string]any{"type": "ping", "t": "live"})
	for want := last + 1; ; want++ {
		m := r.read()
		if m.seq() != want {
			t.Fatalf("seq %d, want %d", m.seq(), want)
		}
		if m["t"] == "live" {
			break
		}
	}
}
