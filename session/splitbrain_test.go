package session

import (
	"testing"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/tiers"
)

// resumeOnly hides the TakeoverFeed of a store: a node that misses the
// take-over announcements (as during a Redis reconnect).
type resumeOnly struct{ ResumeStore }

// splitNodes runs two hubs over the test Redis with an answerer that
// streams, as two Poise nodes; a hears take-overs only when announced.
func splitNodes(t *testing.T, announced bool) (a, b *testServer, url string) {
	t.Helper()
	url = testRedisURL(t)
	answers := scriptedAnswerer{tokens: []string{"Situation: ", "[your project]", "."}}
	ca := sharedNode(t, Config{Health: newFakeHealth(tiers.L1), Answerer: answers}, url, "a")
	if !announced {
		ca.Resume = resumeOnly{ca.Resume}
	}
	a = newTestServer(t, ca)
	b = newTestServer(t, sharedNode(t, Config{Health: newFakeHealth(tiers.L1), Answerer: answers}, url, "b"))
	return a, b, url
}

// expectClosedSilently reads until c closes, failing on any answer or
// coach card first, and unless the close is 4001 (resumed elsewhere).
func expectClosedSilently(t *testing.T, c *client) {
	t.Helper()
	for {
		m, err := c.tryRead(waitLimit)
		if err != nil {
			if code := websocket.CloseStatus(err); code != closeReplaced {
				t.Fatalf("old connection closed with %v (%v), want %d", code, err, closeReplaced)
			}
			return
		}
		switch m.str("type") {
		case "answer_start", "answer_delta", "coach":
			t.Fatalf("the node that lost the session answered on its old connection: %v", m)
		}
	}
}

// TestSplitBrainEndsAtOnce: once a session resumed on node b, node a
// closes its old connection (4001) at once, before it writes anything
// more (a hears the take-over on poise:takeovers), and a question sent on
// the old connection meanwhile gets no answer from a.
func TestSplitBrainEndsAtOnce(t *testing.T) {
	a, b, url := splitNodes(t, true)
	c, w := a.start(t, "en")
	last := pings(t, c, 1, 3)
	waitStored(t, url, w.str("session_id"), last)
	r := b.dial(t)
	r.send(resumeHello(w, last))
	if m := r.read(); m.str("type") != "welcome" || m["resumed"] != true {
		t.Fatalf("resume on b: %v", m)
	}
	expectClosedSilently(t, c) // within waitLimit; a's header refresh alone takes 10 s
	eventually(t, "a's copy ended", func() bool { return a.hub.Len() == 0 })
	r.send(map[string]any{"type": "question", "text": "Tell me about a conflict you resolved."})
	r.readType("answer_start")
}

// TestSplitBrainNoAnswerAfterTakeover: a node that missed the
// announcement checks ownership before it starts an answer: a question on
// the old connection after the take-over gets no answer, and the
// connection closes with 4001.
func TestSplitBrainNoAnswerAfterTakeover(t *testing.T) {
	a, b, url := splitNodes(t, false)
	c, w := a.start(t, "en")
	last := pings(t, c, 1, 3)
	waitStored(t, url, w.str("session_id"), last)
	r := b.dial(t)
	r.send(resumeHello(w, last))
	if m := r.read(); m.str("type") != "welcome" {
		t.Fatalf("resume on b: %v", m)
	}
	c.send(map[string]any{"type": "question", "text": "Tell me about a conflict you resolved."})
	expectClosedSilently(t, c)
}
