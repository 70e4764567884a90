package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers"
)

func resumeHello(w msg, lastSeq uint64) map[string]any {
	h := hello("en")
	h["resume"] = map[string]any{"session_id": w.str("session_id"), "token": w.str("resume_token"), "last_seq": lastSeq}
	return h
}

// TestResumeAfterKilledConnection: 1,000 messages were sent on a connection
// that dies with most of them unread; the resumed connection gets every
// message after last_seq exactly once, in order, then the live stream.
func TestResumeAfterKilledConnection(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	c, w := ts.start(t, "en")
	const total, delivered = 1000, 100
	for i := 1; i <= total; i++ {
		c.send(map[string]any{"type": "ping", "t": i})
	}
	// Wait until the server has sent all 1,000, but let only the first
	// 100 reach the application: the rest die with the connection.
	for {
		m := c.read()
		if m.seq() == total {
			break
		}
	}
	c.ws.CloseNow()

	r := ts.dial(t)
	r.send(resumeHello(w, delivered))
	rw := r.read()
	if rw.str("type") != "welcome" || rw["resumed"] != true || rw.seq() != 0 {
		t.Fatalf("resume welcome = %v", rw)
	}
	if got := uint64(rw["last_seq"].(float64)); got != total {
		t.Fatalf("welcome last_seq = %d, want %d", got, total)
	}
	r.send(map[string]any{"type": "ping", "t": "live"})
	want := uint64(delivered + 1)
	for {
		m := r.read()
		if m.seq() != want {
			t.Fatalf("got seq %d, want %d (lost or doubled): %v", m.seq(), want, m)
		}
		if want <= total && m["t"] != float64(want) {
			t.Fatalf("seq %d carries t=%v, want %d", want, m["t"], want)
		}
		if m["t"] == "live" {
			if want != total+1 {
				t.Fatalf("live pong has seq %d, want %d", want, total+1)
			}
			break
		}
		want++
	}
}

// TestResumeNothingReadServerSide kills a connection whose client read
// nothing; whatever the server produced is replayed without a gap.
func TestResumeNothingRead(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	c, w := ts.start(t, "en")
	for i := 1; i <= 1000; i++ {
		c.send(map[string]any{"type": "ping", "t": i})
	}
	c.ws.CloseNow()
	r := ts.dial(t)
	r.send(resumeHello(w, 0))
	if m := r.read(); m.str("type") != "welcome" {
		t.Fatalf("got %v, want welcome", m)
	}
	r.send(map[string]any{"type": "ping", "t": "live"})
	for want := uint64(1); ; want++ {
		m := r.read()
		if m.seq() != want {
			t.Fatalf("got seq %d, want %d", m.seq(), want)
		}
		if m["t"] == "live" {
			break
		}
		if m["t"] != float64(want) {
			t.Fatalf("seq %d carries t=%v", want, m["t"])
		}
	}
}

func TestResumeReplacesLiveConnection(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	old, w := ts.start(t, "en")
	r := ts.dial(t)
	r.send(resumeHello(w, 0))
	if m := r.read(); m.str("type") != "welcome" {
		t.Fatalf("got %v", m)
	}
	if _, err := old.tryRead(waitLimit); err == nil {
		t.Fatal("the replaced connection is still open")
	}
	r.send(map[string]any{"type": "ping", "t": 7})
	if m := r.readType("pong"); m["t"] != float64(7) {
		t.Fatalf("pong = %v", m)
	}
}

// TestResumeWindowEnds: a session nobody resumes ends and is freed.
func TestResumeWindowEnds(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3), ResumeWindow: 30 * time.Millisecond})
	c, w := ts.start(t, "en")
	c.ws.CloseNow()
	deadline := time.Now().Add(waitLimit)
	for ts.hub.Len() > 0 { // the session ends by itself after the window
		if time.Now().After(deadline) {
			t.Fatal("session still alive long after its resume window")
		}
		time.Sleep(time.Millisecond)
	}
	r := ts.dial(t)
	r.send(resumeHello(w, 0))
	if m := r.readType("error"); m.str("code") != codeUnknownSession {
		t.Fatalf("error = %v, want %s", m, codeUnknownSession)
	}
}

func TestResumeWrongTokenLeavesSessionAlone(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	c, w := ts.start(t, "en")
	r := ts.dial(t)
	bad := resumeHello(w, 0)
	bad["resume"].(map[string]any)["token"] = "not-the-token"
	r.send(bad)
	if m := r.readType("error"); m.str("code") != codeBadResumeToken {
		t.Fatalf("error = %v, want %s", m, codeBadResumeToken)
	}
	c.send(map[string]any{"type": "ping", "t": "still-here"})
	if m := c.readType("pong"); m["t"] != "still-here" {
		t.Fatalf("pong = %v", m)
	}
	// The refused connection may still start a session of its own.
	r.send(hello("en"))
	if m := r.read(); m.str("type") != "welcome" || m.str("session_id") == w.str("session_id") {
		t.Fatalf("got %v, want a new session's welcome", m)
	}
}

func TestResumeUnknownSession(t *testing.T) {
	ts := newTestServer(t, Config{})
	c := ts.dial(t)
	c.send(resumeHello(msg{"session_id": "nope", "resume_token": "x"}, 0))
	if m := c.readType("error"); m.str("code") != codeUnknownSession {
		t.Fatalf("error = %v", m)
	}
}

func ExampleIssueToken() {
	tok, _ := IssueToken("secret", "candidate-42", time.Hour, time.Unix(0, 0))
	sub, err := VerifyToken("secret", tok, time.Unix(60, 0), 0)
	fmt.Println(sub, err)
	// Output: candidate-42 <nil>
}
