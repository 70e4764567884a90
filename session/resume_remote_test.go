package session

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/redistest"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/level"
)

// twoNodes runs two hubs, as two Poise nodes, over the Redis at url. Each
// has its own store (its own owner id), as separate processes do.
func twoNodes(t *testing.T) (a, b *testServer, ha, hb *fakeHealth, url string) {
	t.Helper()
	url = testRedisURL(t)
	ha, hb = newFakeHealth(tiers.L1), newFakeHealth(tiers.L1)
	a = newTestServer(t, sharedNode(t, Config{Health: ha}, url, "a"))
	b = newTestServer(t, sharedNode(t, Config{Health: hb}, url, "b"))
	return a, b, ha, hb, url
}

// pings sends n pings with t = from..from+n-1 and reads their pongs.
func pings(t *testing.T, c *client, from, n int) uint64 {
	t.Helper()
	for i := range n {
		c.send(map[string]any{"type": "ping", "t": from + i})
	}
	var last uint64
	for range n {
		last = c.readType("pong").seq()
	}
	return last
}

// waitStored waits until session id's messages up to seq last are in
// the Redis at url (its replay list poise:replay:{id}): a resume on
// another node can only replay what was written.
func waitStored(t *testing.T, url, id string, last uint64) {
	t.Helper()
	rdb := redistest.Dial(t, url)
	eventually(t, "messages in Redis", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		tail, err := rdb.LIndex(ctx, "poise:replay:{"+id+"}", -1).Result()
		return err == nil && strings.HasPrefix(tail, strconv.FormatUint(last, 10)+" ")
	})
}

// expectStream reads messages and fails unless their seqs run from want on
// without a gap or a repeat, until a pong with t = live.
func expectStream(t *testing.T, c *client, want uint64, live string) {
	t.Helper()
	for {
		m := c.read()
		if m.seq() != want {
			t.Fatalf("got seq %d, want %d (lost or doubled): %v", m.seq(), want, m)
		}
		if m.str("type") == "pong" && m["t"] == live {
			return
		}
		want++
	}
}

// TestResumeOnAnotherNode: a client whose node is gone (its hub shut down,
// as in a rolling restart) resumes on the other node with every message
// after last_seq exactly once, its profile and level kept, and the seqs
// continuing.
func TestResumeOnAnotherNode(t *testing.T) {
	a, b, ha, hb, url := twoNodes(t)
	c, w := a.start(t, "zh")
	ha.set(tiers.L2, tiers.Signal{Event: level.VendorAllDown, Level: tiers.L1})
	c.readType("level")
	hb.set(tiers.L2, tiers.Signal{}) // node b's health agrees (shared through Redis in production)
	const sent, read = 200, 50
	for i := 1; i <= sent; i++ {
		c.send(map[string]any{"type": "ping", "t": i})
	}
	var last uint64
	for m := c.read(); ; m = c.read() {
		if m["t"] == float64(sent) {
			last = m.seq()
			break
		}
	}
	// The client processed only up to the 50th pong (seq 51 after the level message).
	clientSeq := uint64(1 + read)
	// Node a goes away after its resume state is written.
	waitStored(t, url, w.str("session_id"), last)
	c.ws.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := a.hub.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	r := b.dial(t)
	r.send(resumeHello(w, clientSeq))
	rw := r.read()
	if rw.str("type") != "welcome" || rw["resumed"] != true || rw.str("session_id") != w.str("session_id") {
		t.Fatalf("resume on node b: %v", rw)
	}
	if got := uint64(rw["last_seq"].(float64)); got != last || rw.str("level") != "L2" || rw["chip"] == nil {
		t.Fatalf("welcome last_seq %v level %v chip %v; want %d, L2, the zh chip", rw["last_seq"], rw["level"], rw["chip"], last)
	}
	r.send(map[string]any{"type": "ping", "t": "live"})
	expectStream(t, r, clientSeq+1, "live")
}

// TestResumeTakesOverALiveCopy: a resume on node b while node a still has
// the session moves it to b; a's copy ends (at once: it hears the
// take-over) and does not touch the shared state; a resume back on a
// takes it back.
func TestResumeTakesOverALiveCopy(t *testing.T) {
	a, b, ha, _, url := twoNodes(t)
	c, w := a.start(t, "en")
	last := pings(t, c, 1, 10)
	waitStored(t, url, w.str("session_id"), last)

	r := b.dial(t)
	r.send(resumeHello(w, last))
	if m := r.read(); m.str("type") != "welcome" || m["resumed"] != true {
		t.Fatalf("resume on b: %v", m)
	}
	expectClosed(t, c, closeReplaced)
	ha.set(tiers.L3, tiers.Signal{Event: level.LocalFailing, Level: tiers.L2}) // nothing to write it to
	eventually(t, "a's copy ended", func() bool { return a.hub.Len() == 0 })
	ctx := t.Context()
	if h := redistest.Dial(t, url).HGetAll(ctx, "poise:session:"+w.str("session_id")).Val(); h["node"] != "b" || h["level"] != "L1" {
		t.Fatalf("session hash after a's copy ended: %v, want node b at L1", h)
	}

	// b's live stream continues the seqs; then the client moves back to a.
	last2 := pings(t, r, 100, 5)
	if last2 != last+5 {
		t.Fatalf("b continued at seq %d, want %d", last2, last+5)
	}
	waitStored(t, url, w.str("session_id"), last2)
	back := a.dial(t)
	back.send(resumeHello(w, last))
	if m := back.read(); m.str("type") != "welcome" || uint64(m["last_seq"].(float64)) != last2 {
		t.Fatalf("resume back on a: %v", m)
	}
	back.send(map[string]any{"type": "ping", "t": "live"})
	expectStream(t, back, last+1, "live")
	// b's copy learns it at once too.
	expectClosed(t, r, closeReplaced)
	eventually(t, "b's copy ended", func() bool { return b.hub.Len() == 0 })
}

// expectClosed reads until the connection closes, failing unless with code.
func expectClosed(t *testing.T, c *client, code websocket.StatusCode) {
	t.Helper()
	_, err := c.tryRead(waitLimit)
	for err == nil {
		_, err = c.tryRead(waitLimit)
	}
	if got := websocket.CloseStatus(err); got != code {
		t.Fatalf("connection closed with %v (%v), want %d", got, err, code)
	}
}

// TestResumeRemoteRefusals: a wrong token, an unknown session and a gap
// get their error codes, and the session is not moved.
func TestResumeRemoteRefusals(t *testing.T) {
	a, b, _, _, url := twoNodes(t)
	_, w := a.start(t, "en")
	rdb := redistest.Dial(t, url)
	eventually(t, "a's resume header in Redis", func() bool {
		return rdb.HGet(t.Context(), "poise:resume:{"+w.str("session_id")+"}", "token").Val() != ""
	})
	cases := []struct {
		name string
		id   string
		tok  string
		want string
	}{
		{"wrong token", w.str("session_id"), "nope", codeBadResumeToken},
		{"unknown session", "0123456789abcdef01234567", "x", codeUnknownSession},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.dial(t)
			r.send(map[string]any{"type": "hello", "v": 1, "resume": map[string]any{"session_id": tc.id, "token": tc.tok, "last_seq": 0}})
			if m := r.read(); m.str("type") != "error" || m.str("code") != tc.want {
				t.Fatalf("got %v, want error %s", m, tc.want)
			}
		})
	}
	if b.hub.Len() != 0 || a.hub.Len() != 1 {
		t.Fatalf("sessions: a %d, b %d; want 1, 0", a.hub.Len(), b.hub.Len())
	}
}

// TestResumeCutsAnOpenAnswer: an answer that was streaming when its node
// went away ends as cut on the new node, with the next seq.
func TestResumeCutsAnOpenAnswer(t *testing.T) {
	st := ResumeState{ID: "s", Token: "t", Level: "L1", FirstSeq: 4, Messages: [][]byte{
		[]byte(`{"type":"answer_start","seq":4,"id":"q2"}`),
		[]byte(`{"type":"answer_delta","seq":5,"id":"q2","text":"Hel"}`),
	}}
	h := NewHub(Config{Health: newFakeHealth(tiers.L1)})
	defer h.Shutdown(context.Background())
	s, perr := h.restore(st, 4)
	if perr != nil {
		t.Fatal(perr)
	}
	backlog, ok := s.replay.after(4)
	if !ok || len(backlog) != 2 || string(backlog[1]) != `{"type":"answer_end","seq":6,"id":"q2","reason":"cut"}` {
		t.Fatalf("backlog after 4 = %q, %v", backlog, ok)
	}
	if s.questions != 2 {
		t.Fatalf("questions = %d, want 2 (the next automatic id is q3)", s.questions)
	}
	if _, perr := h.restore(st, 2); perr == nil || perr.Code != codeResumeGap {
		t.Fatalf("restore after seq 2 of messages from 4 = %v, want %s", perr, codeResumeGap)
	}
	// Redis lost the messages but knows the session had sent up to 9.
	lost := ResumeState{ID: "s", Token: "t", Level: "L1", LastSeq: 9}
	if _, perr := h.restore(lost, 7); perr == nil || perr.Code != codeResumeGap {
		t.Fatalf("restore after seq 7 with no messages kept of 9 = %v, want %s", perr, codeResumeGap)
	}
	s2, perr := h.restore(lost, 9)
	if perr != nil || s2.replay.last() != 9 {
		t.Fatalf("restore of a client that has everything: %v, replay at %d; want no error, 9", perr, s2.replay.last())
	}
}
