package sim

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// speechWAV is a 16 kHz mono WAV of pcm followed by pad samples of silence.
func speechWAV(pcm []int16, pad int) []byte {
	wav := makeWAV(float64(len(pcm)+pad)/whisperRate, whisperRate, 1, 16)
	data := wav[len(wav)-2*(len(pcm)+pad):]
	clear(data)
	for i, s := range pcm {
		binary.LittleEndian.PutUint16(data[2*i:], uint16(s))
	}
	return wav
}

// noise is n samples of seeded random audio.
func noise(seed uint64, n int) []int16 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(rng.IntN(8000) - 4000)
	}
	return out
}

// inferText posts wav to /inference as whisper.cpp's JSON and returns the
// text, checking that the body is exactly whisper.cpp's {"text": …}.
func inferText(t *testing.T, h *harness, wav []byte, lang string) string {
	t.Helper()
	fields := map[string]string{"response_format": "json"}
	if lang != "" {
		fields["language"] = lang
	}
	status, _, body := do(t, h.srv.Client(), inferenceRequest(t, testContext(t), h.srv.URL, wav, fields))
	var got map[string]string
	if err := json.Unmarshal([]byte(body), &got); status != 200 || err != nil || len(got) != 1 {
		t.Fatalf("inference: %d %s (%v)", status, body, err)
	}
	text, ok := strings.CutPrefix(got["text"], " ")
	if !ok || !strings.HasSuffix(text, "\n") {
		t.Fatalf("text %q is not whisper.cpp's one segment (leading space, trailing newline)", got["text"])
	}
	return strings.TrimSuffix(text, "\n")
}

// TestSimulatedCaptionsVary: without a script, the simulated whisper.cpp
// says a marked interviewer line chosen by the audio: different utterances
// spread over the lines, and every re-decode of one utterance (growing
// partials, the padded final) says the same line.
func TestSimulatedCaptionsVary(t *testing.T) {
	h := newHarness(t, Options{})
	seen := map[string]bool{}
	for seed := range uint64(30) {
		utt := noise(seed, 3*whisperRate)
		text := inferText(t, h, speechWAV(utt, 0), "en")
		line, ok := strings.CutPrefix(text, SimulatedMark+" ")
		if !ok || !slices.Contains(interviewerLines["en"], line) {
			t.Fatalf("caption %q is not a marked interviewer line", text)
		}
		seen[line] = true
		for _, n := range []int{whisperRate, 2 * whisperRate} {
			if partial := inferText(t, h, speechWAV(utt[:n], 0), "en"); partial != text {
				t.Fatalf("the partial of %d samples says %q, the whole utterance %q", n, partial, text)
			}
		}
		if padded := inferText(t, h, speechWAV(utt, whisperRate/2), "en"); padded != text {
			t.Fatalf("the utterance with trailing silence says %q, without %q", padded, text)
		}
	}
	if len(seen) < len(interviewerLines["en"])/2 {
		t.Errorf("30 utterances said %d distinct lines, want at least %d", len(seen), len(interviewerLines["en"])/2)
	}
}

// TestSimulatedCaptionsFollowLanguage: a Chinese request hears Chinese
// lines, on whisper.cpp and on the OpenAI transcription route.
func TestSimulatedCaptionsFollowLanguage(t *testing.T) {
	h := newHarness(t, Options{})
	wav := speechWAV(noise(1, whisperRate), 0)
	zh := inferText(t, h, wav, "zh")
	if line, ok := strings.CutPrefix(zh, SimulatedMark+" "); !ok || !slices.Contains(interviewerLines["zh"], line) {
		t.Errorf("zh caption %q is not a marked Chinese line", zh)
	}
	tr, err := h.client.Audio.Transcriptions.New(testContext(t), openai.AudioTranscriptionNewParams{
		File:     openai.File(bytes.NewReader(wav), "clip.wav", "audio/wav"),
		Model:    openai.AudioModelGPT4oMiniTranscribe,
		Language: openai.String("zh"),
	})
	if err != nil || tr.Text != zh {
		t.Errorf("cloud transcription of the same clip = %q, %v; whisper said %q", tr.Text, err, zh)
	}
}
