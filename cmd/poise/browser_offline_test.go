package main

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/coach"
)

// offlineQuery makes the page give up on the server after 1.5 s instead of
// 60 s, and retry at least every 400 ms.
var offlineQuery = query("offline_after_ms", "1500", "reconnect_max_ms", "400")

// testOfflineAndRestart stops the server mid-session: the page coaches on
// its own with the coach-mode chip; when the server is back on the same
// port the page reconnects, shows the server's level again and has lost
// and doubled nothing.
func testOfflineAndRestart(t *testing.T, env *browserEnv, s *poiseServer) {
	tabs := map[string]*tab{"en": env.newTab(t), "zh": env.newTab(t)}
	bank := map[string]string{"en": enCase.bankQuestion, "zh": zhCase.bankQuestion}
	for lang, tb := range tabs {
		tb.openCopilot(s, offlineQuery, profile{lang: lang, seniority: "mid", role: "SRE"})
		tb.ask(bank[lang])
		tb.waitFor("the template answer", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	}
	before := map[string]seqState{}
	for lang, tb := range tabs {
		before[lang] = tb.seqState()
	}

	s.stop()
	chips := map[string]chipView{
		"en": {Shown: true, Text: "🧭 Coach mode", Hint: "AI service temporarily unavailable; switched to answer-pacing guidance"},
		"zh": {Shown: true, Text: "🧭 教练模式", Hint: "AI 服务暂时不可用，已切换答题节奏指引"},
	}
	failure := map[string]string{"en": "Tell me about a time you failed", "zh": "讲讲你失败的一次经历"}
	for lang, tb := range tabs {
		tb.waitFor("the local coach", `document.body.dataset.mode === 'local-coach'`)
		if c := tb.chip(); c != chips[lang] {
			t.Errorf("%s: chip %+v offline, want %+v", lang, c, chips[lang])
		}
		tb.ask(failure[lang])
		tb.waitFor("a local coach card", `document.querySelector('#current .coach')?.dataset.local === 'true'`)
		got := tb.current()
		want := coach.CardFor(failure[lang], lang)
		if got.Coach.Kind != string(want.Kind) || got.Coach.Framework != want.Framework.Name ||
			!reflect.DeepEqual(got.Coach.Steps, want.Framework.Steps) || !reflect.DeepEqual(got.Coach.Tips, want.Tips) {
			t.Errorf("%s: local card %+v, want the server's card %+v", lang, got.Coach, want)
		}
		tb.waitFor("the countdown to run", `Number(document.querySelector('#current .ring-num')?.textContent) < 8`)
		tb.shot("copilot-L4-offline-" + lang)
	}

	restarted := env.startPoise(t, s.addr)
	for lang, tb := range tabs {
		tb.waitFor("the server again", `document.body.dataset.conn === 'open' && document.body.dataset.mode === 'server'`)
		want := map[string]string{"en": enCase.chipText, "zh": zhCase.chipText}[lang]
		if c := tb.chip(); c.Text != want {
			t.Errorf("%s: chip %q after the server came back, want %q", lang, c.Text, want)
		}
		// In-memory sessions die with the process: the page starts a new
		// session and keeps what it showed.
		st := tb.seqState()
		if st.Session == before[lang].Session {
			t.Errorf("%s: the page resumed session %s that the restarted server cannot know", lang, st.Session)
		}
		if st.Gaps != 0 || st.Duplicates != 0 {
			t.Errorf("%s: stream bookkeeping %+v after the restart", lang, st)
		}
		if h := tb.historyQuestions(); countOf(h, bank[lang]) != 1 {
			t.Errorf("%s: earlier questions %q, want the first question once", lang, h)
		}
		if cur := tb.current(); cur.Question != failure[lang] || cur.Coach == nil {
			t.Errorf("%s: current turn %+v, want the offline card still shown", lang, cur)
		}
		tb.ask(bank[lang])
		tb.waitFor("an answer from the restarted server", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
		if h := tb.historyQuestions(); countOf(h, failure[lang]) != 1 || countOf(h, bank[lang]) != 1 {
			t.Errorf("%s: earlier questions %q after the restart", lang, h)
		}
		tb.requireClean("ERR_CONNECTION_REFUSED", "WebSocket connection to")
	}
	_ = restarted
}

// testResumeThroughCut cuts the network between the page and a server that
// stays up. While the page is away the session loses its heartbeat and
// drops to L4; when the network is back the page resumes the same session
// with last_seq, gets what it missed exactly once and climbs back.
func testResumeThroughCut(t *testing.T, env *browserEnv) {
	s := env.startPoise(t, "", "-config", writeFile(t, "poise.yaml", "heartbeat_timeout_ms: 1500\n"))
	proxy := startCutProxy(t, s.addr)
	tb := env.newTab(t)
	tb.do(navigateTo(proxy.url("/?ping_ms=300&reconnect_max_ms=400")))
	tb.fillProfileAndStart(profile{lang: "en", seniority: "mid"})
	tb.ask(enCase.bankQuestion)
	tb.waitFor("the template answer", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	answer := tb.current().AnswerText
	before := tb.seqState()

	proxy.cut()
	tb.waitFor("the page to notice", `document.body.dataset.conn !== 'open'`)
	waitSessionLevel(t, s, before.Session, "L4")
	proxy.reopen()

	tb.waitFor("the resumed session back at L3", `document.body.dataset.conn === 'open' && document.body.dataset.level === 'L3'`)
	after := tb.seqState()
	if after.Session != before.Session {
		t.Fatalf("session %s after the cut, want %s resumed", after.Session, before.Session)
	}
	if after.Gaps != 0 || after.Duplicates != 0 || after.LastSeq <= before.LastSeq {
		t.Errorf("stream %+v after the resume (before %+v): want more messages, no gaps, no duplicates", after, before)
	}
	if trail := js[string](tb, `document.body.dataset.levelTrail`); !strings.HasSuffix(trail, "L3,L4,L3") {
		t.Errorf("levels seen %q, want the missed drop to L4 and the restore to L3", trail)
	}
	if got := tb.current(); got.AnswerText != answer {
		t.Errorf("the answer changed across the resume:\n got %q\nwant %q", got.AnswerText, answer)
	}
	if status := js[string](tb, `document.getElementById('status').textContent`); status != "Reconnected; nothing was missed" {
		t.Errorf("status %q after the resume", status)
	}
	tb.requireClean("ERR_CONNECTION_REFUSED", "WebSocket connection to")
}

// waitSessionLevel polls the ops API until the session is at level.
func waitSessionLevel(t *testing.T, s *poiseServer, id, level string) {
	t.Helper()
	deadline := time.Now().Add(browserWait)
	var last []sessionRow
	for time.Now().Before(deadline) {
		last = opsSessions(t, s)
		for _, r := range last {
			if r.ID == id && r.Level == level {
				return
			}
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not an assertion delay
	}
	t.Fatalf("session %s never reached %s; sessions: %+v", id, level, last)
}

type sessionRow struct {
	ID, Level string
	Connected bool
}

func opsSessions(t *testing.T, s *poiseServer) []sessionRow {
	t.Helper()
	resp, err := http.Get(s.url("/ops/api/sessions"))
	if err != nil {
		t.Fatalf("ops api: %v", err)
	}
	defer resp.Body.Close()
	var rows []sessionRow
	if err := decodeJSON(resp, &rows); err != nil {
		t.Fatalf("ops api sessions: %v", err)
	}
	return rows
}
