package health

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
)

// maxProbeBody bounds how much of a probe's answer is read and dropped.
const maxProbeBody = 64 << 10 // bytes

// probePrompt is the completion probe's whole conversation; with
// max_tokens 1 it costs about ten prompt tokens and one completion token.
const probePrompt = "Reply with OK."

// Probe is one backend's health check. Check returns nil when the backend
// is healthy; it must return when ctx is done.
type Probe struct {
	Name  string      // the backend name, as the engine reports it
	Level level.Level // L1, L2 or L3; level.None for a backend of no level (a gateway endpoint, ASR)
	Check func(ctx context.Context) error
	// Timeout bounds one check when it is longer than the default: half
	// the probe interval, at most maxProbeTimeout.
	Timeout time.Duration
}

// ListProbe checks an OpenAI-compatible server with GET {baseURL}/models,
// which OpenAI, Azure's v1 API, vLLM, llama.cpp and vendorsim all serve.
// Any 2xx passes. It costs no tokens, but a model list stays up through
// many partial outages (completions failing with 503, an exhausted
// quota), so it is the operator's choice (probe: list), not the default.
func ListProbe(name string, lvl level.Level, baseURL, apiKey string, hc *http.Client) Probe {
	url := strings.TrimRight(baseURL, "/") + "/models"
	return Probe{Name: name, Level: lvl, Check: func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		resp, err := do(hc, req, apiKey)
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		defer drain(resp)
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("tiers: probe %s: list status %d", name, resp.StatusCode)
		}
		return nil
	}}
}

// CompletionProbe checks an OpenAI-compatible chat model the way the
// engine and the gateway use it: a one-token streamed completion
// (max_tokens 1, a fixed tiny prompt) must send its first chunk within
// firstToken. A model that lists itself but fails or stalls its
// completions therefore fails its probe.
func CompletionProbe(name string, lvl level.Level, ep upstream.Endpoint, firstToken time.Duration, hc *http.Client) Probe {
	url := strings.TrimRight(ep.BaseURL, "/") + "/chat/completions"
	body, _ := json.Marshal(map[string]any{"model": ep.Model, "stream": true, "max_tokens": 1,
		"messages": []map[string]string{{"role": "user", "content": probePrompt}}})
	return Probe{Name: name, Level: lvl, Timeout: firstToken, Check: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, firstToken)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := do(hc, req, ep.APIKey)
		if err != nil {
			return fmt.Errorf("tiers: probe %s: first token: %w", name, err)
		}
		defer resp.Body.Close() // not drained: the one chunk is all we wait for
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("tiers: probe %s: completion status %d", name, resp.StatusCode)
		}
		line, err := bufio.NewReader(io.LimitReader(resp.Body, maxProbeBody)).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "data:") {
			return fmt.Errorf("tiers: probe %s: no first chunk within %v: %v", name, firstToken, err)
		}
		return nil
	}}
}

// silenceMS is the length of the ASR probes' silent clip.
const silenceMS = 500

// audioProbeTimeout bounds one ASR probe. A decode takes its time
// whatever the health interval (half of which bounds other probes): a
// whisper server decoding 200 ms per request must not fail every probe
// of a 200 ms interval, which would open its circuit while it answers
// every caption.
const audioProbeTimeout = maxProbeTimeout

// silentWAV is a canonical 16 kHz mono PCM16 WAV of silenceMS of silence.
func silentWAV() []byte {
	const rate = 16000
	data := rate * 2 * silenceMS / 1000
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + data))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))
	le(uint16(1))
	le(uint32(rate))
	le(uint32(rate * 2))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(data))
	b.Write(make([]byte, data))
	return b.Bytes()
}

// WhisperProbe checks a whisper.cpp server by posting a short silent WAV
// to {url}/inference, as the captions do; a 200 with JSON passes.
func WhisperProbe(name, url string, hc *http.Client) Probe {
	url = strings.TrimRight(url, "/")
	if !strings.HasSuffix(url, "/inference") {
		url += "/inference"
	}
	return audioProbe(name, url, "", nil, hc)
}

// TranscriptionProbe checks an OpenAI-compatible speech-to-text service
// (the captions' cloud backend) by transcribing a short silent WAV with
// POST {baseURL}/audio/transcriptions.
func TranscriptionProbe(name, baseURL, apiKey, model string, hc *http.Client) Probe {
	url := strings.TrimRight(baseURL, "/") + "/audio/transcriptions"
	return audioProbe(name, url, apiKey, [][2]string{{"model", model}}, hc)
}

func audioProbe(name, url, apiKey string, fields [][2]string, hc *http.Client) Probe {
	wav := silentWAV()
	return Probe{Name: name, Level: level.None, Timeout: audioProbeTimeout, Check: func(ctx context.Context) error {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		part, err := w.CreateFormFile("file", "probe.wav")
		if err == nil {
			_, err = part.Write(wav)
		}
		for _, f := range append(fields, [2]string{"response_format", "json"}) {
			if err == nil {
				err = w.WriteField(f[0], f[1])
			}
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &buf)
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		req.Header.Set("Content-Type", w.FormDataContentType())
		resp, err := do(hc, req, apiKey)
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		defer drain(resp)
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("tiers: probe %s: status %d", name, resp.StatusCode)
		}
		var v struct {
			Error any `json:"error"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, maxProbeBody)).Decode(&v); err != nil || v.Error != nil {
			return fmt.Errorf("tiers: probe %s: no transcript: %v", name, err)
		}
		return nil
	}}
}

func do(hc *http.Client, req *http.Request, apiKey string) (*http.Response, error) {
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	return hc.Do(req)
}

// drain reads a little of resp's body, so the connection is reused, and
// closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxProbeBody))
	resp.Body.Close()
}
