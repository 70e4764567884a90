package main

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
)

// ocrWait bounds a wait on Tesseract: the node's OCR timeout in this test
// and time to answer.
const ocrWait = 30*time.Second + browserWait

// TestBrowserScreenshot pastes a screenshot of a problem statement into
// the copilot page, crops it with a dragged box and sends it: poise -demo
// has no vision model, so OCR (Tesseract) reads it and a demo vendor
// answers the text, and the card shows the read text, editable. Then
// "Capture question" takes a frame of a shared screen (Chromium's fake
// capture) and sends it. Screenshots under $POISE_ARTIFACTS.
func TestBrowserScreenshot(t *testing.T) {
	t.Parallel()
	ocrtest.Need(t)
	env := newBrowserEnv(t, "") // the shared Chromium picks the entire screen for getDisplayMedia
	// Tesseract shares the machine with the other tests: a CI run once
	// took over the default 5 s for this image, and the card said it
	// could not read it. The test is of the flow, not of Tesseract's speed.
	s := env.startPoise(t, "", "-demo", "-config", writeFile(t, "demo.yaml", demoConfig+"ocr:\n  timeout_ms: 30000\n"))
	png, err := ocrtest.PNG(ocrtest.Shot{Text: ocrtest.ProblemEN, Font: ocrtest.SansFont, Size: 15, Scale: 1.5, Theme: ocrtest.Light})
	if err != nil {
		t.Fatal(err)
	}
	tb := env.newTab(t)
	tb.openCopilot(s, nil, profile{lang: "en", seniority: "mid", role: "Backend engineer"})

	js[bool](tb, `(() => {
		const b = Uint8Array.from(atob('`+base64.StdEncoding.EncodeToString(png)+`'), (c) => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([b], 'question.png', { type: 'image/png' }));
		document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
		return true;
	})()`)
	tb.waitFor("the crop dialog", `document.body.dataset.shot === 'open' && !!document.querySelector('#shot-canvas')`)
	js[bool](tb, `(() => {
		const st = document.getElementById('shot-stage');
		const r = document.getElementById('shot-canvas').getBoundingClientRect();
		const ev = (type, x, y) => st.dispatchEvent(new PointerEvent(type, { clientX: x, clientY: y, bubbles: true, pointerId: 1 }));
		ev('pointerdown', r.left + 2, r.top + 2);
		ev('pointermove', r.left + r.width / 2, r.top + r.height / 2);
		ev('pointerup', r.right - 2, r.bottom - 2);
		return true;
	})()`)
	tb.waitFor("a crop box", `!!document.body.dataset.shotBox`)
	tb.shot("copilot-screenshot-crop-en")
	tb.do(chromedp.Click(chromedp.ID("shot-send")))
	tb.waitWithin("the read text on the card", `!!document.querySelector('#current .read-text')?.value`, ocrWait)
	read := js[string](tb, `document.querySelector('#current .read-text').value`)
	if acc := ocrtest.Accuracy(ocrtest.ProblemEN, read); acc < 0.9 {
		t.Errorf("the card's read text %q has accuracy %.2f, want ≥ 0.9", read, acc)
	}
	tb.waitFor("an answer from the read text", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	if via := js[string](tb, `document.querySelector('#current .answer .via')?.textContent || ''`); via != "read from the screenshot" {
		t.Errorf("the answer card says %q, want that it was read from the screenshot", via)
	}
	tb.shot("copilot-screenshot-ocr-en")

	tb.do(chromedp.Click(chromedp.ID("btn-shot")))
	tb.waitFor("the crop dialog with a captured frame", `document.body.dataset.shot === 'open' && document.querySelector('#shot-canvas')?.width > 0`)
	tb.shot("copilot-screenshot-capture")
	tb.do(chromedp.Click(chromedp.ID("shot-send")))
	tb.waitWithin("content for the captured frame", `(() => {
		const c = document.getElementById('current');
		return c.dataset.kind === 'answer' || c.dataset.kind === 'coach';
	})()`, ocrWait)
	if q := tb.current().Question; !strings.Contains(q, "Screenshot") {
		t.Errorf("the captured question shows %q, want the screenshot label", q)
	}
	// Chromium's fake capture (--use-fake-device-for-media-stream) serves
	// getDisplayMedia from its fake camera, which the page's
	// Permissions-Policy (camera=()) reports; a real screen share does not.
	tb.requireClean("camera is not allowed in this document")
}
