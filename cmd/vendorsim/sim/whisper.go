package sim

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// whisper.cpp server's answers to bad input: status 200 and an "error"
// field, exactly as its /inference handler writes them.
const (
	whisperNoFile  = "no 'file' field in the request"
	whisperBadWAV  = "failed to read WAV file"
	whisperLoading = "loading model"
)

// handleInference serves whisper.cpp server's POST /inference: a
// multipart form with a 16 kHz 16-bit WAV in "file" and optional
// response_format, temperature, language and the like. Like whisper.cpp it
// decodes one request at a time; the others queue. Faults are keyed by
// WhisperModel.
func (s *Server) handleInference(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "whisper.cpp")
	form, err := readAudioForm(w, r)
	c := s.begin(WhisperModel, false)
	o := outcomeFailed // also when abortConn unwinds the handler
	defer func() { c.end(o) }()
	f := s.takeFault(WhisperModel)
	writeErr := func() {
		writeJSON(w, f.Status, map[string]string{"error": fmt.Sprintf("%s (simulated by vendorsim)", http.StatusText(f.Status))})
	}
	if pre, handled := s.preamble(w, r, f, 0, writeErr); handled {
		o = pre
		return
	}
	if err := s.acquireWhisper(r); err != nil {
		o = s.abandon(w, err)
		return
	}
	defer func() { <-s.whisperSlot }()

	switch {
	case err != nil || !form.hasFile:
		writeJSON(w, http.StatusOK, map[string]string{"error": whisperNoFile})
		return
	case !validFloat(form.fields, "temperature") || !validFloat(form.fields, "temperature_inc"):
		// whisper.cpp's std::stof throws, and its exception handler answers so.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "500 Internal Server Error\nstof")
		return
	}
	info, err := checkWhisperWAV(form.file)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]string{"error": whisperBadWAV})
		return
	}
	if err := s.sleep(r.Context(), f.inferenceDelay(s.inferenceDelay)); err != nil {
		o = s.abandon(w, err)
		return
	}
	o = writeWhisper(w, form.fields, strings.TrimSpace(s.transcript(form.file, form.fields["language"])), info.seconds())
}

// acquireWhisper takes the decode slot, waiting while another request
// holds it.
func (s *Server) acquireWhisper(r *http.Request) error {
	select {
	case s.whisperSlot <- struct{}{}:
		return nil
	case <-r.Context().Done():
		return r.Context().Err()
	case <-s.done:
		return errClosed
	}
}

func validFloat(fields map[string]string, name string) bool {
	v, ok := fields[name]
	if !ok {
		return true
	}
	_, err := strconv.ParseFloat(strings.TrimSpace(v), 32)
	return err == nil
}

// writeWhisper writes text as whisper.cpp does: one segment, its text
// with a leading space, each segment followed by a newline in plain
// outputs.
func writeWhisper(w http.ResponseWriter, fields map[string]string, text string, seconds float64) outcome {
	segment := " " + text
	temperature, _ := strconv.ParseFloat(fields["temperature"], 64)
	switch fields["response_format"] {
	case "text":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, segment+"\n")
	case "srt":
		w.Header().Set("Content-Type", "application/x-subrip")
		fmt.Fprintf(w, "1\n%s --> %s\n%s\n\n", timestamp(0, ","), timestamp(seconds, ","), segment)
	case "vtt":
		w.Header().Set("Content-Type", "text/vtt")
		fmt.Fprintf(w, "WEBVTT\n\n%s --> %s\n%s\n\n", timestamp(0, "."), timestamp(seconds, "."), segment)
	case "verbose_json":
		writeJSON(w, http.StatusOK, map[string]any{
			"task": "transcribe", "language": "english", "duration": seconds, "text": segment + "\n",
			"segments": []map[string]any{{
				"id": 0, "text": segment, "start": 0.0, "end": seconds, "tokens": []int{}, "words": []any{},
				"temperature": temperature, "avg_logprob": -0.2, "no_speech_prob": 0.01,
			}},
		})
	default: // "json", and anything whisper.cpp does not know
		writeJSON(w, http.StatusOK, map[string]string{"text": segment + "\n"})
	}
	return outcomeCompleted
}
