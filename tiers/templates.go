package tiers

import (
	"context"
	"strings"
	"time"

	"github.com/poise-dev/poise/coach"
	"github.com/poise-dev/poise/tiers/upstream"
)

// TemplatesBackend names template recall in health records, metrics and
// logs; a template probe given to NewHealth should use this name.
const TemplatesBackend = "templates"

// Honest notes shown with a template answer when the match carries none.
const (
	templateNoteZH = "基于通用模板，请结合自身经历调整后表述"
	templateNoteEN = "Based on a generic template — adapt it to your own experience."
)

// Templates is template recall (L3) as the engine uses it.
type Templates interface {
	// Match returns the best template for text in lang ("zh" or "en") at
	// seniority ("junior", "mid" or "senior"). A miss is Hit false with a
	// nil error; an error is a failure of the template store, which the
	// health center counts against L3.
	Match(ctx context.Context, text, lang, seniority string) (TemplateMatch, error)
}

// TemplateMatch is the best template for a question.
type TemplateMatch struct {
	Hit        bool // Similarity reached the threshold
	Similarity float64
	ID         string // the template id, shown as the answer's source
	Question   string // the template's question, in the question's language
	Answer     string
	Outline    []string // the template's outline in the question's language, one step a line; "shorter" at L3 shows it
	Note       string   // the honest note in the question's language; empty: the engine's default
}

// runL3 answers from the templates. It reports whether it answered; a
// miss or an error leaves the question to the coach.
func (a *answering) runL3(ctx context.Context) bool {
	if !coach.Asks(a.req.Question) {
		return false // a remark gets the coach's statement card, never an answer to a question
	}
	lang := questionLang(a.req.Question, a.req.Profile.Lang)
	began := time.Now()
	m, err := a.e.tpl.Match(ctx, a.req.Question, lang, a.req.Profile.Seniority)
	if err != nil {
		if ctx.Err() != nil {
			return false // our cancellation, not a template failure
		}
		class := upstream.Classify(err)
		a.e.m.request(TemplatesBackend, class)
		a.e.log.Warn().Err(err).Str("question", a.req.ID).Dur("took", time.Since(began)).Msg("tiers: template match failed")
		a.e.reportResult(L3, TemplatesBackend, class)
		return false
	}
	a.e.m.request(TemplatesBackend, upstream.ClassNone)
	if !m.Hit || m.Answer == "" {
		return false
	}
	note := m.Note
	if note == "" {
		note = templateNoteEN
		if lang == "zh" {
			note = templateNoteZH
		}
	}
	outline := make([]string, len(m.Outline))
	for i, l := range m.Outline {
		outline[i] = FillPlaceholders(a.req.Facts.Fill(l), a.req.Profile, lang)
	}
	a.beginWith(Event{Level: L3, Source: m.ID, Note: note, Matched: m.Question, Outline: outline})
	a.delta(FillPlaceholders(a.req.Facts.Fill(templateText(m, a.req.Style)), a.req.Profile, lang))
	a.end(ReasonDone)
	return true
}

// templateText is what L3 shows of a template for an answer style: the
// outline for "shorter" (when it has one), else the full answer.
func templateText(m TemplateMatch, style string) string {
	if style == StyleShorter && len(m.Outline) > 0 {
		return "• " + strings.Join(m.Outline, "\n• ")
	}
	return m.Answer
}
