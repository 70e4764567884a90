package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// demoConfig makes -demo's health checks fast (200 ms) and recovery slow
// (50 passing rounds, 10 s), so that faults move sessions down within a
// second and nothing climbs back on its own while the test runs.
const demoConfig = "health:\n  interval_ms: 200\n  recover_after: 50\n"

// demoRecovery is how long a backend's circuit takes to close under
// demoConfig once its fault is cleared: 50 passing rounds of 200 ms, more
// with the probes' jitter and time (12.4 s on an idle machine).
const demoRecovery = 50 * 200 * time.Millisecond

// levelChips are the chips of docs/protocol.md (Levels and chips) by language and level ("" is no chip).
var levelChips = map[string]map[string]chipView{
	"en": {
		"L1": {},
		"L2": {Shown: true, Text: "⚡ Lite mode", Hint: "Main model unavailable, using the local model; answers may be briefer"},
		"L3": {Shown: true, Text: "📋 Template mode", Hint: "Switched to offline templates; adapt them to your own experience"},
		"L4": {Shown: true, Text: "🧭 Coach mode", Hint: "AI service temporarily unavailable; switched to answer-pacing guidance"},
	},
	"zh": {
		"L1": {},
		"L2": {Shown: true, Text: "⚡ 轻量模式", Hint: "主模型暂时不可用，已切换本地模型，回答可能略简洁"},
		"L3": {Shown: true, Text: "📋 模板模式", Hint: "已切换离线模板，建议根据自身经历调整后表述"},
		"L4": {Shown: true, Text: "🧭 教练模式", Hint: "AI 服务暂时不可用，已切换答题节奏指引"},
	},
}

var levelQuestions = map[string]string{
	"en": "How do you handle disagreements with your manager?",
	"zh": "你是怎么处理和上级的分歧的？",
}

// testLevelsAndReset walks two sessions (en and zh) down L1 → L2 → L3 → L4
// with the ops page's demo fault switches, checks the chip and the answers
// at each level, checks the ops page's view of it, then clears the faults
// and brings both sessions back to L1 with Reset AI (a click, and Alt+R).
func testLevelsAndReset(t *testing.T, env *browserEnv, s *poiseServer) {
	langs := []string{"en", "zh"}
	tabs := map[string]*tab{}
	for _, lang := range langs {
		tabs[lang] = env.newTab(t)
		tabs[lang].openCopilot(s, nil, profile{lang: lang, seniority: "senior", role: "Staff engineer"})
	}
	ops := env.newTab(t)
	ops.do(chromedp.Navigate(s.url("/ops?poll_ms=300&lang=en")))
	ops.waitFor("the demo switches", `document.body.dataset.demo === 'on' && document.querySelectorAll('#faults .fault').length === 4`)

	checkLevel := func(level string) {
		t.Helper()
		for _, lang := range langs {
			tb := tabs[lang]
			tb.waitFor("level "+level, fmt.Sprintf(`document.body.dataset.level === %q`, level))
			if c := tb.chip(); c != levelChips[lang][level] {
				t.Errorf("%s at %s: chip %+v, want %+v", lang, level, c, levelChips[lang][level])
			}
		}
	}
	askAll := func(wantLevel string) {
		t.Helper()
		for _, lang := range langs { // both answers stream at once
			tabs[lang].ask(levelQuestions[lang])
		}
		for _, lang := range langs {
			tb := tabs[lang]
			if wantLevel == "L4" {
				tb.waitFor("the server's coach card", `document.querySelector('#current .coach') && document.querySelector('#current .question')?.textContent === `+jsString(levelQuestions[lang]))
				if c := tb.current().Coach; c == nil || c.Local || c.Kind != "question" {
					t.Errorf("%s at L4: coach card %+v, want the server's question card", lang, c)
				}
				continue
			}
			tb.waitFor("an answer at "+wantLevel, `document.querySelector('#current .answer')?.dataset.reason === 'done' && document.querySelector('#current .question')?.textContent === `+jsString(levelQuestions[lang]))
			if got := tb.current(); got.AnswerLevel != wantLevel || strings.TrimSpace(got.AnswerText) == "" {
				t.Errorf("%s: answer at %q with %d bytes, want a %s answer", lang, got.AnswerLevel, len(got.AnswerText), wantLevel)
			}
		}
	}
	fault := func(name string) {
		t.Helper()
		ops.do(chromedp.Click(chromedp.CSS(`#faults [data-fault="` + name + `"]`)))
		ops.waitFor(name+" on", `document.querySelector('#faults [data-fault="`+name+`"]')?.getAttribute('aria-pressed') === 'true'`)
	}
	shots := func(level string) {
		t.Helper()
		for _, lang := range langs {
			tabs[lang].shot("copilot-" + level + "-" + lang)
		}
	}

	checkLevel("L1")
	askAll("L1")
	shots("L1")

	fault("l1_down")
	checkLevel("L2")
	askAll("L2")
	shots("L2")

	// L3 is only passed through here: templates are tested at L3 elsewhere.
	fault("l2_slow")
	for _, lang := range langs {
		tabs[lang].waitFor("a visit to L3", `(document.body.dataset.levelTrail || '').split(',').includes('L3')`)
	}

	fault("templates_down")
	checkLevel("L4")
	askAll("L4")
	shots("L4")

	// The ops page shows both sessions at L4 (and the L4 tile counts every connected
	// L4 row, the earlier subtests' sessions included) and each one's way down.
	ops.waitFor("the L4 tile to count the L4 rows", `Number(document.querySelector('#tiles [data-level="L4"] .count')?.textContent) >= 2 &&
	  document.querySelector('#tiles [data-level="L4"] .count').textContent === String(document.querySelectorAll('#sessions tr[data-level="L4"][data-connected="true"]').length)`)
	for _, lang := range langs {
		id := tabs[lang].seqState().Session
		ops.waitFor("the session row at L4", fmt.Sprintf(`document.querySelector('#sessions tr[data-session=%q]')?.dataset.level === 'L4'`, id))
		for _, step := range []struct{ to, reason string }{{"L2", "vendor_all_down"}, {"L3", "local_failing"}, {"L4", "templates_failing"}} {
			ops.waitFor("the transition to "+step.to, fmt.Sprintf(`!!document.querySelector('#transitions li[data-session=%q][data-to=%q][data-reason=%q]')`, id, step.to, step.reason))
		}
	}
	ops.waitFor("the backends to show down", `document.querySelectorAll('#backends tr[data-state="down"]').length >= 3`)
	ops.shot("ops-en")
	ops.do(chromedp.Click(chromedp.ID("btn-lang")))
	ops.waitFor("the ops page in Chinese", `document.body.dataset.lang === 'zh' && document.querySelector('#sessions th')?.textContent === '会话'`)
	ops.shot("ops-zh")

	// Faults cleared, the health state still says down (recovery needs 50
	// rounds): only Reset AI brings the sessions back to L1 now.
	ops.do(chromedp.Click(chromedp.ID("btn-clear")))
	ops.waitFor("every fault off", `[...document.querySelectorAll('#faults .fault')].every((b) => b.getAttribute('aria-pressed') === 'false')`)
	tabs["en"].do(chromedp.Click(chromedp.ID("btn-reset")))
	tabs["zh"].do(chromedp.KeyEvent("r", chromedp.KeyModifiers(chromedp.ModifierAlt)))
	checkLevel("L1")
	for _, lang := range langs {
		id := tabs[lang].seqState().Session
		ops.waitFor("the reset on the ops page", fmt.Sprintf(`!!document.querySelector('#transitions li[data-session=%q][data-to="L1"][data-reason="reset"]')`, id))
	}
	// The health state still marks every source down (it recovers after 50
	// rounds), so what answers now is the server's business; the page must
	// show something for the question, never a blank card.
	after := map[string]string{"en": "What are you looking for in your next role?", "zh": "你希望下一份工作是什么样的？"}
	for _, lang := range langs {
		tabs[lang].ask(after[lang])
	}
	for _, lang := range langs {
		tb := tabs[lang]
		tb.waitFor("content for the question after the reset", `document.querySelector('#current .question')?.textContent === `+jsString(after[lang])+
			` && !!document.querySelector('#current .answer .answer-text, #current .coach .steps li')`)
		tb.requireClean()
	}
	ops.requireClean()
}
