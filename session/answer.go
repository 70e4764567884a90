package session

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/poise-dev/poise/coach"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/level"
)

// question is the session's in-flight question. Owned by run.
type question struct {
	gen     uint64 // the question's generation, shared by its one answer attempt; results match on it
	id      string // the wire id, only echoed to the client
	text    string
	typ     coach.Type // coach.Classify's, once per question: the prompt, the templates and the coach shape by it
	cancel  context.CancelFunc
	sla     *time.Timer  // nil once content or the coach was shown
	level   tiers.Level  // the level it is answered at (the session's, or lower over a limit)
	budget  *tokenBudget // nil without daily_tokens_per_vendor
	started bool         // answer_start was sent
	coached bool         // the coach card was sent
	retry   bool         // the first question after Reset AI: every level is tried
	ended   bool         // answer_end was sent, or no answer will come
	style   string       // an answer control's style, or tiers.StyleReview; "" for a question
	of      string       // the wire id of the question a control reworks
	review  bool         // the post-interview review, not a question
	log     *asked       // what the review sees of it (assist.go)
	shot    bool         // a screenshot question (image.go)
	read    string       // a screenshot's text, as OCR read it
}

// askOptions are what an answer control or the review adds to a question.
type askOptions struct {
	style    string       // tiers.Style*
	of       string       // the wire id of the question reworked
	previous string       // the answer reworked
	prompt   string       // replaces the question text in the prompt (the review's record)
	img      *tiers.Image // a screenshot question's image (image.go)
}

// Answer goroutine results, tagged with the generation of their question
// so that run drops those of a superseded one, even when the client gave
// both questions the same id.
type (
	answerEvent struct {
		gen uint64
		ev  tiers.Event
	}
	answerDone struct {
		gen uint64
	}
)

// maxAutoNumber bounds the "q<N>" numbers questionID follows: the client's
// id q99999999999 must not run the server's counter to overflow.
const maxAutoNumber = 1 << 30

// questionID is the wire id of a question: the client's, echoed as given,
// or else the next "q<N>". A client id of that form moves the counter past
// it, so that a server-numbered question never takes an id the client
// already used. Run only.
func (s *Session) questionID(id string) string {
	if id != "" {
		if n, err := strconv.Atoi(strings.TrimPrefix(id, "q")); err == nil && strings.HasPrefix(id, "q") && n > 0 && n < maxAutoNumber {
			s.questions = max(s.questions, n)
		}
		return id
	}
	s.questions++
	return "q" + itoa(s.questions)
}

// ask starts answering a question at level (the session's level, or
// lower over a limit): at L4 (or with no Answerer) the coach answers at
// once; otherwise an answer goroutine streams from the best source while
// the SLA timer guards the first useful content.
func (s *Session) ask(ctx context.Context, id, text string, level tiers.Level) {
	s.askWith(ctx, id, text, level, askOptions{})
}

// askWith is ask for an answer control or the review (o).
func (s *Session) askWith(ctx context.Context, id, text string, level tiers.Level, o askOptions) {
	s.supersede()
	gen := s.next()
	q := &question{gen: gen, id: id, text: text, level: level, style: o.style, of: o.of, review: o.style == tiers.StyleReview, shot: o.img != nil}
	q.typ = coach.Classify(q.coachText(), s.profile.Lang) // a bare screenshot: a coding problem until its text is read
	s.q = q
	s.track(q)
	if level == tiers.L4 || s.cfg.Answerer == nil {
		s.sendCoach(q)
		q.ended = true
		return
	}
	qctx, cancel := context.WithCancel(ctx)
	q.cancel = cancel
	q.sla = time.NewTimer(coachAfter(s.cfg.SLA))
	req := tiers.Request{ID: id, Question: text, Profile: s.profile, Type: q.typ, Transcript: s.recentTranscript(), Level: level,
		Facts: s.assist.facts, Style: o.style, Previous: o.previous, NoTemplates: q.review, Image: o.img}
	if o.prompt != "" {
		req.Question = o.prompt
	}
	if q.budget = s.budget(); q.budget != nil {
		req.Budget = q.budget
	}
	if level == s.m.level() { // a limited question leaves Reset AI's retry for the next one
		req.Retry, s.retryLevels = s.retryLevels, false
		q.retry = req.Retry
	}
	s.workers.Go(func() {
		if !s.stillOwned(qctx) {
			s.takeOver() // run ends before it handles anything else
			return
		}
		s.cfg.Answerer.Answer(qctx, req, func(ev tiers.Event) {
			s.post(qctx, answerEvent{gen: gen, ev: ev})
		})
		s.post(ctx, answerDone{gen: gen})
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
	q.stop()
	if q.started && !q.ended {
		s.send(&answerEndMsg{head: head{Type: "answer_end"}, ID: q.id, Reason: endSuperseded})
	}
	q.ended = true
	s.q = nil
}

// stop cancels the question's answer goroutine, if it has one (a question
// the coach answered at once has none), and its SLA timer.
func (q *question) stop() {
	if q.cancel != nil {
		q.cancel()
	}
	q.stopSLA()
}

func (q *question) stopSLA() {
	if q.sla != nil {
		q.sla.Stop()
		q.sla = nil
	}
}

func (s *Session) onAnswerEvent(a answerEvent) {
	q := s.q
	if q == nil || q.gen != a.gen || q.ended {
		return
	}
	q.note(a.ev)
	switch a.ev.Kind {
	case tiers.EventStart:
		q.started = true
		q.stopSLA()
		if q.retry {
			s.settleRetry(a.ev.Level)
		}
		s.overBudget(q, a.ev.Level, a.ev.OverBudget)
		s.send(&answerStartMsg{head: head{Type: "answer_start"}, ID: q.id, Question: q.startQuestion(),
			Level: a.ev.Level.String(), Source: a.ev.Source, Note: a.ev.Note, Via: a.ev.Via, controlFields: controlFields{Style: q.style, Of: q.of},
			Matched: a.ev.Matched, Outline: a.ev.Outline, QuestionType: q.typ})
	case tiers.EventRead:
		s.onRead(q, a.ev.Text)
	case tiers.EventDelta:
		if q.started {
			s.sendDelta(q, a.ev.Text)
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

// settleRetry drops a session that Reset AI sent to L1 back to the level
// that answered its first question, at once, when its L1 attempt failed:
// the chip and the ops view tell the truth about the source, instead of L1
// while answers come from below until the next health change.
func (s *Session) settleRetry(answered tiers.Level) {
	ctx := context.Background() // transition detaches it anyway
	for cur := s.m.level(); cur < answered && cur < tiers.L4; cur = s.m.level() {
		if !s.transition(ctx, level.DownEvent(cur)) {
			return
		}
	}
}

// onAnswerDone closes the question once its answer goroutine returned: a
// question that got no content gets the coach (if the SLA did not already
// show it), and a started answer that never ended is marked cut, never
// presented as complete.
func (s *Session) onAnswerDone(a answerDone) {
	q := s.q
	if q == nil || q.gen != a.gen {
		return
	}
	q.stop()
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
	if q.log != nil {
		q.log.coached = true
	}
	s.send(&coachMsg{head: head{Type: "coach"}, ID: q.id, Card: coach.CardOf(q.coachText(), q.typ, s.profile.Lang)})
}
