package session

import (
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers"
)

// These tests check that results are matched by generation, never by the
// wire id the client chose: real sessions on the real engine against
// vendorsim, through a real WebSocket.

// stalledAnswer asks q with id (empty: none) while vendor-a streams two
// tokens and then stalls, and returns the answer_start once it is in
// flight; vendor-a is healthy again for the questions after it.
func (st *stack) stalledAnswer(c *client, id, q string) msg {
	c.t.Helper()
	st.a.SetFault(vendorsim.AnyModel, vendorsim.Fault{StallAfter: 2})
	ask := map[string]any{"type": "question", "text": q}
	if id != "" {
		ask["id"] = id
	}
	c.send(ask)
	start := c.readType("answer_start")
	st.a.SetFault(vendorsim.AnyModel, vendorsim.Fault{})
	return start
}

// readSuperseded reads up to the answer_end that supersedes id.
func (c *client) readSuperseded(id string) {
	c.t.Helper()
	for {
		m := c.readType("answer_end")
		if m.str("id") == id && m.str("reason") == endSuperseded {
			return
		}
	}
}

// modelAnswer reads the answer to the question just asked: it must be a
// model's answer with id, streamed to the end, and no coach card.
func (c *client) modelAnswer(id string) {
	c.t.Helper()
	var text string
	started := false
	for {
		m := c.read()
		switch m.str("type") {
		case "coach", "error":
			c.t.Fatalf("question %s got %v, want the model's answer", id, m)
		case "answer_start":
			if m.str("id") != id || m.str("level") != "L1" || m.str("source") != "vendor-a" {
				c.t.Fatalf("answer_start = %v, want %s from vendor-a at L1", m, id)
			}
			started = true
		case "answer_delta":
			text += m.str("text")
		case "answer_end":
			if !started || m.str("id") != id || m.str("reason") != endDone || text == "" {
				c.t.Fatalf("answer_end = %v after %d bytes (started %v), want %s done with text", m, len(text), started, id)
			}
			return
		}
	}
}

// TestReusedQuestionIDGetsTheModelsAnswer: a client that gives a second
// question the id of the one still streaming gets the model's answer for
// the second; the first one's late end is not taken for it.
func TestReusedQuestionIDGetsTheModelsAnswer(t *testing.T) {
	st := newStack(t, stackOptions{})
	c, _ := st.start(t, "en")
	if m := st.stalledAnswer(c, "x", bankQuestion); m.str("id") != "x" {
		t.Fatalf("answer_start = %v", m)
	}
	c.send(map[string]any{"type": "question", "id": "x", "text": "Why do you want this job?"})
	c.readSuperseded("x")
	c.modelAnswer("x")
}

// TestServerNumberSkipsClientIDs: after the client's own "q2", the next
// question without an id is numbered past it, and it gets the model's
// answer although "q2" is still streaming.
func TestServerNumberSkipsClientIDs(t *testing.T) {
	st := newStack(t, stackOptions{})
	c, _ := st.start(t, "en")
	if first, _, end := c.answer(bankQuestion); first.str("id") != "q1" || end != endDone {
		t.Fatalf("first question: %v, end %q", first, end)
	}
	st.stalledAnswer(c, "q2", "Why do you want this job?")
	c.send(map[string]any{"type": "question", "text": "What are you proudest of?"})
	c.readSuperseded("q2")
	c.modelAnswer("q3")
}

// TestReusedQuestionIDAtL4: with everything down, a question that reuses
// the id of an answer still in flight gets the coach, and the session
// lives on (it once took the old answer's end for the new question and
// crashed on its missing cancel func).
func TestReusedQuestionIDAtL4(t *testing.T) {
	st := newStack(t, stackOptions{})
	health := newFakeHealth(tiers.L1)
	ts := newTestServer(t, Config{Answerer: st.hub.cfg.Answerer, Health: health, SLA: 1500 * time.Millisecond})
	c, _ := ts.start(t, "en")
	st.stalledAnswer(c, "x", bankQuestion)
	down := vendorsim.Fault{Status: 503, HealthDown: true}
	for _, s := range []*vendorsim.Server{st.a, st.b, st.local} {
		s.SetFault(vendorsim.AnyModel, down)
	}
	st.tpl.broken.Store(true)
	health.set(tiers.L4, tiers.Signal{Event: evTemplatesFailing})
	for {
		if m := c.readType("level"); m.str("level") == "L4" {
			break
		}
	}
	c.send(map[string]any{"type": "question", "id": "x", "text": "Why do you want this job?"})
	c.readSuperseded("x")
	if m := c.readType("coach"); m.str("id") != "x" {
		t.Fatalf("coach = %v, want x", m)
	}
	// The session survives: the old answer's end changes nothing, and the
	// next questions are answered.
	for _, id := range []string{"x", "y"} {
		c.send(map[string]any{"type": "question", "id": id, "text": "Tell me about yourself"})
		if m := c.readType("coach"); m.str("id") != id {
			t.Fatalf("coach = %v, want %s", m, id)
		}
	}
	c.send(map[string]any{"type": "ping", "t": 7})
	if m := c.readType("pong"); m["t"] != float64(7) {
		t.Fatalf("pong = %v", m)
	}
}

// TestCaptionIDsUniqueAcrossAudioRestarts: the microphone turned off and
// on again starts a new pipeline, whose captions never reuse the utt_id of
// an earlier one (the page keys its caption lines by utt_id).
func TestCaptionIDsUniqueAcrossAudioRestarts(t *testing.T) {
	synctest.Test(t, captionIDsUniqueAcrossAudioRestarts)
}

func captionIDsUniqueAcrossAudioRestarts(t *testing.T) {
	ms, _ := audioStack(t)
	c, _ := ms.start(t)
	finals := map[string]bool{}
	for stream := 1; stream <= 2; stream++ {
		wait := c.streaming("../asr/testdata/en_questions.wav", 1)
		for n := 0; n < 3; {
			m := c.read()
			if m.str("type") != "caption" {
				continue
			}
			utt := m.str("utt_id")
			if finals[utt] {
				t.Fatalf("stream %d: caption %v reuses the utt_id of an earlier final", stream, m)
			}
			if m["final"] == true {
				finals[utt] = true
				n++
			}
		}
		wait()
	}
}
