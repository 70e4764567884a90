package session

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers"
)

// Flood tests run the Hub over vendorsim's in-memory network inside a
// synctest bubble, so that the inbound rate limit sees exactly the time
// the test lets pass: a flood is an instant, and a pause is a Sleep that
// takes no real time.

const memAddr = "poise.test:80"

// memServer is a Hub served over a MemNet inside the current bubble.
type memServer struct {
	net *vendorsim.MemNet
}

func newMemServer(t *testing.T, cfg Config) *memServer {
	t.Helper()
	return newMemServerOn(t, vendorsim.NewMemNet(), cfg)
}

// newMemServerOn serves the Hub of cfg on n, which it closes at cleanup.
func newMemServerOn(t *testing.T, n *vendorsim.MemNet, cfg Config) *memServer {
	t.Helper()
	cfg.AnonymousAnywhere = true // in-memory connections have no loopback address
	hub := NewHub(cfg)
	n.Serve(memAddr, hub)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := hub.Shutdown(ctx); err != nil {
			t.Errorf("hub shutdown: %v", err)
		}
		n.Close()
	})
	return &memServer{net: n}
}

func (ms *memServer) dial(t *testing.T) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+memAddr+"/ws", &websocket.DialOptions{HTTPClient: ms.net.Client()})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &client{t: t, ws: ws}
}

func (ms *memServer) start(t *testing.T) (*client, msg) {
	t.Helper()
	c := ms.dial(t)
	c.send(hello("en"))
	return c, c.readType("welcome")
}

// answeringConfig answers every question at L1 with a short scripted answer.
func answeringConfig() Config {
	return Config{Health: newFakeHealth(tiers.L1), Answerer: scriptedAnswerer{tokens: []string{"Listen first", ", then act."}}}
}

// askAnswered asks a question and reads its answer to the end, failing on
// any error message.
func (c *client) askAnswered(id string) {
	c.t.Helper()
	c.send(map[string]any{"type": "question", "id": id, "text": "How do you handle a conflict?"})
	if m := c.readType("answer_start"); m.str("id") != id {
		c.t.Fatalf("answer_start = %v, want id %s", m, id)
	}
	if m := c.readType("answer_end"); m.str("id") != id || m.str("reason") != endDone {
		c.t.Fatalf("answer_end = %v", m)
	}
}

// flood writes n copies of a frame as fast as the client can, ignoring
// write errors (the server may close the connection mid-flood).
func (c *client) flood(n int, typ websocket.MessageType, frame []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for range n {
		if c.ws.Write(ctx, typ, frame) != nil {
			return
		}
	}
}

// errorsUntilPong sends a ping and returns the error codes read before its
// pong.
func (c *client) errorsUntilPong(t string) []string {
	c.t.Helper()
	c.send(map[string]any{"type": "ping", "t": t})
	var codes []string
	for {
		m := c.read()
		switch m.str("type") {
		case "error":
			codes = append(codes, m.str("code"))
		case "pong":
			if m["t"] == t {
				return codes
			}
		}
	}
}

func profileFrame(t *testing.T) []byte {
	b, err := json.Marshal(map[string]any{"type": "profile", "profile": map[string]any{"lang": "en", "seniority": "senior"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMessageFloodTooFast: a flood of text messages past the burst is
// dropped with one too_fast error a second at most; the connection stays
// and the session answers the next question.
func TestMessageFloodTooFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := newMemServer(t, answeringConfig())
		c, _ := ms.start(t)
		frame := profileFrame(t)
		c.flood(messageBurst+messageRate*abuseFactor, websocket.MessageText, frame)
		c.flood(messageBurst, websocket.MessageText, frame) // same instant: no second warning
		if codes := c.errorsUntilPong("after flood"); len(codes) != 1 || codes[0] != codeTooFast {
			t.Fatalf("errors after two floods in one instant = %v, want one too_fast", codes)
		}
		time.Sleep(time.Second) // the bucket refills a second's worth
		c.askAnswered("after-flood")
		c.flood(messageBurst, websocket.MessageText, frame)
		if codes := c.errorsUntilPong("a second later"); len(codes) != 1 || codes[0] != codeTooFast {
			t.Fatalf("errors after a flood a second later = %v, want one too_fast", codes)
		}
	})
}

// TestAudioFloodTooFast: audio sent far faster than real time is dropped
// past the burst with one too_fast; the session goes on.
func TestAudioFloodTooFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := newMemServer(t, answeringConfig())
		c, _ := ms.start(t)
		c.send(map[string]any{"type": "audio_start", "sample_rate": 16000, "encoding": "pcm_s16le", "source": "mic"})
		frame := make([]byte, 64000) // 2 s of audio a frame
		c.flood(audioBurst/len(frame), websocket.MessageBinary, frame)
		if codes := c.errorsUntilPong("burst"); len(codes) != 0 {
			t.Fatalf("audio within the burst got errors %v", codes)
		}
		c.flood(4, websocket.MessageBinary, frame)
		if codes := c.errorsUntilPong("over"); len(codes) != 1 || codes[0] != codeTooFast {
			t.Fatalf("errors after audio over the burst = %v, want one too_fast", codes)
		}
		time.Sleep(time.Second)
		c.askAnswered("after-audio")
	})
}

// TestSustainedFloodCloses: a client that keeps sending ten times over its
// rate for abuseStrikes seconds is closed with 1008 — not before — and
// its session goes on: a resume answers questions.
func TestSustainedFloodCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := newMemServer(t, answeringConfig())
		c, w := ms.start(t)
		frame := profileFrame(t)
		perSecond := messageBurst + messageRate*(abuseFactor+1)
		for i := range abuseStrikes - 1 {
			c.flood(perSecond, websocket.MessageText, frame)
			if codes := c.errorsUntilPong("alive"); len(codes) != 1 {
				t.Fatalf("second %d of the flood: errors %v, want one too_fast", i+1, codes)
			}
			time.Sleep(time.Second)
		}
		// The last second's flood runs beside the reads, as a client's
		// socket buffer would let it: in-memory connections buffer nothing.
		flooded := make(chan struct{})
		go func() {
			defer close(flooded)
			c.flood(perSecond, websocket.MessageText, frame)
		}()
		defer func() { <-flooded }()
		var last uint64
		for {
			m, err := c.tryRead(waitLimit)
			if err != nil {
				if got := websocket.CloseStatus(err); got != websocket.StatusPolicyViolation {
					t.Fatalf("close status = %v (%v), want 1008", got, err)
				}
				break
			}
			last = m.seq()
		}
		r := ms.dial(t)
		r.send(resumeHello(w, last))
		rw := r.read()
		if rw.str("type") != "welcome" || rw["resumed"] != true {
			t.Fatalf("welcome = %v", rw)
		}
		end, _ := rw["last_seq"].(float64)
		for seq := last; seq < uint64(end); { // the replay: what the closed connection missed
			seq = r.read().seq()
		}
		r.askAnswered("after-close")
	})
}

// TestHandshakeFloodTooFast: the inbound rate limit holds before hello
// too: junk past the burst is dropped with one too_fast, and a hello
// afterwards still opens a session that answers.
func TestHandshakeFloodTooFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := newMemServer(t, answeringConfig())
		c := ms.dial(t)
		c.flood(messageBurst+messageRate*abuseFactor, websocket.MessageText, profileFrame(t))
		time.Sleep(time.Second) // the bucket refills: the hello is not dropped
		c.send(hello("en"))
		codes := map[string]int{}
		for m := c.read(); m.str("type") != "welcome"; m = c.read() {
			codes[m.str("code")]++
		}
		if codes[codeNotHello] != messageBurst || codes[codeTooFast] != 1 || len(codes) != 2 {
			t.Fatalf("errors before welcome = %v, want %d %s and one %s", codes, messageBurst, codeNotHello, codeTooFast)
		}
		c.askAnswered("after-handshake-flood")
	})
}
