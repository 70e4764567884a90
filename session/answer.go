package session

import (
	"context"
	"time"

	"github.com/poise-dev/poise/coach"
	"github.com/poise-dev/poise/tiers"
)

// question is the session's in-flight question. Owned by run.
type question struct {
	id      string
	text    string
	cancel  context.CancelFunc
	sla     *time.Timer  // nil once content or the coach was shown
	level   tiers.Level  // the level it is answered at (the session's, or lower over a limit)
	budget  *tokenBudget // nil without daily_tokens_per_vendor
	started bool         // answer_start was sent
	coached bool         // the coach card was sent
	ended   bool         // answer_end was sent, or no answer will come
}

// Answer goroutine results, tagged with the question id so that run drops
// those of a superseded question.
type (
	answerEvent struct {
		id string
		ev tiers.Event
	}
	answerDone struct {
		id string
	}
)

// ask starts answering a question at level (the session's level, or
// lower over a limit): at L4 (or with no Answerer) the coach answers at
// once; otherwise an answer goroutine streams from the best source while
// the SLA timer guards the first useful content.
func (s *Session) ask(ctx context.Context, id, text string, level tiers.Level) {
	s.supersede()
	q := &question{id: id, text: text, level: level}
	s.q = q
	if level == tiers.L4 || s.cfg.Answerer == nil {
		s.sendCoach(q)
		q.ended = true
		return
	}
	qctx, cancel := context.WithCancel(ctx)
	q.cancel = cancel
	q.sla = time.NewTimer(coachAfter(s.cfg.SLA))
	req := tiers.Request{ID: id, Question: text, Profile: s.profile, Transcript: s.recentTranscript(), Level: level}
	if q.budget = s.budget(); q.budget != nil {
		req.Budget = q.budget
	}
	if level == s.m.level() { // a limited question leaves Reset AI's retry for the next one
		req.Retry, s.retryLevels = s.retryLevels, false
	}
	s.workers.Go(func() {
		s.cfg.Answerer.Answer(qctx, req, func(ev tiers.Event) {
			s.post(qctx, answerEvent{id: id, ev: ev})
		})
		s.post(ctx, answerDone{id: id})
	})
}

// coachAfter is when the coach goes out for a question with no content
// yet: early enough within the budget that the card reaches the client
// before sla_ms (a tenth of it, at most maxDelivery, is left for delivery).
func coachAfter(sla time.Duration) time.Duration {
	return sla - min(sla/10, maxDelivery)
}

// supersede ends the in-flight question, if any, because a newer one came.
func (s *Session) supersede() {
	q := s.q
	if q == nil {
		return
	}
	if q.cancel != nil {
		q.cancel()
	}
	q.stopSLA()
	if q.started && !q.ended {
		s.send(&answerEndMsg{head: head{Type: "answer_end"}, ID: q.id, Reason: endSuperseded})
	}
	q.ended = true
	s.q = nil
}

func (q *question) stopSLA() {
	if q.sla != nil {
		q.sla.Stop()
		q.sla = nil
	}
}

func (s *Session) onAnswerEvent(a answerEvent) {
	q := s.q
	if q == nil || q.id != a.id || q.ended {
		return
	}
	switch a.ev.Kind {
	case tiers.EventStart:
		q.started = true
		q.stopSLA()
		s.overBudget(q, a.ev.Level, a.ev.OverBudget)
		s.send(&answerStartMsg{head: head{Type: "answer_start"}, ID: q.id, Question: q.text,
			Level: a.ev.Level.String(), Source: a.ev.Source, Note: a.ev.Note})
	case tiers.EventDelta:
		if q.started {
			s.send(&answerDeltaMsg{head: head{Type: "answer_delta"}, ID: q.id, Text: a.ev.Text})
		}
	case tiers.EventEnd:
		if !q.started {
			s.overBudget(q, 0, a.ev.OverBudget) // the coach answers: say so if the budget is why
		}
		if q.started {
			q.ended = true
			s.send(&answerEndMsg{head: head{Type: "answer_end"}, ID: q.id, Reason: a.ev.Reason})
		}
	}
}

// onAnswerDone closes the question once its answer goroutine returned: a
// question that got no content gets the coach (if the SLA did not already
// show it), and a started answer that never ended is marked cut, never
// presented as complete.
func (s *Session) onAnswerDone(a answerDone) {
	q := s.q
	if q == nil || q.id != a.id {
		return
	}
	q.cancel()
	q.stopSLA()
	switch {
	case !q.started && !q.coached:
		s.sendCoach(q)
	case q.started && !q.ended:
		s.send(&answerEndMsg{head: head{Type: "answer_end"}, ID: q.id, Reason: endCut})
	}
	q.ended = true
}

// onSLA shows the coach for a question whose first useful content did not
// arrive within the budget; the model may still finish and stream in.
func (s *Session) onSLA() {
	q := s.q
	if q == nil {
		return
	}
	q.sla = nil
	if !q.started && !q.coached {
		s.sendCoach(q)
	}
}

func (s *Session) sendCoach(q *question) {
	q.coached = true
	s.send(&coachMsg{head: head{Type: "coach"}, ID: q.id, Card: coach.CardFor(q.text, s.profile.Lang)})
}
