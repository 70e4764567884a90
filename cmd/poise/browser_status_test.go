package main

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// statusText is the copilot page's status line.
func (tb *tab) statusText() string {
	tb.t.Helper()
	return js[string](tb, `document.getElementById('status').textContent`)
}

// testStatusLanguageAndSave: the status line and the profile button are
// re-worded when the language changes; the button says Save mid-session.
func testStatusLanguageAndSave(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	tb.do(chromedp.Navigate(s.url("/")))
	tb.waitFor("the profile form", `document.body.dataset.scripts === 'loaded'`)
	if got := js[string](tb, `document.getElementById('btn-start').textContent`); got != "Start" {
		t.Errorf("profile button %q before the session, want Start", got)
	}
	tb.fillProfileAndStart(profile{lang: "en", seniority: "mid"})
	if got := tb.statusText(); got != "Connected" {
		t.Errorf("status %q, want Connected", got)
	}
	tb.do(chromedp.Click(chromedp.ID("btn-profile")))
	tb.waitFor("the profile form", `document.body.dataset.view === 'profile'`)
	if got := js[string](tb, `document.getElementById('btn-start').textContent`); got != "Save" {
		t.Errorf("profile button %q mid-session, want Save", got)
	}
	tb.do(chromedp.Click(chromedp.CSS(`input[name=lang][value=zh]`)))
	tb.waitFor("the form in Chinese", `document.getElementById('profile-heading').textContent === '开始之前'`)
	if got := js[string](tb, `document.getElementById('btn-start').textContent`); got != "保存" {
		t.Errorf("profile button %q mid-session in Chinese, want 保存", got)
	}
	tb.do(chromedp.Click(chromedp.ID("btn-start")))
	tb.waitFor("the live view", `document.body.dataset.view === 'live'`)
	if got := tb.statusText(); got != "已连接" {
		t.Errorf("status %q after switching to Chinese, want 已连接", got)
	}
	tb.shot("status-zh-connected")
	tb.requireClean()
}

// testSupersededMark: an answer cut short by a newer question carries a
// mark in the history, in the page's language.
func testSupersededMark(t *testing.T, env *browserEnv, demo *poiseServer) {
	tb := env.newTab(t)
	tb.openCopilot(demo, nil, profile{lang: "en", seniority: "mid"})
	tb.ask("How do you design a rate limiter for an API?")
	tb.waitFor("the answer to stream", `(document.querySelector('#current .answer .answer-text')?.textContent || '').length > 10 &&
	  document.querySelector('#current .answer').dataset.reason === ''`)
	tb.ask("Tell me about yourself")
	tb.waitFor("the superseded mark", `document.querySelector('#history li[data-reason="superseded"] .superseded-tag')?.textContent === 'superseded'`)
	tb.shot("status-superseded-en")
	tb.do(chromedp.Click(chromedp.ID("btn-profile")), chromedp.Click(chromedp.CSS(`input[name=lang][value=zh]`)), chromedp.Click(chromedp.ID("btn-start")))
	tb.waitFor("the mark in Chinese", `document.querySelector('#history li[data-reason="superseded"] .superseded-tag')?.textContent === '已被新问题取代'`)
	tb.requireClean()
}

// testAskAgainAndFade: a question typed while the server was unreachable
// is coached here and, after the reconnect, offered again (not sent); the
// "fresh session" status gives way to "Connected" after a few seconds.
func testAskAgainAndFade(t *testing.T, env *browserEnv) {
	s := env.startPoise(t, "")
	tb := env.newTab(t)
	q := url.Values{"status_fade_ms": {"2000"}}
	for k, v := range offlineQuery {
		q[k] = v
	}
	tb.openCopilot(s, q, profile{lang: "en", seniority: "mid"})
	s.stop()
	tb.waitFor("the local coach", `document.body.dataset.mode === 'local-coach'`)
	tb.ask(enCase.bankQuestion)
	tb.waitFor("a local coach card", `document.querySelector('#current .coach')?.dataset.local === 'true'`)
	if js[bool](tb, `!!document.querySelector('.ask-again')`) {
		t.Error("Ask again offered while the server is still unreachable")
	}
	env.startPoise(t, s.addr)
	tb.waitFor("the server again", `document.body.dataset.conn === 'open' && document.body.dataset.mode === 'server'`)
	tb.waitFor("the offer to ask again", `document.querySelector('#current .ask-again')?.textContent === 'Ask again'`)
	if got := tb.statusText(); got != "Reconnected with a fresh session" {
		t.Errorf("status %q after the restart", got)
	}
	if got := tb.current(); got.Question != enCase.bankQuestion || got.AnswerText != "" {
		t.Errorf("current turn %+v: want the offline question, not sent again on its own", got)
	}
	tb.shot("status-ask-again-en")
	tb.waitFor("the status to fade to Connected", `document.getElementById('status').textContent === 'Connected'`)
	tb.do(chromedp.Click(chromedp.CSS(`#current .ask-again`)))
	tb.waitFor("the server's answer", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	if got := tb.current(); got.Question != enCase.bankQuestion || got.AnswerLevel != "L3" {
		t.Errorf("after Ask again: %+v, want the template answer to the offline question", got)
	}
	if js[int](tb, `document.querySelectorAll('.ask-again').length`) != 0 {
		t.Error("Ask again still offered after it was used")
	}
	tb.requireClean("ERR_CONNECTION_REFUSED", "WebSocket connection to")
}

// testAudioAndAutoAnswer: with the auto-answer switch off, spoken
// questions are captioned but not answered; on, they are; the switch is
// remembered across a reload. The status line never says "Audio stopped"
// while the header says the page is listening.
func testAudioAndAutoAnswer(t *testing.T, env *browserEnv, demo *poiseServer) {
	tb := env.newTab(t)
	tb.openCopilot(demo, nil, profile{lang: "en", seniority: "mid"})
	tb.do(chromedp.Click(chromedp.ID("auto-answer")))
	tb.waitFor("the switch off", `document.body.dataset.autoAnswer === 'false' && localStorage.getItem('poise.autoAnswer.v1') === 'false'`)

	tb.do(chromedp.Click(chromedp.ID("btn-mic")))
	tb.waitFor("the microphone", `document.body.dataset.audio === 'mic'`)
	tb.do(chromedp.Click(chromedp.ID("btn-stop")))
	tb.waitFor("Audio stopped", `document.getElementById('status').textContent === 'Audio stopped' && document.body.dataset.audio === ''`)
	tb.do(chromedp.Click(chromedp.ID("btn-mic")))
	tb.waitFor("the microphone again", `document.body.dataset.audio === 'mic'`)
	header := js[string](tb, `document.getElementById('btn-stop').innerText`)
	if st := tb.statusText(); st == "Audio stopped" || !strings.Contains(header, "Listening to the microphone") {
		t.Errorf("status %q while the header says %q", st, header)
	}

	tb.waitWithin("two final captions", `document.querySelectorAll('#captions .caption.final').length >= 2`, speechWait)
	if kind := js[string](tb, `document.getElementById('current').dataset.kind || ''`); kind != "" {
		t.Errorf("with auto-answer off a spoken question got a %q card", kind)
	}
	tb.do(chromedp.Click(chromedp.ID("auto-answer")))
	tb.waitFor("an answer to a spoken question", `document.querySelector('#current .answer') && document.body.dataset.autoAnswer === 'true'`)
	// The simulated recognizer varies its lines: the answer is to one of
	// the final captions heard (their words, without the page's tag).
	heard := js[[]string](tb, `[...document.querySelectorAll('#captions .caption.final')].map((li) => li.dataset.text)`)
	if got := tb.current(); !slices.Contains(heard, got.Question) {
		t.Errorf("answered %q, want one of the captions %q", got.Question, heard)
	}
	tb.shot("auto-answer-on-en")
	tb.do(chromedp.Click(chromedp.ID("btn-stop")))
	tb.do(chromedp.Click(chromedp.ID("auto-answer")))
	tb.waitFor("the switch off", `document.body.dataset.autoAnswer === 'false'`)
	tb.do(chromedp.Reload())
	tb.waitFor("the page after the reload", `document.body.dataset.conn === 'open'`)
	if on := js[bool](tb, `document.getElementById('auto-answer').checked`); on {
		t.Error("the auto-answer switch was not remembered across a reload")
	}
	tb.requireClean()
}

// testOpsStale: the ops page counts connected sessions in its tiles and
// the others apart, words transition reasons, and greys out and
// timestamps its data within 10 s of the server going away.
func testOpsStale(t *testing.T, env *browserEnv) {
	s := env.startPoise(t, "", "-config", writeFile(t, "poise.yaml", "heartbeat_timeout_ms: 1000\n"))
	cand := env.newTab(t)
	cand.openCopilot(s, nil, profile{lang: "en", seniority: "mid"})
	id := cand.seqState().Session
	ops := env.newTab(t)
	ops.do(chromedp.Navigate(s.url("/ops?poll_ms=300&lang=en")))
	ops.waitFor("the L3 tile to count the session", `document.querySelector('#tiles [data-level="L3"] .count')?.textContent === '1'`)
	// The browser goes away; the session waits for a resume. The tab is
	// closed rather than navigated to about:blank: with Chromium
	// 156.0.8078.114 the session of a page navigated away from stayed
	// connected, and was even resumed seconds later.
	cand.close()
	ops.waitFor("the session apart from the tiles, at L4", `document.querySelector('#tiles [data-level="L4"] .count')?.textContent === '0' &&
	  document.querySelector('#tiles [data-level="L4"]').dataset.away === '1'`)
	ops.waitFor("the reason in words", `document.querySelector('#transitions li[data-session=`+jsString(id)+`][data-reason="heartbeat_lost"] .reason')?.textContent === 'browser went silent'`)
	ops.do(chromedp.Click(chromedp.ID("btn-lang")))
	ops.waitFor("the reason in Chinese", `document.querySelector('#transitions li[data-reason="heartbeat_lost"] .reason')?.textContent === '浏览器失联'`)
	ops.do(chromedp.Click(chromedp.ID("btn-lang")))
	if js[string](ops, `document.body.dataset.stale`) != "false" {
		t.Error("ops data marked stale while the server answers")
	}
	s.stop()
	stopped := time.Now()
	ctx, cancel := context.WithTimeout(ops.ctx, 10*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`document.body.dataset.stale === 'true' &&
	  [...document.querySelectorAll('.feed-data')].every((e) => e.dataset.stale === 'true') &&
	  [...document.querySelectorAll('.asof')].every((e) => !e.hidden && /not updated since \d/.test(e.textContent))`,
		chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil {
		t.Fatalf("the ops page did not mark its data stale within 10 s of the server stopping: %v", err)
	}
	t.Logf("stale marked %v after the server stopped", time.Since(stopped).Round(100*time.Millisecond))
	ops.shot("ops-stale-en")
	ops.do(chromedp.Click(chromedp.ID("btn-lang")))
	ops.waitFor("the stamp in Chinese", `[...document.querySelectorAll('.asof')].every((e) => e.textContent.startsWith('自 '))`)
	ops.shot("ops-stale-zh")
	ops.requireClean("ERR_CONNECTION_REFUSED", "Failed to fetch", "/ops/api")
}
