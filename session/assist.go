package session

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/poise-dev/poise/session/doctext"
	"github.com/poise-dev/poise/tiers"
)

// assist is the session state of the v1 additions: the audio streams by
// source, the facts read from the profile, a profile file arriving in
// parts, the last interviewer caption and the questions asked so far (for
// the review). None of it is logged or stored beyond the session and its
// resume state. Owned by run.
type assist struct {
	streams   map[string]*audioStream // by source: at most a tab and a mic stream
	facts     tiers.Facts
	upload    *fileUpload // a profile file whose parts are arriving, or nil
	lastHeard string      // the last final caption not the candidate's: answer_now asks it
	asked     []*asked    // the session's questions, oldest first, at most maxAsked
	reading   uint64      // the generation of the file being read; older results are dropped
}

// asked is one question of the session as the review sees it.
type asked struct {
	id, text, style string
	level, source   string
	answer          strings.Builder // at most maxAskedAnswer bytes
	coached         bool
}

const (
	maxAsked       = 100  // questions the review remembers
	maxAskedAnswer = 1200 // bytes of each answer it remembers
)

// fileUpload is a profile file arriving in parts.
type fileUpload struct {
	kind, name string
	next       int // the part expected next
	data       []byte
}

// fileRead is the text of a profile file, read on a worker goroutine.
type fileRead struct {
	gen        uint64
	kind, name string
	text       string
	err        error
}

// setProfile changes the profile and the facts read from it.
func (s *Session) setProfile(p tiers.Profile) {
	s.profile = p
	s.assist.facts = tiers.ExtractFacts(p.Resume, p.Job, s.cfg.Now())
}

// onAddition handles the client messages of the v1 additions. Run only.
func (s *Session) onAddition(ctx context.Context, m inbound) {
	switch m.Type {
	case typeProfileFile:
		s.onFilePart(ctx, m.additions)
	case typeAnswerNow:
		if s.assist.lastHeard == "" {
			s.sendError(refuse(codeNoQuestion, "answer_now: no interviewer caption has been heard yet"))
			return
		}
		s.onQuestion(ctx, "", s.assist.lastHeard)
	case typeRegenerate:
		s.rework(ctx, tiers.StyleRegenerate)
	case typeShorter:
		s.rework(ctx, tiers.StyleShorter)
	case typeDeeper:
		s.rework(ctx, tiers.StyleDeeper)
	case typeReview:
		s.review(ctx)
	}
}

// onFilePart adds one part of a profile file; the last part sends the
// whole file to be read on a worker goroutine (a PDF can take a while),
// whose result comes back as a fileRead of this generation.
func (s *Session) onFilePart(ctx context.Context, f additions) {
	u := s.assist.upload
	if f.Part == 0 {
		u = &fileUpload{kind: f.Kind, name: f.Name}
		s.assist.upload = u
	}
	if u == nil || f.Part != u.next || f.Kind != u.kind {
		s.assist.upload = nil
		s.sendError(refuse(codeBadField, "profile_file: part %d out of order; send the file again from part 0", f.Part))
		return
	}
	data, err := base64.StdEncoding.DecodeString(f.Data)
	if err != nil {
		s.assist.upload = nil
		s.sendError(refuse(codeBadField, "profile_file: part %d is not base64", f.Part))
		return
	}
	if len(u.data)+len(data) > maxFileBytes {
		s.assist.upload = nil
		s.sendError(refuse(codeTooLarge, "profile_file: %s is over %d bytes", clipTo(u.name, 64), maxFileBytes))
		return
	}
	u.data = append(u.data, data...)
	u.next++
	if !f.Last {
		return
	}
	s.assist.upload = nil
	gen := s.next()
	s.assist.reading = gen
	s.workers.Go(func() {
		text, err := doctext.Read(u.name, u.data)
		s.post(ctx, fileRead{gen: gen, kind: u.kind, name: u.name, text: text, err: err})
	})
}

// onFileRead puts a file's text into the profile (the résumé or the job)
// and tells the client, or says in an error why the file gave no text.
// The session goes on either way. A file superseded by a newer one is
// dropped.
func (s *Session) onFileRead(r fileRead) {
	if r.gen != s.assist.reading {
		return
	}
	name := clipTo(r.name, 64)
	if r.err != nil {
		e := refuse(codeBadFile, "could not read %s: %v", name, r.err)
		e.Reason = fileReason(r.err)
		s.sendError(e)
		return
	}
	text, truncated := r.text, false
	if len(text) > maxResumeBytes {
		text, truncated = strings.TrimSuffix(clipTo(text, maxResumeBytes-len("…")), "…"), true
	}
	p := s.profile
	if r.kind == "job" {
		p.Job = text
	} else {
		p.Resume = text
	}
	s.setProfile(p)
	s.send(&profileFileMsg{head: head{Type: "profile_file"}, Kind: r.kind, Name: r.name, Text: text,
		Truncated: truncated, Facts: s.assist.facts})
	s.record()
}

// rework answers the current question again in style (regenerate,
// shorter, deeper): a new question id whose answer_start names the
// original (of) and the style. It counts as a question and degrades like
// one: at L3 "shorter" is the template's outline and "deeper" the full
// template; at L4 the coach card.
func (s *Session) rework(ctx context.Context, style string) {
	q := s.q
	if q == nil || q.review {
		s.sendError(refuse(codeNoQuestion, "%s: there is no answer to rework yet", style))
		return
	}
	of := q.id
	if q.of != "" {
		of = q.of
	}
	level := s.questionLevel()
	s.askWith(ctx, s.questionID(""), q.text, level, askOptions{style: style, of: of, previous: q.answerText()})
}

// reviewTitles are the question text of a review's answer_start.
var reviewTitles = map[string]string{"en": "Interview review", "zh": "面试复盘"}

// review streams a short post-interview summary from a model (L1, else
// L2); templates have none, so at L3 and L4 the client gets
// review_unavailable. It counts as a question.
func (s *Session) review(ctx context.Context) {
	if len(s.assist.asked) == 0 {
		s.sendError(refuse(codeNoQuestion, "review: no question has been asked yet"))
		return
	}
	level := s.questionLevel()
	if level > tiers.L2 || s.cfg.Answerer == nil {
		s.sendError(refuse(codeNoReview, "review needs the AI, which is not answering now (%s); download the record instead", level))
		return
	}
	title := reviewTitles[s.profile.Lang]
	if title == "" {
		title = reviewTitles["en"]
	}
	s.askWith(ctx, s.questionID(""), title, level, askOptions{style: tiers.StyleReview, prompt: s.interviewRecord()})
}

// interviewRecord is the session's questions and answers as the review's
// prompt reads them.
func (s *Session) interviewRecord() string {
	var b strings.Builder
	for i, a := range s.assist.asked {
		if a.style == tiers.StyleReview {
			continue
		}
		fmt.Fprintf(&b, "Q%d", i+1)
		if a.style != "" {
			fmt.Fprintf(&b, " (%s of the previous)", a.style)
		}
		fmt.Fprintf(&b, ": %s\n", a.text)
		switch {
		case a.answer.Len() > 0:
			fmt.Fprintf(&b, "Suggested answer (%s, %s): %s\n", a.level, a.source, a.answer.String())
		case a.coached:
			b.WriteString("No answer: only the pacing coach was shown.\n")
		default:
			b.WriteString("No answer.\n")
		}
	}
	return b.String()
}

// track adds q to the questions the review sees.
func (s *Session) track(q *question) {
	q.log = &asked{id: q.id, text: q.text, style: q.style}
	if len(s.assist.asked) == maxAsked {
		s.assist.asked = s.assist.asked[1:]
	}
	s.assist.asked = append(s.assist.asked, q.log)
}

// note records what an answer event tells about q for the review.
func (q *question) note(ev tiers.Event) {
	a := q.log
	if a == nil {
		return
	}
	switch ev.Kind {
	case tiers.EventStart:
		a.level, a.source = ev.Level.String(), ev.Source
	case tiers.EventDelta:
		if room := maxAskedAnswer - a.answer.Len(); room > 0 {
			t := ev.Text
			if len(t) > room {
				t = clipTo(t, room)
			}
			a.answer.WriteString(t)
		}
	}
}

// answerText is the answer q has shown so far (as much as the review
// keeps).
func (q *question) answerText() string {
	if q.log == nil {
		return ""
	}
	return q.log.answer.String()
}

// fileReasons are the reasons of bad_file, by doctext's error.
var fileReasons = []struct {
	err    error
	reason string
}{
	{doctext.ErrFormat, "format"},
	{doctext.ErrDamaged, "damaged"},
	{doctext.ErrLocked, "locked"},
	{doctext.ErrNoText, "no_text"},
}

// fileReason is the reason of bad_file for err: what the page words in
// the session's language ("damaged" for an error doctext does not name).
func fileReason(err error) string {
	for _, r := range fileReasons {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "damaged"
}
