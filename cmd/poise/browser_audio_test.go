package main

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// micWAV is what Chromium's fake microphone plays, in a loop: three
// spoken English questions (asr/testdata, made with espeak-ng).
const micWAV = "../../asr/testdata/en_questions.wav"

// speechWait bounds a condition that waits on the fake microphone's speech
// in real time: two final captions of micWAV take 8 s on an idle machine
// (its questions end at 2.4 s and 7.1 s), more when a loaded one drops audio.
const speechWait = 30 * time.Second

// testMicCaptions clicks "Use microphone": Chromium's fake device plays the
// WAV, the page's AudioWorklet sends 16 kHz PCM16 frames, poise -demo's
// whisper (vendorsim) transcribes each utterance, and the page shows the
// caption and then the answer the server started on its own.
func testMicCaptions(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	tb.openCopilot(s, nil, profile{lang: "en", seniority: "mid", role: "Backend engineer"})
	tb.do(chromedp.Click(chromedp.ID("btn-mic")))
	tb.waitFor("the microphone to run", `document.body.dataset.audio === 'mic'`)
	tb.waitFor("a final caption", `!!document.querySelector('#captions .caption.final')`)
	caption := js[string](tb, `document.querySelector('#captions .caption.final').dataset.text`) // without the "simulated" tag
	tb.waitFor("an answer to the spoken question", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	if got := tb.current(); got.Question != caption {
		t.Errorf("the answer is for %q, want the caption %q", got.Question, caption)
	}
	tb.shot("copilot-mic-en")
	tb.do(chromedp.Click(chromedp.ID("btn-stop")))
	tb.waitFor("the microphone to stop", `document.body.dataset.audio === ''`)
	tb.requireClean()
}
