package main

import (
	"encoding/base64"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/poise-dev/poise/asr"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// Two speakers at once: the shared tab plays the interviewer and the
// microphone the candidate. The simulated whisper tells the two streams
// apart by their sound: the tab's audio carries a steady marker tone
// (markerHz) under its speech, the microphone's does not.
const (
	tabSays  = "Tell me about a time you handled a conflict at work"
	micSays  = "We moved the cache to Redis last year."
	markerHz = 5000 // a bin of its own at 16 kHz, above most of the speech's energy
	markerA  = 300  // amplitude, about -40 dBFS: the VAD learns it as the noise floor

	speakersWait = 45 * time.Second // two final captions of each speaker, in real time
)

// TestBrowserTwoSpeakers shares a tab (Chromium cannot share a tab's audio
// headless, so the page's getDisplayMedia gets a stream made from a WAV)
// and turns on the microphone (Chromium's fake device, playing micWAV) at
// the same time: the captions name both speakers, and only the tab's
// question is answered.
func TestBrowserTwoSpeakers(t *testing.T) {
	t.Parallel()
	env := newBrowserEnv(t, micWAV)
	judge := &markerJudge{}
	t.Cleanup(func() {
		if t.Failed() {
			judge.log(t)
		}
	})
	sim := vendorsim.New(vendorsim.Options{Transcribe: judge.transcribe, InferenceDelay: 30 * time.Millisecond, TokenDelay: 5 * time.Millisecond})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { sim.Close(); srv.Close() })
	cfg := fmt.Sprintf("l1:\n  vendors:\n    - {name: sim, base_url: %s/v1, api_key: k, model: m}\nasr:\n  whisper_urls: [%s]\nhealth: {interval_ms: 200}\n", srv.URL, srv.URL)
	s := env.startPoise(t, "", "-config", writeFile(t, "speakers.yaml", cfg))

	tabWAV := markedWAV(t, micWAV)
	tb := env.newTab(t)
	tb.openCopilot(s, nil, profile{lang: "en", seniority: "mid", role: "Backend engineer"})
	tb.waitFor("L1", `document.body.dataset.level === 'L1'`)
	js[bool](tb, fakeTabJS(tabWAV))
	tb.do(chromedp.Click(chromedp.ID("btn-tab")))
	tb.waitFor("the tab to play", `document.body.dataset.audio === 'tab'`)
	tb.do(chromedp.Click(chromedp.ID("btn-mic")))
	tb.waitFor("both streams", `['tab+mic', 'mic+tab'].includes(document.body.dataset.audio)`)
	// The tab's WAV lasts 11.7 s and loops; its steady marker keeps the
	// VAD's first utterance open until the VAD has learnt the marker as
	// its noise floor, so two finals of each speaker take one to two
	// passes in real time (11 s on an idle machine), more when a loaded
	// one drops audio: a CI run once saw one final of the tab's in 15 s.
	tb.waitWithin("final captions of both speakers", `(() => {
		const c = [...document.querySelectorAll('#captions .caption.final')];
		return c.filter((e) => e.dataset.label === 'Interviewer').length >= 2 && c.filter((e) => e.dataset.label === 'You').length >= 2;
	})()`, speakersWait)
	tb.waitFor("the tab's question answered", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
	tb.shot("copilot-two-speakers-en")
	tb.do(chromedp.Click(chromedp.ID("btn-stop")))
	tb.waitFor("the audio to stop", `document.body.dataset.audio === ''`)

	type caption struct{ Text, Label string }
	captions := js[[]caption](tb, `[...document.querySelectorAll('#captions .caption.final')].map((e) => ({Text: e.dataset.text, Label: e.dataset.label}))`)
	for _, c := range captions {
		if want := map[string]string{"Interviewer": tabSays, "You": micSays}[c.Label]; c.Text != want {
			t.Errorf("caption %q labelled %q, want %q", c.Text, c.Label, want)
		}
	}
	asked := append(tb.historyQuestions(), tb.current().Question)
	for _, q := range asked {
		if q != tabSays {
			t.Errorf("answered %q: only the interviewer's questions are answered (all: %q)", q, asked)
		}
	}
	if !slices.Contains(asked, tabSays) {
		t.Errorf("the tab's question was not answered (turns %q)", asked)
	}
	tb.requireClean()
}

// markerShare is the share of a clip's 50 ms blocks that must carry the
// marker for the clip to be the tab's. The unmarked WAV has 2 such blocks
// in 234 (fricatives near markerHz), and the microphone's clips, louder
// after Chromium's gain control, up to 5 in 41; a tab's clip keeps the
// marker in every block the browser did not drop, so the bar sits well
// under one to leave room for dropouts on a loaded machine (they arrive
// as silence, and under the old bar of half the blocks they once made a
// tab's clip the microphone's).
const markerShare = 0.35

// markerJudge is the simulated whisper of TestBrowserTwoSpeakers: it
// transcribes each clip by its marker and keeps what it decided, for the
// test's log when a caption comes out wrong.
type markerJudge struct {
	mu        sync.Mutex
	decisions []string
}

// transcribe is the tab's line when the clip carries the marker tone,
// else the microphone's.
func (j *markerJudge) transcribe(wav []byte) string {
	pcm, rate, err := asr.DecodeWAV(wav)
	if err != nil || rate != asr.SampleRate || len(pcm) == 0 {
		return ""
	}
	marked, blocks := markedBlocks(pcm, rate)
	text := micSays
	if float64(marked) >= markerShare*float64(blocks) {
		text = tabSays
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.decisions = append(j.decisions, fmt.Sprintf("%d ms, marker in %d of %d blocks: %q", len(pcm)*1000/rate, marked, blocks, text))
	return text
}

// log writes every decision to t's log.
func (j *markerJudge) log(t *testing.T) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, d := range j.decisions {
		t.Log("simulated whisper:", d)
	}
}

// markedBlocks counts the 50 ms blocks of pcm (a shorter clip is one
// block) whose amplitude at markerHz (Goertzel) is over markerA/3.
func markedBlocks(pcm []int16, rate int) (marked, blocks int) {
	for _, level := range markerLevels(pcm, rate) {
		blocks++
		if level > markerA/3 {
			marked++
		}
	}
	return marked, blocks
}

// markerLevels is the amplitude at markerHz of each 50 ms block of pcm.
func markerLevels(pcm []int16, rate int) []float64 {
	n := min(rate/20, len(pcm))
	w := 2 * math.Pi * markerHz / float64(rate)
	var levels []float64
	for start := 0; n > 0 && start+n <= len(pcm); start += n {
		var s1, s2 float64
		for _, x := range pcm[start : start+n] {
			s1, s2 = float64(x)+2*math.Cos(w)*s1-s2, s1
		}
		power := s1*s1 + s2*s2 - 2*math.Cos(w)*s1*s2
		levels = append(levels, 2*math.Sqrt(max(power, 0))/float64(n))
	}
	return levels
}

// markedWAV returns the WAV at path with the marker tone added.
func markedWAV(t *testing.T, path string) []byte {
	t.Helper()
	pcm, rate := decodeFile(t, path)
	for i := range pcm {
		v := float64(pcm[i]) + markerA*math.Sin(2*math.Pi*markerHz*float64(i)/float64(rate))
		pcm[i] = int16(max(min(v, math.MaxInt16), math.MinInt16))
	}
	if marked, blocks := markedBlocks(pcm, rate); marked < blocks {
		t.Fatalf("the marked WAV carries the marker in %d of its %d blocks", marked, blocks)
	}
	plain, _ := decodeFile(t, path)
	if marked, blocks := markedBlocks(plain, rate); float64(marked) >= markerShare*float64(blocks)/4 {
		t.Fatalf("the unmarked WAV carries the marker in %d of its %d blocks: the marker does not tell the streams apart", marked, blocks)
	}
	return asr.EncodeWAV(pcm, rate)
}

// decodeFile reads the WAV at path: its samples and their rate.
func decodeFile(t *testing.T, path string) ([]int16, int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pcm, rate, err := asr.DecodeWAV(b)
	if err != nil {
		t.Fatal(err)
	}
	return pcm, rate
}

// fakeTabJS replaces the page's getDisplayMedia with a "shared tab": the
// WAV, looped, as its audio track, and a small canvas as its video track.
func fakeTabJS(wav []byte) string {
	return `(() => {
		const bytes = Uint8Array.from(atob('` + base64.StdEncoding.EncodeToString(wav) + `'), (c) => c.charCodeAt(0));
		navigator.mediaDevices.getDisplayMedia = async () => {
			const ctx = new AudioContext();
			const src = ctx.createBufferSource();
			src.buffer = await ctx.decodeAudioData(bytes.buffer.slice(0));
			src.loop = true;
			const dest = ctx.createMediaStreamDestination();
			src.connect(dest);
			src.start();
			if (ctx.state === 'suspended') await ctx.resume();
			const canvas = document.createElement('canvas');
			canvas.width = 64;
			canvas.height = 48;
			canvas.getContext('2d').fillRect(0, 0, 64, 48);
			return new MediaStream([...canvas.captureStream(2).getVideoTracks(), ...dest.stream.getAudioTracks()]);
		};
		return true;
	})()`
}
