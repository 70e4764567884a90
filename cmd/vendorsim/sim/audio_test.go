package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

func TestTranscriptionWithOpenAIClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Transcripts: []string{"What is your greatest weakness?", "Why should we hire you?"}})
	ctx := testContext(t)
	wav := makeWAV(1.5, 16000, 1, 16)
	var got []string
	for _, model := range []openai.AudioModel{openai.AudioModelWhisper1, openai.AudioModelGPT4oMiniTranscribe, openai.AudioModelWhisper1} {
		tr, err := h.client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
			File:           openai.File(bytes.NewReader(wav), "clip.wav", "audio/wav"),
			Model:          model,
			Language:       openai.String("en"),
			ResponseFormat: openai.AudioResponseFormatJSON,
		})
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		got = append(got, tr.Text)
		if model == openai.AudioModelWhisper1 && (tr.Usage.Type != "duration" || tr.Usage.Seconds != 2) {
			t.Errorf("whisper-1 usage = %+v, want 2 seconds", tr.Usage)
		}
		if model == openai.AudioModelGPT4oMiniTranscribe && (tr.Usage.Type != "tokens" || tr.Usage.OutputTokens == 0) {
			t.Errorf("%s usage = %+v, want tokens", model, tr.Usage)
		}
	}
	want := []string{"What is your greatest weakness?", "Why should we hire you?", "What is your greatest weakness?"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("transcripts = %q, want %q in turn", got, want)
	}
	if c := h.waitCounters(t, "whisper-1", settled); c != (Counters{Requests: 2, Completed: 2}) {
		t.Errorf("counters = %+v", c)
	}
}

func TestTranscriptionFormats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	ctx := testContext(t)
	var text string
	err := h.client.Post(ctx, "audio/transcriptions", openai.AudioTranscriptionNewParams{
		File:           openai.File(bytes.NewReader(makeWAV(0.2, 16000, 1, 16)), "clip.wav", "audio/wav"),
		Model:          openai.AudioModelWhisper1,
		ResponseFormat: openai.AudioResponseFormatText,
	}, &text)
	if err != nil || !strings.HasPrefix(text, SimulatedMark+" ") || !strings.HasSuffix(text, "\n") {
		t.Errorf("text format: %q, %v", text, err)
	}
	tr, err := h.client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File:  openai.File(strings.NewReader("not audio"), "clip.bin", "application/octet-stream"),
		Model: openai.AudioModelWhisper1,
	})
	if err != nil || tr.Text != simulatedTranscript([]byte("not audio"), "") {
		t.Errorf("non-WAV upload: %+v, %v", tr, err)
	}
}

func TestWhisperInference(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Transcripts: []string{"  Tell me about your last project.  "}})
	ctx := testContext(t)
	wav := makeWAV(2, 16000, 1, 16)

	req := inferenceRequest(t, ctx, h.srv.URL, wav, map[string]string{"response_format": "json", "temperature": "0.0", "temperature_inc": "0.2"})
	status, ctype, body := do(t, h.srv.Client(), req)
	if status != 200 || ctype != "application/json" || body != `{"text":" Tell me about your last project.\n"}` {
		t.Errorf("json: %d %q %s", status, ctype, body)
	}

	req = inferenceRequest(t, ctx, h.srv.URL, wav, map[string]string{"response_format": "text"})
	if status, ctype, body = do(t, h.srv.Client(), req); status != 200 || ctype != "text/html; charset=utf-8" || body != " Tell me about your last project.\n" {
		t.Errorf("text: %d %q %q", status, ctype, body)
	}

	req = inferenceRequest(t, ctx, h.srv.URL, wav, map[string]string{"response_format": "verbose_json"})
	_, _, body = do(t, h.srv.Client(), req)
	var v struct {
		Duration float64 `json:"duration"`
		Text     string  `json:"text"`
		Segments []struct {
			End float64 `json:"end"`
		} `json:"segments"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.Duration != 2 || len(v.Segments) != 1 || v.Segments[0].End != 2 {
		t.Errorf("verbose_json: %v %s", err, body)
	}
	if c := h.waitCounters(t, WhisperModel, settled); c != (Counters{Requests: 3, Completed: 3}) {
		t.Errorf("counters = %+v", c)
	}
}

func TestWhisperRejectsLikeWhisperCpp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	ctx := testContext(t)
	tests := []struct {
		name     string
		wav      []byte
		fields   map[string]string
		status   int
		wantBody string
	}{
		{"no file", nil, map[string]string{"response_format": "json"}, 200, `{"error":"no 'file' field in the request"}`},
		{"not a WAV", []byte("ID3 mp3 data"), nil, 200, `{"error":"failed to read WAV file"}`},
		{"8 kHz", makeWAV(1, 8000, 1, 16), nil, 200, `{"error":"failed to read WAV file"}`},
		{"8-bit", makeWAV(1, 16000, 1, 8), nil, 200, `{"error":"failed to read WAV file"}`},
		{"bad temperature", makeWAV(1, 16000, 1, 16), map[string]string{"temperature": "warm"}, 500, "500 Internal Server Error\nstof"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := do(t, h.srv.Client(), inferenceRequest(t, ctx, h.srv.URL, tt.wav, tt.fields))
			if status != tt.status || body != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", status, body, tt.status, tt.wantBody)
			}
		})
	}
	status, _, _ := do(t, h.srv.Client(), inferenceRequest(t, ctx, h.srv.URL, makeWAV(1, 16000, 2, 16), nil))
	if status != 200 {
		t.Errorf("stereo 16 kHz WAV: status %d", status)
	}
}

func TestWhisperFaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	ctx := testContext(t)
	h.sim.SetFault(WhisperModel, Fault{Status: 503, FailNext: 1})
	status, ctype, body := do(t, h.srv.Client(), inferenceRequest(t, ctx, h.srv.URL, makeWAV(1, 16000, 1, 16), nil))
	if status != 503 || ctype != "application/json" || !strings.Contains(body, `"error"`) {
		t.Errorf("fault: %d %q %s", status, ctype, body)
	}
	status, _, body = do(t, h.srv.Client(), inferenceRequest(t, ctx, h.srv.URL, makeWAV(1, 16000, 1, 16), nil))
	if status != 200 || !strings.Contains(body, `"text"`) {
		t.Errorf("after FailNext: %d %s", status, body)
	}
}

func TestParseWAV(t *testing.T) {
	t.Parallel()
	info, err := parseWAV(makeWAV(0.5, 16000, 2, 16))
	if len(info.data) != 32000 {
		t.Errorf("parseWAV data chunk is %d bytes, want 32000", len(info.data))
	}
	if err != nil || [4]int{info.rate, info.channels, info.bits, info.samples} != [4]int{16000, 2, 16, 8000} {
		t.Errorf("parseWAV = %+v, %v", info, err)
	}
	for _, bad := range [][]byte{nil, []byte("RIFF"), []byte("RIFF\x00\x00\x00\x00WAVEdata\xff\xff\xff\xff")} {
		if _, err := parseWAV(bad); err == nil {
			t.Errorf("parseWAV(%q) accepted", bad)
		}
	}
}

func FuzzParseWAV(f *testing.F) {
	f.Add(makeWAV(0.01, 16000, 1, 16))
	f.Add([]byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := parseWAV(b)
		if err == nil && (info.samples < 0 || info.channels == 0) {
			t.Errorf("accepted %+v", info)
		}
	})
}
