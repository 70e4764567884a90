package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"strings"
)

const (
	maxAudioBody     = 25 << 20 // bytes, OpenAI's upload limit
	whisperRate      = 16000    // Hz; whisper.cpp reads nothing else
	bytesPerSecond16 = 2 * whisperRate
)

// wavInfo is what the Server reads from a WAV header.
type wavInfo struct {
	rate     int
	channels int
	bits     int
	samples  int    // per channel
	data     []byte // the data chunk
}

func (w wavInfo) seconds() float64 { return float64(w.samples) / float64(w.rate) }

var errNotWAV = errors.New("vendorsim: not a WAV file")

// parseWAV reads a RIFF/WAVE header and the size of its data chunk.
func parseWAV(b []byte) (wavInfo, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return wavInfo{}, errNotWAV
	}
	var info wavInfo
	haveFmt := false
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:p+8]))
		body := b[p+8:]
		switch id {
		case "fmt ":
			if size < 16 || len(body) < 16 {
				return wavInfo{}, errNotWAV
			}
			info.channels = int(binary.LittleEndian.Uint16(body[2:4]))
			info.rate = int(binary.LittleEndian.Uint32(body[4:8]))
			info.bits = int(binary.LittleEndian.Uint16(body[14:16]))
			haveFmt = true
		case "data":
			if !haveFmt || info.channels == 0 || info.bits < 8 {
				return wavInfo{}, errNotWAV
			}
			size = min(size, len(body)) // streamed WAVs carry 0xFFFFFFFF
			info.samples = size / (info.channels * info.bits / 8)
			info.data = body[:size]
			return info, nil
		}
		p += 8 + size + size%2 // chunks are padded to even sizes
	}
	return wavInfo{}, errNotWAV
}

// checkWhisperWAV applies whisper.cpp's read_wav rules: 16 kHz, mono or
// stereo, 16-bit.
func checkWhisperWAV(b []byte) (wavInfo, error) {
	info, err := parseWAV(b)
	if err != nil {
		return info, err
	}
	if info.rate != whisperRate || (info.channels != 1 && info.channels != 2) || info.bits != 16 {
		return info, fmt.Errorf("vendorsim: WAV must be 16 kHz 16-bit mono or stereo, got %d Hz %d-bit %d channels", info.rate, info.bits, info.channels)
	}
	return info, nil
}

// audioForm is a parsed multipart upload.
type audioForm struct {
	fields   map[string]string
	file     []byte
	filename string
	hasFile  bool
}

// readAudioForm reads a multipart form with an audio part named "file".
func readAudioForm(w http.ResponseWriter, r *http.Request) (audioForm, error) {
	form := audioForm{fields: make(map[string]string)}
	r.Body = http.MaxBytesReader(w, r.Body, maxAudioBody)
	mr, err := r.MultipartReader()
	if err != nil {
		return form, fmt.Errorf("vendorsim: read multipart: %w", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return form, fmt.Errorf("vendorsim: read multipart: %w", err)
		}
		if err := form.add(part); err != nil {
			return form, err
		}
	}
	_, _ = io.Copy(io.Discard, r.Body) // read to the end, so the server notices a client that leaves
	return form, nil
}

func (f *audioForm) add(part *multipart.Part) error {
	defer part.Close()
	b, err := io.ReadAll(part)
	if err != nil {
		return fmt.Errorf("vendorsim: read part %q: %w", part.FormName(), err)
	}
	if part.FormName() == "file" {
		f.file, f.filename, f.hasFile = b, part.FileName(), true
		return nil
	}
	f.fields[part.FormName()] = string(b)
	return nil
}

// handleTranscription serves OpenAI's POST /v1/audio/transcriptions with
// the scripted transcripts, or simulated ones (transcript).
func (s *Server) handleTranscription(w http.ResponseWriter, r *http.Request) {
	setRequestID(w)
	form, err := readAudioForm(w, r)
	model := modelOf(r, form.fields["model"])
	c := s.begin(model, false)
	o := outcomeFailed // also when abortConn unwinds the handler
	defer func() { c.end(o) }()
	switch {
	case err != nil:
		writeAPIError(w, http.StatusBadRequest, badRequest("Could not parse multipart form", ""))
		return
	case model == "":
		writeAPIError(w, http.StatusBadRequest, badRequest("you must provide a model parameter", "model"))
		return
	case !form.hasFile || len(form.file) == 0:
		writeAPIError(w, http.StatusBadRequest, badRequest("Missing required parameter: 'file'.", "file"))
		return
	}
	f := s.takeFault(model)
	if pre, handled := s.preamble(w, r, f, 0, func() { writeFault(w, model, f, 0) }); handled {
		o = pre
		return
	}
	if err := s.sleep(r.Context(), f.inferenceDelay(s.inferenceDelay)); err != nil {
		o = s.abandon(w, err)
		return
	}
	seconds := float64(len(form.file)) / bytesPerSecond16
	if info, err := parseWAV(form.file); err == nil {
		seconds = info.seconds()
	}
	text := strings.TrimSpace(s.transcript(form.file, form.fields["language"]))
	o = writeTranscription(w, form.fields["response_format"], model, text, seconds)
}

// writeTranscription writes text in an OpenAI response_format.
func writeTranscription(w http.ResponseWriter, format, model, text string, seconds float64) outcome {
	switch format {
	case "", "json":
		writeJSON(w, http.StatusOK, map[string]any{"text": text, "usage": transcriptionUsage(model, text, seconds)})
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text+"\n")
	case "verbose_json":
		writeJSON(w, http.StatusOK, map[string]any{
			"task": "transcribe", "language": "english", "duration": seconds, "text": text,
			"segments": []map[string]any{{
				"id": 0, "seek": 0, "start": 0.0, "end": seconds, "text": " " + text, "tokens": []int{},
				"temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.2, "no_speech_prob": 0.01,
			}},
			"usage": map[string]any{"type": "duration", "seconds": int(math.Ceil(seconds))},
		})
	case "srt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "1\n%s --> %s\n%s\n\n", timestamp(0, ","), timestamp(seconds, ","), text)
	case "vtt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "WEBVTT\n\n%s --> %s\n%s\n\n", timestamp(0, "."), timestamp(seconds, "."), text)
	default:
		writeAPIError(w, http.StatusBadRequest, badRequest(fmt.Sprintf("Invalid value: '%s'. Supported values are: 'json', 'text', 'srt', 'verbose_json', and 'vtt'.", format), "response_format"))
		return outcomeFailed
	}
	return outcomeCompleted
}

// transcriptionUsage is billed by duration for whisper models and by
// tokens for the gpt-4o transcribe models, as OpenAI reports it.
func transcriptionUsage(model, text string, seconds float64) map[string]any {
	if strings.HasPrefix(model, "whisper") {
		return map[string]any{"type": "duration", "seconds": int(math.Ceil(seconds))}
	}
	audio := int(math.Ceil(seconds * 10)) // about ten audio tokens a second
	out := estimateTokens(text)
	return map[string]any{
		"type": "tokens", "input_tokens": audio, "output_tokens": out, "total_tokens": audio + out,
		"input_token_details": map[string]any{"text_tokens": 0, "audio_tokens": audio},
	}
}

// timestamp formats seconds as HH:MM:SS<sep>mmm.
func timestamp(seconds float64, sep string) string {
	ms := int(math.Round(seconds * 1000))
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}
