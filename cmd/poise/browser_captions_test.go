package main

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// captionsStatusWait is the bound: the page shows that captions
// paused within 5 s of whisper going down.
const captionsStatusWait = 5 * time.Second

// setDemoFault switches one of poise -demo's faults through the ops API.
func setDemoFault(t *testing.T, s *poiseServer, fault string, on bool) {
	t.Helper()
	body := `{"fault":"` + fault + `","on":false}`
	if on {
		body = strings.Replace(body, "false", "true", 1)
	}
	ctx, cancel := context.WithTimeout(t.Context(), browserWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url("/ops/api/demo/faults"), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("switch %s %v: %s", fault, on, resp.Status)
	}
}

// captionsView is the caption status as the page shows it.
type captionsView struct {
	State, Line, Header, Status, Level, Trail string
	LineShown                                 bool
}

const captionsViewJS = `(() => {
  const line = document.getElementById('captions-state');
  return { State: document.body.dataset.captionsState || '', Line: line.textContent, LineShown: !line.hidden && line.offsetParent !== null,
    Header: document.getElementById('btn-stop-text').textContent, Status: document.body.dataset.status || '',
    Level: document.body.dataset.level || '', Trail: document.body.dataset.levelTrail || '' };
})()`

// testCaptionsStatus runs poise -demo's microphone with whisper switched
// off and on again: simulated captions carry their tag; within 5 s of
// whisper going down the page says captions paused, beside the captions
// and in the header, with the level, the status line and the console
// untouched; when whisper is back the note clears and captions flow.
func testCaptionsStatus(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	tb.openCopilot(s, nil, profile{lang: "en", seniority: "mid", role: "Backend engineer"})
	tb.do(chromedp.Click(chromedp.ID("btn-mic")))
	tb.waitFor("a final caption", `!!document.querySelector('#captions .caption.final')`)
	if tag := js[string](tb, `document.querySelector('#captions .caption.final .sim-tag')?.textContent || ''`); tag != "simulated" {
		t.Errorf("a simulated caption's tag is %q, want \"simulated\"", tag)
	}
	if text := js[string](tb, `document.querySelector('#captions .caption.final').dataset.text`); text == "" || strings.Contains(text, "[simulated") {
		t.Errorf("caption text %q still carries the mark", text)
	}
	before := js[captionsView](tb, captionsViewJS)
	if before.State != "live" || before.LineShown || !strings.Contains(before.Header, "Listening to the microphone") {
		t.Fatalf("before the fault: %+v", before)
	}

	setDemoFault(t, s, faultWhisperDown, true)
	tb.waitWithin("captions paused", `document.body.dataset.captionsState === 'paused'`, captionsStatusWait)
	paused := js[captionsView](tb, captionsViewJS)
	if !paused.LineShown || !strings.Contains(paused.Line, "Captions paused") || !strings.Contains(paused.Header, "Captions paused") ||
		strings.Contains(paused.Header, "Listening") {
		t.Errorf("captions paused shown as %+v", paused)
	}
	if paused.Level != before.Level || paused.Trail != before.Trail || paused.Status != "statusConnected" {
		t.Errorf("whisper down changed the level or the status line: before %+v, paused %+v", before, paused)
	}
	tb.shot("copilot-captions-paused-en")
	finals := js[int](tb, `document.querySelectorAll('#captions .caption.final').length`)

	setDemoFault(t, s, faultWhisperDown, false)
	// Captions are live again once whisper's circuit closes (demoRecovery).
	tb.waitWithin("captions live again", `document.body.dataset.captionsState === 'live'`, demoRecovery+browserWait)
	tb.waitFor("a new final caption", `document.querySelectorAll('#captions .caption.final').length > `+strconv.Itoa(finals))
	live := js[captionsView](tb, captionsViewJS)
	if live.LineShown || !strings.Contains(live.Header, "Listening to the microphone") || live.Level != before.Level || live.Status != "statusConnected" {
		t.Errorf("after whisper came back: %+v (before %+v)", live, before)
	}
	tb.do(chromedp.Click(chromedp.ID("btn-stop")))
	tb.waitFor("the microphone to stop", `document.body.dataset.audio === ''`)
	tb.requireClean()
}
