package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/poise-dev/poise/tiers"
)

// TestBrowser drives the copilot and ops pages in headless Chromium against
// the real poise binary. The package's one Chromium serves every subtest;
// each subtest opens its own tabs in fresh browser contexts. Four groups
// run in parallel, each on servers of its own; within a group the
// subtests run in order.
func TestBrowser(t *testing.T) {
	t.Parallel()
	env := newBrowserEnv(t, micWAV)
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		// One server with the embedded defaults (no vendors: sessions at
		// L3) serves these; the offline subtest, last of them, stops it and
		// starts another on its port.
		plain := env.startPoise(t, "")
		t.Run("pages load clean", func(t *testing.T) { testPagesLoadClean(t, env, plain) })
		t.Run("typed questions en", func(t *testing.T) { testTypedQuestions(t, env, plain, enCase) })
		t.Run("typed questions zh", func(t *testing.T) { testTypedQuestions(t, env, plain, zhCase) })
		t.Run("unreadable files", func(t *testing.T) { testBadFileWording(t, env, plain) })
		t.Run("coach parity", func(t *testing.T) { testCoachParity(t, env, plain) })
		t.Run("connection logic", func(t *testing.T) { testConnection(t, env, plain) })
		t.Run("offline and restart", func(t *testing.T) { testOfflineAndRestart(t, env, plain) })
	})
	t.Run("demo", func(t *testing.T) {
		t.Parallel()
		// One -demo server serves the microphone, then the level walk.
		demo := env.startPoise(t, "", "-demo", "-config", writeFile(t, "demo.yaml", demoConfig))
		t.Run("microphone captions", func(t *testing.T) { testMicCaptions(t, env, demo) })
		t.Run("captions status", func(t *testing.T) { testCaptionsStatus(t, env, demo) })
		t.Run("levels and reset", func(t *testing.T) { testLevelsAndReset(t, env, demo) })
	})
	t.Run("resume through a cut", func(t *testing.T) { t.Parallel(); testResumeThroughCut(t, env) })
	t.Run("copilot features (demo)", func(t *testing.T) { t.Parallel(); testCopilotFeatures(t, env) })
}

func testPagesLoadClean(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	tb.do(chromedp.Navigate(s.url("/")))
	tb.waitFor("the profile form and the coach scripts", `document.body.dataset.view === 'profile' && document.body.dataset.scripts === 'loaded'`)
	cached := js[bool](tb, `!!localStorage.getItem('poise.coach.scripts.v1')`)
	if !cached {
		t.Error("the coach scripts were not cached in localStorage")
	}
	tb.do(chromedp.Click(chromedp.CSS(`input[name=lang][value=en]`)))
	tb.shot("profile-en")
	tb.do(chromedp.Click(chromedp.CSS(`input[name=lang][value=zh]`)))
	tb.waitFor("the form in Chinese", `document.getElementById('profile-heading').textContent === '开始之前'`)
	tb.shot("profile-zh")
	tb.do(chromedp.Navigate(s.url("/ops")))
	tb.waitFor("the ops page to poll", `Number(document.body.dataset.polls || 0) >= 2`)
	tb.requireClean()
}

// typedCase is one language's typed-question script.
type typedCase struct {
	lang, seniority, bankQuestion, statement, chipText, chipHint, statementFramework string
}

var (
	enCase = typedCase{lang: "en", seniority: "mid", bankQuestion: "Tell me about yourself",
		statement: "We use Kafka for our event pipeline.", chipText: "📋 Template mode",
		chipHint:           "Switched to offline templates; adapt them to your own experience",
		statementFramework: "Acknowledge → Connect → Ask"}
	zhCase = typedCase{lang: "zh", seniority: "senior", bankQuestion: "请做一下自我介绍",
		statement: "我们团队主要做支付系统。", chipText: "📋 模板模式",
		chipHint:           "已切换离线模板，建议根据自身经历调整后表述",
		statementFramework: "回应 → 关联 → 追问"}
)

// testTypedQuestions: with no vendors configured the session is at L3; a
// bank question streams the template answer, a statement gets the coach.
func testTypedQuestions(t *testing.T, env *browserEnv, s *poiseServer, c typedCase) {
	want := templateMatch(t, env, c.lang, c.seniority, c.bankQuestion)
	tb := env.newTab(t)
	tb.openCopilot(s, nil, profile{lang: c.lang, seniority: c.seniority, role: "Backend engineer", resume: "Five years of payments backends in Go."})
	if lvl := js[string](tb, `document.body.dataset.level`); lvl != "L3" {
		t.Fatalf("level %s at start, want L3 (no vendors configured)", lvl)
	}
	chip := tb.chip()
	if !chip.Shown || chip.Text != c.chipText || chip.Hint != c.chipHint {
		t.Errorf("chip %+v, want %q with hint %q", chip, c.chipText, c.chipHint)
	}
	if chip.HintVisible {
		t.Error("the chip's hint shows without hover")
	}
	tb.hoverChip()
	if !tb.chip().HintVisible {
		t.Error("the chip's hint does not show on hover")
	}
	tb.unhover()

	tb.ask(c.bankQuestion)
	tb.waitFor("the template answer to end", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	got := tb.current()
	if got.Question != c.bankQuestion || got.AnswerLevel != "L3" {
		t.Errorf("turn %q at %s, want %q at L3", got.Question, got.AnswerLevel, c.bankQuestion)
	}
	// The page shows the template with the profile's facts filled in.
	p := tiers.Profile{Role: "Backend engineer", Resume: "Five years of payments backends in Go."}
	if filled := tiers.FillPlaceholders(want.Answer, p, c.lang); got.AnswerText != filled {
		t.Errorf("answer text differs from the template %s:\n got %q\nwant %q", want.TemplateID, got.AnswerText, filled)
	}
	if !strings.Contains(got.Source, want.TemplateID) {
		t.Errorf("source %q does not name template %s", got.Source, want.TemplateID)
	}
	if got.Note == "" {
		t.Error("the L3 answer shows no note")
	}
	tb.shot("copilot-L3-" + c.lang)

	tb.ask(c.statement)
	tb.waitFor("the coach card", `document.querySelector('#current .coach') && document.querySelector('#current .question')?.textContent === `+jsString(c.statement))
	got = tb.current()
	if got.Coach == nil || got.Coach.Kind != "statement" || got.Coach.Framework != c.statementFramework || got.Coach.Local {
		t.Errorf("statement card %+v, want the server's statement card %q", got.Coach, c.statementFramework)
	}
	if len(got.Coach.Steps) == 0 || len(got.Coach.Tips) == 0 {
		t.Errorf("statement card has %d steps and %d tips", len(got.Coach.Steps), len(got.Coach.Tips))
	}
	if h := tb.historyQuestions(); countOf(h, c.bankQuestion) != 1 {
		t.Errorf("earlier questions %q, want the bank question once", h)
	}
	if st := tb.seqState(); st.Gaps != 0 || st.Duplicates != 0 {
		t.Errorf("stream bookkeeping %+v, want no gaps and no duplicates", st)
	}
	tb.requireClean()
}

// templateMatch is what `poise templates match` says for text: the answer
// the page must show, byte for byte.
type templateHit struct {
	Hit        bool
	TemplateID string `json:"template_id"`
	Answer     string
}

func templateMatch(t *testing.T, env *browserEnv, lang, seniority, text string) templateHit {
	t.Helper()
	out, err := exec.Command(env.bin, "templates", "match", "-lang", lang, "-seniority", seniority, text).Output()
	if err != nil {
		t.Fatalf("poise templates match: %v", err)
	}
	var h templateHit
	if err := json.Unmarshal(out, &h); err != nil || !h.Hit {
		t.Fatalf("poise templates match %q: %s (%v); the test needs a bank question", text, out, err)
	}
	return h
}

// writeFile writes a file in a temporary directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
