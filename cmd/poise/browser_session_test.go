package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Helpers that drive the copilot page as a candidate does.

// profile is what the candidate fills in before the session starts.
type profile struct {
	lang, seniority, role, resume string
}

// openCopilot loads the copilot page of s with the query parameters q,
// fills the profile form and starts the session; it returns when the page
// has its welcome.
func (tb *tab) openCopilot(s *poiseServer, q url.Values, p profile) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(s.url("/?" + q.Encode())))
	tb.fillProfileAndStart(p)
}

// fillProfileAndStart fills the profile form of a loaded copilot page and
// starts the session; it returns when the page has its welcome.
func (tb *tab) fillProfileAndStart(p profile) {
	tb.t.Helper()
	tb.waitFor("the profile form", `document.body.dataset.view === 'profile' && document.body.dataset.scripts === 'loaded'`)
	tb.do(
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[name=lang][value=%s]`, p.lang))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[name=seniority][value=%s]`, p.seniority))),
		chromedp.SendKeys(chromedp.ID("role"), p.role),
		chromedp.SendKeys(chromedp.ID("resume"), p.resume),
		chromedp.Click(chromedp.ID("btn-start")),
	)
	tb.waitFor("the session to open", `document.body.dataset.conn === 'open' && !!document.body.dataset.level`)
}

// ask types a question into the ask box and presses Enter.
func (tb *tab) ask(text string) {
	tb.t.Helper()
	tb.do(chromedp.SendKeys(chromedp.ID("ask"), text+kb.Enter))
}

// current returns the current turn as the page shows it.
type turnView struct {
	Key, Kind, Question                           string
	AnswerText, AnswerLevel, Source, Note, Reason string
	Coach                                         *coachView
}

type coachView struct {
	Kind, Framework string
	Steps, Tips     []string
	Local           bool
}

const currentTurnJS = `(() => {
  const a = document.getElementById('current');
  const q = (s) => a.querySelector(s);
  const txt = (s) => (q(s) ? q(s).textContent : '');
  const c = q('.coach');
  return {
    Key: a.dataset.key || '', Kind: a.dataset.kind || '', Question: txt('.question'),
    AnswerText: txt('.answer .answer-text'), AnswerLevel: q('.answer') ? q('.answer').dataset.level : '',
    Source: txt('.answer .source'), Note: txt('.answer .note'), Reason: q('.answer') ? q('.answer').dataset.reason || '' : '',
    Coach: c ? { Kind: c.dataset.kind, Framework: txt('.coach .framework'), Local: c.dataset.local === 'true',
      Steps: [...c.querySelectorAll('.steps li')].map((e) => e.textContent),
      Tips: [...c.querySelectorAll('.tips li')].map((e) => e.textContent) } : null,
  };
})()`

func (tb *tab) current() turnView {
	tb.t.Helper()
	return js[turnView](tb, currentTurnJS)
}

// chip is the lite-mode chip as shown: its text, its hint, and whether the
// hint is visible now.
type chipView struct {
	Shown       bool
	Text, Hint  string
	HintVisible bool
}

func (tb *tab) chip() chipView {
	tb.t.Helper()
	return js[chipView](tb, `(() => {
  const c = document.getElementById('chip'), h = document.getElementById('chip-hint');
  return { Shown: !c.hidden && c.offsetParent !== null, Text: document.getElementById('chip-text').textContent,
    Hint: h.textContent, HintVisible: getComputedStyle(h).display !== 'none' };
})()`)
}

// hoverChip moves the mouse over the chip, as a candidate does to read the
// hint.
func (tb *tab) hoverChip() {
	tb.t.Helper()
	box := js[[]float64](tb, `(() => { const r = document.getElementById('chip').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	tb.do(chromedp.MouseEvent(chromedp.MouseMoved, box[0], box[1]))
}

// unhover moves the mouse to an empty corner.
func (tb *tab) unhover() {
	tb.t.Helper()
	tb.do(chromedp.MouseEvent(chromedp.MouseMoved, 2, viewportH-2))
}

// seqState is the page's stream bookkeeping (mirrored on <body>).
type seqState struct {
	Session                   string
	LastSeq, Gaps, Duplicates int
}

func (tb *tab) seqState() seqState {
	tb.t.Helper()
	return js[seqState](tb, `(() => { const d = document.body.dataset;
	  return {Session: d.session || '', LastSeq: Number(d.lastSeq), Gaps: Number(d.gaps), Duplicates: Number(d.duplicates)}; })()`)
}

// historyQuestions returns the questions of the earlier turns, newest first.
func (tb *tab) historyQuestions() []string {
	tb.t.Helper()
	// The summary's own text, without the "superseded" tag an answer cut by
	// a newer question carries.
	return js[[]string](tb, `[...document.querySelectorAll('#history summary')].map((e) =>
		[...e.childNodes].filter((n) => !n.classList?.contains('superseded-tag')).map((n) => n.textContent).join(''))`)
}

func query(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			n++
		}
	}
	return n
}

func navigateTo(u string) chromedp.Action[chromedp.Void] { return chromedp.Navigate(u) }

// decodeJSON decodes an OK JSON response.
func decodeJSON(resp *http.Response, v any) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
