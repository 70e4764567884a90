package main

import (
	"encoding/base64"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"slices"
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
)

// TestBrowserTwoSpeakers shares a tab (Chromium cannot share a tab's audio
// headless, so the page's getDisplayMedia gets a stream made from a WAV)
// and turns on the microphone (Chromium's fake device, playing micWAV) at
// the same time: the captions name both speakers, and only the tab's
// question is answered.
func TestBrowserTwoSpeakers(t *testing.T) {
	t.Parallel()
	env := newBrowserEnv(t, micWAV)
	sim := vendorsim.New(vendorsim.Options{Transcribe: transcribeByMarker, InferenceDelay: 30 * time.Millisecond, TokenDelay: 5 * time.Millisecond})
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
	tb.waitFor("final captions of both speakers", `(() => {
		const c = [...document.querySelectorAll('#captions .caption.final')];
		return c.filter((e) => e.dataset.label === 'Interviewer').length >= 2 && c.filter((e) => e.dataset.label === 'You').length >= 2;
	})()`)
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

// transcribeByMarker is the simulated whisper's transcription: the tab's
// line when the clip carries the marker tone, else the microphone's.
func transcribeByMarker(wav []byte) string {
	pcm, rate, err := asr.DecodeWAV(wav)
	if err != nil || rate != asr.SampleRate || len(pcm) == 0 {
		return ""
	}
	if markerLevel(pcm, rate) > markerA/3 {
		return tabSays
	}
	return micSays
}

// markerLevel is the median, over 50 ms blocks, of the amplitude at
// markerHz (Goertzel): a steady tone keeps it, speech does not.
func markerLevel(pcm []int16, rate int) float64 {
	n := rate / 20
	w := 2 * math.Pi * markerHz / float64(rate)
	var levels []float64
	for start := 0; start+n <= len(pcm); start += n {
		var s1, s2 float64
		for _, x := range pcm[start : start+n] {
			s1, s2 = float64(x)+2*math.Cos(w)*s1-s2, s1
		}
		power := s1*s1 + s2*s2 - 2*math.Cos(w)*s1*s2
		levels = append(levels, 2*math.Sqrt(max(power, 0))/float64(n))
	}
	if len(levels) == 0 {
		return 0
	}
	slices.Sort(levels)
	return levels[len(levels)/2]
}

// markedWAV returns the WAV at path with the marker tone added.
func markedWAV(t *testing.T, path string) []byte {
	t.Helper()
	pcm, rate := decodeFile(t, path)
	for i := range pcm {
		v := float64(pcm[i]) + markerA*math.Sin(2*math.Pi*markerHz*float64(i)/float64(rate))
		pcm[i] = int16(max(min(v, math.MaxInt16), math.MinInt16))
	}
	if level := markerLevel(pcm, rate); level < markerA/2 {
		t.Fatalf("the marked WAV's marker level is %.0f", level)
	}
	plain, _ := decodeFile(t, path)
	if level := markerLevel(plain, rate); level > markerA/6 {
		t.Fatalf("the unmarked WAV's marker level is %.0f: the marker does not tell the streams apart", level)
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
