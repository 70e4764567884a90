package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// cardQuestion is one of the four question types the cards are judged on.
type cardQuestion struct {
	typ  string
	text map[string]string // by session language
	// template: at L3 a template answers, with the matched question and
	// its outline first; else the coach card answers at L3 too.
	template bool
	// coach is a part of the L4 card's framework name or first step, by
	// language; countdown says whether that card counts down.
	coach     map[string]string
	countdown bool
}

var cardQuestions = []cardQuestion{
	{"design", map[string]string{"en": "How would you design a rate limiter for our public API?", "zh": "那你讲讲怎么设计一个限流系统吧"},
		true, map[string]string{"en": "Requirements", "zh": "需求"}, true},
	{"concept", map[string]string{"en": "What's the difference between TCP and UDP?", "zh": "TCP 和 UDP 有什么区别？"},
		true, map[string]string{"en": "Define", "zh": "定义"}, true},
	{"checkin", map[string]string{"en": "Sorry, can you hear me okay?", "zh": "你那边能听清楚吗？"},
		false, map[string]string{"en": "I can hear you well", "zh": "听得很清楚"}, false},
	{"behavioural", map[string]string{"en": "Tell me about a time you disagreed with your manager.", "zh": "讲讲你和领导意见不一致的一次经历。"},
		true, map[string]string{"en": "STAR", "zh": "STAR"}, true},
}

// TestBrowserCards asks a design, a concept, a check-in and a behavioural
// question in zh and en at L3 (no vendors) and at L4 (the demo with every
// backend down), checks what each card shows first and saves a screenshot
// of each (cards-L3-design-en.png …).
func TestBrowserCards(t *testing.T) {
	t.Parallel()
	env := newBrowserEnv(t, micWAV)
	t.Run("L3", func(t *testing.T) {
		t.Parallel()
		testCardsAtL3(t, env, env.startPoise(t, ""))
	})
	t.Run("L4", func(t *testing.T) {
		t.Parallel()
		testCardsAtL4(t, env, env.startPoise(t, "", "-demo", "-config", writeFile(t, "demo.yaml", demoConfig)))
	})
}

var cardProfile = profile{seniority: "senior", role: "Backend engineer",
	resume: "Acme Pay, 2019–2024: led the ledger rewrite.\nProject: Ledger v2"}

func testCardsAtL3(t *testing.T, env *browserEnv, s *poiseServer) {
	for _, lang := range []string{"en", "zh"} {
		tb := env.newTab(t)
		p := cardProfile
		p.lang = lang
		tb.openCopilot(s, nil, p)
		answering := map[string]string{"en": "Answering: ", "zh": "回答的是："}[lang]
		for _, q := range cardQuestions {
			text := q.text[lang]
			tb.ask(text)
			if !q.template {
				tb.waitFor("the coach card", `document.querySelector('#current .coach') && document.querySelector('#current .question')?.textContent === `+jsString(text))
				checkCoachCard(t, tb, lang, q)
				tb.shot(fmt.Sprintf("cards-L3-%s-%s", q.typ, lang))
				continue
			}
			tb.waitFor("the template answer", `document.querySelector('#current .answer')?.dataset.reason === 'done' && document.querySelector('#current .question')?.textContent === `+jsString(text))
			got := js[struct {
				Matched   string
				Outline   int
				First     string // the class of the answer card's first child
				Full      string
				OutlineAt int // the outline's index among the card's children
				TextAt    int // the full answer's
			}](tb, `(() => {
  const card = document.querySelector('#current .answer');
  const kids = [...card.children];
  return {Matched: card.querySelector('.matched')?.textContent || '', Outline: card.querySelectorAll('.outline li').length,
    First: kids[0]?.className || '', Full: card.querySelector('.answer-text')?.textContent || '',
    OutlineAt: kids.findIndex((k) => k.classList.contains('outline')), TextAt: kids.findIndex((k) => k.classList.contains('answer-text'))};
})()`)
			if !strings.HasPrefix(got.Matched, answering) || len(got.Matched) <= len(answering) || got.First != "matched" {
				t.Errorf("%s %q: matched line %q first %q, want %q… first", lang, text, got.Matched, got.First, answering)
			}
			if got.Outline < 3 || got.Outline > 5 || got.OutlineAt < 0 || got.TextAt < got.OutlineAt || got.Full == "" {
				t.Errorf("%s %q: %d outline lines at %d, the answer at %d; want 3–5 lines, then the answer", lang, text, got.Outline, got.OutlineAt, got.TextAt)
			}
			if strings.Contains(got.Full, "[company]") || strings.Contains(got.Full, "[公司名]") {
				t.Errorf("%s %q: a company placeholder the résumé fills is left", lang, text)
			}
			tb.shot(fmt.Sprintf("cards-L3-%s-%s", q.typ, lang))
		}
		tb.requireClean()
	}
}

func testCardsAtL4(t *testing.T, env *browserEnv, s *poiseServer) {
	ops := env.newTab(t)
	ops.do(chromedp.Navigate(s.url("/ops?poll_ms=300&lang=en")))
	ops.waitFor("the demo switches", `document.body.dataset.demo === 'on' && document.querySelectorAll('#faults .fault').length === 4`)
	for _, name := range []string{"l1_down", "l2_slow", "templates_down"} {
		ops.do(chromedp.Click(chromedp.CSS(`#faults [data-fault="` + name + `"]`)))
		ops.waitFor(name+" on", `document.querySelector('#faults [data-fault="`+name+`"]')?.getAttribute('aria-pressed') === 'true'`)
	}
	for _, lang := range []string{"en", "zh"} {
		tb := env.newTab(t)
		p := cardProfile
		p.lang = lang
		tb.openCopilot(s, nil, p)
		tb.waitFor("level L4", `document.body.dataset.level === 'L4'`)
		for _, q := range cardQuestions {
			text := q.text[lang]
			tb.ask(text)
			tb.waitFor("the coach card", `document.querySelector('#current .coach') && document.querySelector('#current .question')?.textContent === `+jsString(text))
			checkCoachCard(t, tb, lang, q)
			tb.shot(fmt.Sprintf("cards-L4-%s-%s", q.typ, lang))
		}
		tb.requireClean()
	}
}

// checkCoachCard checks the current coach card: the server's, with the
// framework of q's type and a countdown ring only where q wants one.
func checkCoachCard(t *testing.T, tb *tab, lang string, q cardQuestion) {
	t.Helper()
	c := tb.current().Coach
	ring := js[bool](tb, `!!document.querySelector('#current .coach .ring')`)
	if c == nil || c.Local {
		t.Errorf("%s %q: coach card %+v, want the server's", lang, q.text[lang], c)
		return
	}
	shown := c.Framework + " " + strings.Join(c.Steps, " ")
	if !strings.Contains(shown, q.coach[lang]) {
		t.Errorf("%s %q: coach card %q, want %q", lang, q.text[lang], shown, q.coach[lang])
	}
	if ring != q.countdown {
		t.Errorf("%s %q: countdown ring shown %v, want %v", lang, q.text[lang], ring, q.countdown)
	}
}
