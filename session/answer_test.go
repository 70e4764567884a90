package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers"
)

// scriptedAnswerer streams a fixed answer after a delay, or fails: a test
// double standing at the Answerer seam (the real engine is tested in tiers
// and end to end in cmd/poise).
type scriptedAnswerer struct {
	delay  time.Duration
	tokens []string
	fail   bool
}

func (a scriptedAnswerer) Answer(ctx context.Context, req tiers.Request, emit func(tiers.Event)) {
	select {
	case <-time.After(a.delay):
	case <-ctx.Done():
		return
	}
	if a.fail {
		return
	}
	emit(tiers.Event{Kind: tiers.EventStart, Level: req.Level, Source: "scripted"})
	for _, tok := range a.tokens {
		emit(tiers.Event{Kind: tiers.EventDelta, Text: tok})
	}
	emit(tiers.Event{Kind: tiers.EventEnd, Reason: endDone})
}

func TestCoachAnswersAtL4(t *testing.T) {
	ts := newTestServer(t, Config{})
	c, w := ts.start(t, "en")
	if w.str("level") != "L4" {
		t.Fatalf("welcome = %v", w)
	}
	c.send(map[string]any{"type": "question", "text": "Tell me about yourself"})
	m := c.readType("coach")
	if m.str("id") != "q1" || m.str("kind") != "question" || m["countdown_s"] != float64(8) {
		t.Fatalf("coach = %v", m)
	}
	fw, _ := m["framework"].(map[string]any)
	if steps, _ := fw["steps"].([]any); fw["name"] == "" || len(steps) == 0 {
		t.Fatalf("coach framework = %v", m["framework"])
	}
	c.send(map[string]any{"type": "question", "id": "s1", "text": "We mostly build payment systems here."})
	if m := c.readType("coach"); m.str("id") != "s1" || m.str("kind") != "statement" {
		t.Fatalf("coach for a statement = %v", m)
	}
}

func TestAnswerStreams(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L1),
		Answerer: scriptedAnswerer{tokens: []string{"Situation: ", "[your project]", "."}}})
	c, _ := ts.start(t, "en")
	c.send(map[string]any{"type": "question", "id": "a", "text": "Why this company?"})
	start := c.readType("answer_start")
	if start.str("id") != "a" || start.str("level") != "L1" || start.str("source") != "scripted" || start.str("question") != "Why this company?" {
		t.Fatalf("answer_start = %v", start)
	}
	var text strings.Builder
	for {
		m := c.read()
		if m.str("type") == "answer_end" {
			if m.str("reason") != endDone {
				t.Fatalf("answer_end = %v", m)
			}
			break
		}
		if m.str("type") != "answer_delta" {
			t.Fatalf("unexpected %v", m)
		}
		text.WriteString(m.str("text"))
	}
	if text.String() != "Situation: [your project]." {
		t.Fatalf("answer text = %q", text.String())
	}
}

// TestSlowAnswerGetsCoachThenAnswer: past the SLA the coach shows at once,
// and the model's answer still streams in when it comes.
func TestSlowAnswerGetsCoachThenAnswer(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L1), SLA: 20 * time.Millisecond,
		Answerer: scriptedAnswerer{delay: 100 * time.Millisecond, tokens: []string{"late"}}})
	c, _ := ts.start(t, "en")
	c.send(map[string]any{"type": "question", "text": "How do you handle pressure?"})
	if m := c.read(); m.str("type") != "coach" {
		t.Fatalf("first message = %v, want coach", m)
	}
	if m := c.read(); m.str("type") != "answer_start" {
		t.Fatalf("then %v, want answer_start", m)
	}
}

func TestFailedAnswerGetsCoach(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L1), Answerer: scriptedAnswerer{fail: true}})
	c, _ := ts.start(t, "zh")
	c.send(map[string]any{"type": "question", "text": "为什么离开上一家公司？"})
	m := c.readType("coach")
	if fw, _ := m["framework"].(map[string]any); fw["name"] == "" {
		t.Fatalf("coach = %v", m)
	}
}

func TestSupersededAnswer(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L1), SLA: time.Hour,
		Answerer: blockingAnswerer{}})
	c, _ := ts.start(t, "en")
	c.send(map[string]any{"type": "question", "id": "first", "text": "Why?"})
	if m := c.readType("answer_start"); m.str("id") != "first" {
		t.Fatalf("answer_start = %v", m)
	}
	c.send(map[string]any{"type": "question", "id": "second", "text": "How?"})
	if m := c.readType("answer_end"); m.str("id") != "first" || m.str("reason") != endSuperseded {
		t.Fatalf("answer_end = %v", m)
	}
	if m := c.readType("answer_start"); m.str("id") != "second" {
		t.Fatalf("answer_start = %v", m)
	}
}

// blockingAnswerer starts an answer and streams nothing more until its
// question is cancelled.
type blockingAnswerer struct{}

func (blockingAnswerer) Answer(ctx context.Context, req tiers.Request, emit func(tiers.Event)) {
	emit(tiers.Event{Kind: tiers.EventStart, Level: req.Level, Source: "blocking"})
	<-ctx.Done()
}

func TestCoachAfterLeavesDeliveryTime(t *testing.T) {
	for sla, want := range map[time.Duration]time.Duration{
		1500 * time.Millisecond: 1400 * time.Millisecond,
		500 * time.Millisecond:  450 * time.Millisecond,
		20 * time.Millisecond:   18 * time.Millisecond,
	} {
		if got := coachAfter(sla); got != want {
			t.Errorf("coachAfter(%v) = %v, want %v", sla, got, want)
		}
	}
}
