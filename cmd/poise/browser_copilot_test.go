package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/poise-dev/poise/session/doctext/doctexttest"
)

// The copilot features beyond answering: résumé and job files, answer
// controls (buttons and hotkeys) at L1 and at L3, the review and the
// downloaded record. One -demo server of its own: L1 first, then its
// fault switches put it at L3.

var copilotResume = []string{
	"Jane Doe",
	"Senior Backend Engineer, Acme Payments (2019 - Present)",
	"7 years of experience building payment systems in Go.",
	"Project: Ledger Rewrite (moved settlement to event sourcing)",
}

// badFileCases are what the page says of an unreadable file, in the
// session's language, by the server's reason (bad_file).
var badFileCases = []struct {
	lang, name string
	data       []byte
	says       string
}{
	{"zh", "broken.pdf", []byte("%PDF-1.4 not really"), "无法读取 broken.pdf：文件已损坏，或与扩展名不符"},
	{"zh", "photo.png", []byte("\x89PNG...."), "无法读取 photo.png：只能读取 PDF、DOCX、TXT 和 Markdown 文件"},
	{"en", "photo.png", []byte("\x89PNG...."), "Could not read photo.png: only PDF, DOCX, TXT and Markdown files can be read"},
}

// testBadFileWording uploads unreadable files in a running session: the
// page words the server's reason in the session's language, in the file's
// status line and in the status bar, and the session goes on.
func testBadFileWording(t *testing.T, env *browserEnv, s *poiseServer) {
	dir := t.TempDir()
	for _, c := range badFileCases {
		tb := env.newTab(t)
		tb.openCopilot(s, nil, profile{lang: c.lang, seniority: "mid", role: "Backend engineer"})
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		tb.do(chromedp.Click(chromedp.ID("btn-profile")))
		tb.do(chromedp.SetUploadFiles(chromedp.ID("resume-file"), []string{path}))
		tb.waitFor(c.name+" refused", `document.body.dataset.resumeFile === 'error'`)
		if msg := js[string](tb, `document.getElementById('resume-file-status').textContent`); msg != c.says {
			t.Errorf("%s in %s: the page says %q, want %q", c.name, c.lang, msg, c.says)
		}
		if c.lang == "zh" {
			if st := js[string](tb, `document.getElementById('status').textContent`); !strings.Contains(st, "无法读取该文件") {
				t.Errorf("%s in zh: status line %q is not in Chinese", c.name, st)
			}
			tb.shot("copilot-file-error-zh-" + strings.TrimSuffix(c.name, filepath.Ext(c.name)))
		}
		if conn := js[string](tb, `document.body.dataset.conn`); conn != "open" {
			t.Errorf("%s: connection %q after the refusal, want open", c.name, conn)
		}
		tb.requireClean("could not read")
	}
}

func testCopilotFeatures(t *testing.T, env *browserEnv) {
	s := env.startPoise(t, "", "-demo", "-config", writeFile(t, "demo.yaml", demoConfig))
	dir := t.TempDir()
	files := map[string][]byte{
		"resume.pdf":  doctexttest.PDF(copilotResume),
		"resume.docx": doctexttest.DOCX(copilotResume),
		"broken.pdf":  []byte("%PDF-1.4 not really"),
		"job.txt":     []byte("Staff Engineer at Globex\nRequirements\n- Experience running Kafka at scale\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tb := env.newTab(t)
	tb.openCopilot(s, nil, profile{lang: "en", seniority: "mid", role: "Backend engineer"})
	tb.waitFor("L1", `document.body.dataset.level === 'L1'`)
	tb.do(chromedp.Click(chromedp.ID("auto-answer"))) // answer now answers what auto-answer left
	tb.waitFor("auto-answer off", `document.body.dataset.autoAnswer === 'false'`)

	// Files: on the profile form, while the session runs.
	tb.do(chromedp.Click(chromedp.ID("btn-profile")))
	for _, name := range []string{"resume.pdf", "resume.docx"} {
		tb.do(chromedp.SetUploadFiles(chromedp.ID("resume-file"), []string{filepath.Join(dir, name)}))
		tb.waitFor(name+" read", `document.body.dataset.resumeFile === 'read' && document.getElementById('resume-file-status').textContent.includes(`+jsString(name)+`)`)
		text := js[string](tb, `document.getElementById('resume').value`)
		for _, l := range copilotResume {
			if !strings.Contains(text, l) {
				t.Errorf("%s: the résumé box lacks %q:\n%s", name, l, text)
			}
		}
	}
	tb.do(chromedp.SetUploadFiles(chromedp.ID("job-file"), []string{filepath.Join(dir, "job.txt")}))
	tb.waitFor("the job file read", `document.body.dataset.jobFile === 'read'`)
	tb.shot("copilot-profile-files")
	tb.do(chromedp.SetUploadFiles(chromedp.ID("resume-file"), []string{filepath.Join(dir, "broken.pdf")}))
	tb.waitFor("the broken file refused", `document.body.dataset.resumeFile === 'error'`)
	if msg, want := js[string](tb, `document.getElementById('resume-file-status').textContent`), "Could not read broken.pdf: the file is damaged or not what its name says"; msg != want {
		t.Errorf("broken file message %q, want %q", msg, want)
	}
	tb.shot("copilot-file-error")
	facts := js[map[string]any](tb, `JSON.parse(document.body.dataset.facts || '{}')`)
	if facts["company"] != "Acme Payments" || facts["target_company"] != "Globex" {
		t.Errorf("facts on the page %v", facts)
	}
	tb.do(chromedp.Click(chromedp.ID("btn-start"))) // Save: back to the live view, the session goes on

	tb.controlsAt("L1")
	// Answer now: a caption heard with auto-answer off.
	tb.do(chromedp.Click(chromedp.ID("btn-mic")))
	tb.waitFor("a final caption", `!!document.querySelector('#captions .caption.final')`)
	heard := js[string](tb, `[...document.querySelectorAll('#captions .caption.final')].pop().dataset.text`) // the words heard, without the page's "simulated" tag
	tb.do(chromedp.Click(chromedp.ID("btn-stop")))
	tb.do(chromedp.Click(chromedp.ID("btn-answer-now")))
	tb.waitFor("the heard question answered", `document.querySelector('#current .question')?.textContent === `+jsString(heard)+` && document.querySelector('#current .answer')?.dataset.reason === 'done'`)

	tb.do(chromedp.Click(chromedp.ID("btn-review")))
	tb.waitFor("the review", `document.getElementById('current').dataset.style === 'review' && document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	tb.shot("copilot-review")

	// L3: the templates, with the résumé's facts in their placeholders.
	for _, f := range []string{"l1_down", "l2_slow"} {
		setDemoFault(t, s, f, true)
	}
	tb.waitFor("L3", `document.body.dataset.level === 'L3'`)
	tb.ask("So, tell me a bit about yourself.")
	tb.waitFor("a template answer", `document.querySelector('#current .answer')?.dataset.level === 'L3' && document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	if a := tb.current().AnswerText; !strings.Contains(a, "Acme Payments") || !strings.Contains(a, "7 years") {
		t.Errorf("the L3 answer's placeholders lack the résumé's facts:\n%s", a)
	}
	tb.shot("copilot-L3-facts")
	tb.controlsAt("L3")
	tb.do(chromedp.Click(chromedp.ID("btn-answer-now")))
	tb.waitFor("answer now at L3", `document.querySelector('#current .question')?.textContent === `+jsString(heard)+` && document.querySelector('#current .answer, #current .coach')`)
	tb.do(chromedp.Click(chromedp.ID("btn-review")))
	tb.waitFor("review refused at L3", `document.body.dataset.notice === 'review_unavailable'`)

	tb.checkRecord(dir)
	tb.requireClean("could not read", "the AI")
}

// controlsAt asks a bank question and works each answer control on it,
// by button and by hotkey: each answer names its style and, at L3,
// shorter is the outline and deeper the full template.
func (tb *tab) controlsAt(level string) {
	t := tb.t
	t.Helper()
	tb.ask("Tell me about a time you disagreed with your manager.")
	done := `document.querySelector('#current .answer')?.dataset.reason === 'done'`
	tb.waitFor("the answer at "+level, done+` && document.querySelector('#current .answer').dataset.level === `+jsString(level))
	full := tb.current().AnswerText
	for _, c := range []struct{ button, key, style string }{
		{"btn-shorter", "s", "shorter"}, {"btn-deeper", "m", "deeper"}, {"btn-regenerate", "g", "regenerate"},
	} {
		for _, how := range []string{"button", "hotkey"} {
			before := js[string](tb, `document.getElementById('current').dataset.key`)
			if how == "button" {
				tb.do(chromedp.Click(chromedp.ID(c.button)))
			} else {
				tb.do(chromedp.KeyEvent(c.key, chromedp.KeyModifiers(chromedp.ModifierAlt)))
			}
			tb.waitFor(fmt.Sprintf("%s by %s at %s", c.style, how, level), `document.getElementById('current').dataset.key !== `+jsString(before)+
				` && document.getElementById('current').dataset.style === `+jsString(c.style)+` && `+done)
			got := tb.current()
			if got.AnswerLevel != level || got.AnswerText == "" {
				t.Errorf("%s by %s: answer at %s with %q", c.style, how, got.AnswerLevel, got.AnswerText)
			}
			if level == "L3" && c.style == "shorter" && (!strings.HasPrefix(got.AnswerText, "• ") || len(got.AnswerText) >= len(full)) {
				t.Errorf("shorter at L3 = %q, want the outline", got.AnswerText)
			}
			if level == "L3" && c.style == "deeper" && got.AnswerText != full {
				t.Errorf("deeper at L3 = %q, want the full template %q", got.AnswerText, full)
			}
		}
		tb.shot("copilot-" + c.style + "-" + level)
	}
}

// pageRecord is the JSON download, as much as the test reads.
type pageRecord struct {
	Captions  []struct{ Speaker, Stream, Text string }
	Questions []struct {
		ID, Question, Level, Source, Style, Answer, End string
	}
	Levels []struct{ From, To, Reason string }
}

// checkRecord downloads the record as JSON and Markdown and checks them
// against what the page shows: every caption, every question with its
// answer, and every level the page went through.
func (tb *tab) checkRecord(dir string) {
	t := tb.t
	t.Helper()
	downloads := filepath.Join(dir, "downloads")
	if _, err := chromedp.CallBrowser(tb.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads,
		BrowserContextID: chromedp.FromContext(tb.ctx).BrowserContextID}); err != nil {
		t.Fatalf("download behavior: %v", err)
	}
	tb.do(chromedp.Click(chromedp.ID("btn-record-json")), chromedp.Click(chromedp.ID("btn-record-md")))
	var jsonFile, mdFile string
	deadline := time.Now().Add(browserWait)
	for (jsonFile == "" || mdFile == "") && time.Now().Before(deadline) {
		entries, _ := os.ReadDir(downloads)
		for _, e := range entries {
			switch filepath.Ext(e.Name()) {
			case ".json":
				jsonFile = filepath.Join(downloads, e.Name())
			case ".md":
				mdFile = filepath.Join(downloads, e.Name())
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if jsonFile == "" || mdFile == "" {
		t.Fatalf("downloads: json %q, md %q", jsonFile, mdFile)
	}
	raw, _ := os.ReadFile(jsonFile)
	var rec pageRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("record JSON: %v\n%s", err, raw)
	}
	md, _ := os.ReadFile(mdFile)

	captions := js[[]string](tb, `[...document.querySelectorAll('#captions .caption.final')].map((e) => e.dataset.text)`) // the words, without the "simulated" tag
	if len(rec.Captions) != len(captions) {
		t.Errorf("record has %d captions, the page %d", len(rec.Captions), len(captions))
	}
	for i, c := range captions {
		if i < len(rec.Captions) && rec.Captions[i].Text != c {
			t.Errorf("caption %d: record %q, page %q", i, rec.Captions[i].Text, c)
		}
		if !strings.Contains(string(md), c) {
			t.Errorf("the Markdown lacks the caption %q", c)
		}
	}
	shown := js[[]string](tb, `[document.querySelector('#current .question')?.textContent, ...[...document.querySelectorAll('#history summary')].map((e) => e.firstChild?.textContent || '')].filter(Boolean)`)
	asked := map[string]bool{}
	for _, q := range rec.Questions {
		asked[q.Question] = true
		if q.Level == "" || (q.Answer == "" && q.Level != "L4") {
			t.Errorf("record question %+v has no level or answer", q)
		}
		if q.Answer != "" && !strings.Contains(string(md), strings.TrimSpace(q.Answer)[:min(40, len(strings.TrimSpace(q.Answer)))]) {
			t.Errorf("the Markdown lacks the answer of %q", q.Question)
		}
	}
	for _, q := range shown {
		if !asked[q] {
			t.Errorf("the page shows %q, the record has no such question", q)
		}
	}
	cur := tb.current()
	last := rec.Questions[len(rec.Questions)-1]
	if cur.AnswerText != "" && last.Answer != cur.AnswerText {
		t.Errorf("the last answer: record %q, page %q", last.Answer, cur.AnswerText)
	}
	trail := strings.Split(js[string](tb, `document.body.dataset.levelTrail`), ",")
	var levels []string
	for _, l := range rec.Levels {
		if len(levels) == 0 || levels[len(levels)-1] != l.To {
			levels = append(levels, l.To)
		}
	}
	if strings.Join(levels, ",") != strings.Join(trail, ",") {
		t.Errorf("record levels %v, the page went through %v", levels, trail)
	}
	for _, want := range []string{"## Levels", "## Questions and answers", "## Captions"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
	if err := os.WriteFile(filepath.Join(tb.env.shots, "copilot-record.md"), md, 0o644); err == nil {
		t.Logf("record %s", filepath.Join(tb.env.shots, "copilot-record.md"))
	}
}
