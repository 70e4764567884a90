package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserLocalTrust runs poise -demo with no credential, as on a
// candidate's laptop, in Chromium: the copilot page opens its session and
// the ops page switches a demo fault (same-origin requests work), while a
// page of another origin that posts to the fault switch (text/plain,
// no-cors: a cross-site request forgery) changes nothing.
func TestBrowserLocalTrust(t *testing.T) {
	t.Parallel()
	env := newBrowserEnv(t, "")
	s := env.startPoise(t, "", "-demo")

	copilot := env.newTab(t)
	copilot.openCopilot(s, nil, profile{lang: "en", seniority: "mid", role: "Backend engineer"})

	ops := env.newTab(t)
	ops.do(chromedp.Navigate(s.url("/ops?poll_ms=300&lang=en")))
	ops.waitFor("the demo switches", `document.body.dataset.demo === 'on' && document.querySelectorAll('#faults .fault').length === 4`)
	ops.do(chromedp.Click(chromedp.CSS(`#faults [data-fault="l2_slow"]`)))
	ops.waitFor("l2_slow on", `document.querySelector('#faults [data-fault="l2_slow"]')?.getAttribute('aria-pressed') === 'true'`)
	ops.do(chromedp.Click(chromedp.CSS(`#faults [data-fault="l2_slow"]`)))
	ops.waitFor("l2_slow off", `document.querySelector('#faults [data-fault="l2_slow"]')?.getAttribute('aria-pressed') === 'false'`)

	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><body><script>
fetch(%q, {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: '{"fault":"l1_down","on":true}'})
  .finally(() => { document.body.dataset.sent = '1'; });
</script></body>`, s.url("/ops/api/demo/faults"))
	}))
	t.Cleanup(evil.Close)
	page := env.newTab(t)
	page.do(chromedp.Navigate(evil.URL))
	page.waitFor("the forged request", `document.body.dataset.sent === '1'`)

	resp, err := http.Get(s.url("/ops/api/demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var state struct{ Faults map[string]bool }
	if err := json.NewDecoder(resp.Body).Decode(&state); err != nil {
		t.Fatal(err)
	}
	if state.Faults["l1_down"] {
		t.Fatal("a page of another origin switched a fault on")
	}
	copilot.waitFor("the session still open", `document.body.dataset.conn === 'open'`)
	copilot.requireClean()
	ops.requireClean()
}
