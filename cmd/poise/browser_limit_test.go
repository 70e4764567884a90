package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/poise-dev/poise/session"
)

// limitConfig: one question a minute and one session per subject, with
// tokens (a subject is what the limits count), on -demo's simulated
// vendors so that sessions start at L1.
const (
	limitSecret = "limit-secret-for-tests-0123456789"
	limitConfig = "auth:\n  secret: " + limitSecret + "\nlimits:\n  questions_per_minute: 1\n  sessions_per_subject: 1\n"
)

// The chip of a limit that bites, as the page shows it (web/static/i18n.js
// and session/limit.go word it alike).
var limitChips = map[string]chipView{
	"en": {Shown: true, Text: "⚡ Lite mode",
		Hint: "Many questions in a short time: answers come from templates and coaching for a moment; the AI is back within a minute"},
	"zh": {Shown: true, Text: "⚡ 轻量模式", Hint: "短时间内提问较多，暂时用模板和答题指引作答，一分钟内恢复 AI 回答"},
}

// countSocketsJS counts the page's WebSockets and any alert, confirm or
// prompt (there must be none).
const countSocketsJS = `(() => {
  window.__limit = { opened: 0, dialogs: 0 };
  const Real = window.WebSocket;
  window.WebSocket = class extends Real {
    constructor(...args) { super(...args); window.__limit.opened++; }
  };
  for (const f of ['alert', 'confirm', 'prompt']) window[f] = () => { window.__limit.dialogs++; };
  return true;
})()`

// limitHold is how long a limit must have left when it bites for the
// checks after it to see it.
const limitHold = 20 * time.Second

// askUntilLimited asks questions in tb until a limit bites, each once it
// has its answer, and returns those it did not ask.
func askUntilLimited(tb *tab, questions []string) []string {
	tb.t.Helper()
	for len(questions) > 0 && js[string](tb, `document.body.dataset.limit || ''`) == "" {
		q := questions[0]
		questions = questions[1:]
		tb.ask(q)
		tb.waitFor("the answer to "+q, fmt.Sprintf(`document.querySelector('#current .question')?.textContent === %q &&
  (document.querySelector('#current .answer')?.dataset.reason === 'done' || !!document.querySelector('#current .coach'))`, q))
		tb.unhover()
	}
	tb.waitFor("the limit in the chip", `document.body.dataset.limit === 'questions_per_minute' && document.getElementById('chip').dataset.kind === 'limit'`)
	return questions
}

// TestBrowserLimit drives the copilot and ops pages in Chromium against a
// poise with limits: over questions_per_minute the chip shows the limit's
// hint at L1 and the answer comes from the templates; the ops page shows
// the session's limit; a second session of the subject is refused calmly.
func TestBrowserLimit(t *testing.T) {
	t.Parallel()
	env := newBrowserEnv(t, "")
	s := env.startPoise(t, "", "-demo", "-config", writeFile(t, "limits.yaml", demoConfig+limitConfig))
	token, err := session.IssueToken(limitSecret, "cand-limit", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tb := env.newTab(t)
	tb.openCopilot(s, query("token", token), profile{lang: "en", seniority: "mid", role: "Backend engineer"})
	tb.ask("Tell me about yourself")
	tb.waitFor("the L1 answer", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	if got := tb.current(); got.AnswerLevel != "L1" {
		t.Fatalf("first answer at %s, want L1 (-demo's vendors)", got.AnswerLevel)
	}
	if c := tb.chip(); c.Shown {
		t.Fatalf("chip %+v at L1 before any limit", c)
	}
	// The count runs per calendar minute: when a minute turns between two
	// questions, the next one is over the limit. A limit that bites late
	// in a minute lifts within seconds, before the checks below are done:
	// then the test waits for it to lift and makes it bite again, early in
	// the next minute. Each question differs, so that a wait never takes
	// the card before for the one just asked.
	questions := []string{"Why do you want to join our team?", "What are your greatest strengths?",
		"What is your greatest weakness?", "Where do you see yourself in five years?",
		"Why are you leaving your current job?", "How do you handle tight deadlines?"}
	for {
		questions = askUntilLimited(tb, questions)
		if left := time.Duration(js[float64](tb, `60000 - Date.now() % 60000`)) * time.Millisecond; left >= limitHold {
			break
		} else {
			t.Logf("the limit bit with %v of its minute left; asking again in the next", left)
		}
		tb.waitWithin("the late limit to lift", `!document.body.dataset.limit`, limitHold+browserWait)
	}
	if got := tb.current(); got.AnswerLevel != "L3" {
		t.Errorf("the question over the limit: %+v, want a template answer (L3)", got)
	}
	if lvl := js[string](tb, `document.body.dataset.level`); lvl != "L1" {
		t.Errorf("level %s, want L1: a limit is no level change", lvl)
	}
	if c := tb.chip(); c != limitChips["en"] {
		t.Errorf("chip %+v, want %+v", c, limitChips["en"])
	}
	tb.hoverChip()
	if !tb.chip().HintVisible {
		t.Error("the limit's hint does not show on hover")
	}
	tb.shot("limit-chip-en")
	tb.unhover()

	// The candidate switches to Chinese: the page words the hint itself.
	tb.do(chromedp.Click(chromedp.ID("btn-profile")))
	tb.waitFor("the profile form", `document.body.dataset.view === 'profile'`)
	tb.do(chromedp.Click(chromedp.CSS(`input[name=lang][value=zh]`)), chromedp.Click(chromedp.ID("btn-start")))
	tb.waitFor("the live view in Chinese", `document.body.dataset.view === 'live' && document.body.dataset.lang === 'zh'`)
	if c := tb.chip(); c != limitChips["zh"] {
		t.Errorf("chip after switching to zh: %+v, want %+v", c, limitChips["zh"])
	}

	ops := env.newTab(t)
	ops.do(chromedp.Navigate(s.url("/ops?poll_ms=300&lang=en")))
	ops.waitFor("the session's limit on the ops page",
		`document.querySelector('#sessions tr[data-limit="questions_per_minute"] .limit')?.textContent === 'questions / min'`)
	ops.shot("ops-limit")

	// A second session of the same subject: refused, said quietly in the
	// status line, which keeps saying it while the page retries.
	second := env.newTab(t)
	second.do(chromedp.Navigate(s.url("/?" + query("token", token, "reconnect_max_ms", "300").Encode())))
	second.waitFor("the profile form", `document.body.dataset.view === 'profile' && document.body.dataset.scripts === 'loaded'`)
	js[bool](second, countSocketsJS)
	second.do(chromedp.Click(chromedp.CSS(`input[name=lang][value=en]`)), chromedp.Click(chromedp.ID("btn-start")))
	second.waitFor("the refusal, then a retry", `document.body.dataset.notice === 'too_many_sessions' && window.__limit.opened >= 2 &&
  document.body.dataset.conn === 'waiting'`)
	got := js[struct {
		Dialogs int
		Status  string
		Want    string
	}](second, `(async () => ({dialogs: window.__limit.dialogs, status: document.getElementById('status').textContent,
  want: (await import('/static/i18n.js')).t('en').notices.too_many_sessions}))()`)
	if got.Dialogs != 0 || got.Status != got.Want || got.Want == "" {
		t.Errorf("refused page: %+v; want no dialog and the notice kept in the status line while retrying", got)
	}
	second.shot("too-many-sessions")
	tb.requireClean()
	ops.requireClean()
	second.requireClean()
}
