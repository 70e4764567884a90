package sim

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

const (
	defaultTokenDelay = 20 * time.Millisecond // between stream chunks

	// WhisperModel is the model name that whisper.cpp's POST /inference is
	// counted and faulted under (whisper.cpp has no model field).
	WhisperModel = "whisper"

	// AnyModel is the fault key that applies to every model without a fault
	// of its own; Counters(AnyModel) sums every model.
	AnyModel = "*"
)

// errClosed is returned by waits that Close released.
var errClosed = errors.New("vendorsim: closed")

// Options configures a Server. Zero values mean the documented defaults.
type Options struct {
	TokenDelay      time.Duration // between stream chunks; default 20ms, negative for none
	FirstTokenDelay time.Duration // before headers and the first chunk; default 0; a Fault overrides it per model
	Transcripts     []string      // transcription texts, returned in turn; default: simulated interviewer lines chosen by the audio, marked SimulatedMark
	InferenceDelay  time.Duration // decode delay of transcriptions and whisper /inference; default 0
	// Transcribe, when set, gives the text of each transcription from its
	// audio file (the WAV as uploaded) instead of Transcripts in turn: a
	// test with two audio streams tells them apart by their sound. It must
	// be safe for concurrent use. Default nil.
	Transcribe func(audio []byte) string
	Log        zerolog.Logger
}

// Server is an http.Handler that simulates several vendors at once. Faults
// and counters are keyed by model name. Safe for concurrent use.
type Server struct {
	tokenDelay      time.Duration
	firstTokenDelay time.Duration
	inferenceDelay  time.Duration
	transcripts     []string
	transcribe      func([]byte) string
	log             zerolog.Logger
	mux             *http.ServeMux

	// whisperSlot holds one token: whisper.cpp's server decodes one request
	// at a time behind a mutex, so /inference requests queue here.
	whisperSlot chan struct{}

	done      chan struct{} // closed by Close; releases every wait
	closeOnce sync.Once

	mu             sync.Mutex
	faults         map[string]*faultState // Guarded by mu.
	replies        map[string]string      // Guarded by mu.
	counters       map[string]*Counters   // Guarded by mu.
	models         map[string]struct{}    // models seen or configured; guarded by mu.
	nextTranscript int                    // Guarded by mu.
	changed        chan struct{}          // closed and replaced when counters change; guarded by mu.
}

// New returns a Server with opts resolved to their defaults. Close releases
// requests that are held (stalls, NoAnswer); a Server needs no other cleanup.
func New(opts Options) *Server {
	s := &Server{
		tokenDelay:      opts.TokenDelay,
		firstTokenDelay: opts.FirstTokenDelay,
		inferenceDelay:  opts.InferenceDelay,
		transcribe:      opts.Transcribe,
		log:             opts.Log,
		whisperSlot:     make(chan struct{}, 1),
		done:            make(chan struct{}),
		faults:          make(map[string]*faultState),
		replies:         make(map[string]string),
		counters:        make(map[string]*Counters),
		models:          make(map[string]struct{}),
		changed:         make(chan struct{}),
	}
	switch {
	case s.tokenDelay == 0:
		s.tokenDelay = defaultTokenDelay
	case s.tokenDelay < 0:
		s.tokenDelay = 0
	}
	for _, t := range opts.Transcripts {
		if t != "" {
			s.transcripts = append(s.transcripts, t)
		}
	}
	s.mux = s.routes()
	return s
}

// ServeHTTP serves the simulated vendor APIs and the /_sim control API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// Close releases every model request the Server holds (stalled streams,
// NoAnswer, delays) by closing its connection, as a server going away
// would, so that an http.Server's Shutdown can finish. Model requests that
// arrive later are cut the same way; probes and the control API still
// answer. Close is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
}

func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	for _, prefix := range []string{"/v1", ""} {
		m.HandleFunc("POST "+prefix+"/chat/completions", s.handleChat)
		m.HandleFunc("POST "+prefix+"/embeddings", s.handleEmbeddings)
		m.HandleFunc("POST "+prefix+"/audio/transcriptions", s.handleTranscription)
		m.HandleFunc("GET "+prefix+"/models", s.handleModels)
		m.HandleFunc("GET "+prefix+"/models/{model}", s.handleModel)
	}
	// Azure OpenAI routes: the deployment in the path names the model.
	m.HandleFunc("POST /openai/deployments/{deployment}/chat/completions", s.handleChat)
	m.HandleFunc("POST /openai/deployments/{deployment}/embeddings", s.handleEmbeddings)
	m.HandleFunc("POST /openai/deployments/{deployment}/audio/transcriptions", s.handleTranscription)

	m.HandleFunc("POST /inference", s.handleInference)
	m.HandleFunc("GET /health", s.handleHealth)

	m.HandleFunc("GET /_sim/faults", s.handleListFaults)
	m.HandleFunc("POST /_sim/faults", s.handleSetFault)
	m.HandleFunc("DELETE /_sim/faults", s.handleClearFaults)
	m.HandleFunc("GET /_sim/counters", s.handleCounters)
	m.HandleFunc("POST /_sim/reset", s.handleReset)
	m.HandleFunc("POST /_sim/reply", s.handleSetReply)

	m.HandleFunc("/", handleNotFound)
	return m
}

// sleep waits d, or until ctx is done (returning ctx.Err()) or the Server is
// closed (returning errClosed).
func (s *Server) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return s.alive(ctx)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return errClosed
	}
}

// hold waits until ctx is done (ctx.Err()) or the Server is closed (errClosed).
func (s *Server) hold(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return errClosed
	}
}

// alive reports ctx.Err() or errClosed without waiting.
func (s *Server) alive(ctx context.Context) error {
	select {
	case <-s.done:
		return errClosed
	default:
		return ctx.Err()
	}
}

// SetReply sets the text that model answers with, for every question. An
// empty text restores the default simulated reply.
func (s *Server) SetReply(model, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if text == "" {
		delete(s.replies, model)
		return
	}
	s.replies[model] = text
	s.noteModelLocked(model)
}

// reply is the full text model answers question with.
func (s *Server) reply(model, question string) string {
	s.mu.Lock()
	text, ok := s.replies[model]
	s.mu.Unlock()
	if ok {
		return text
	}
	return defaultReply(model, question)
}

// transcript returns the text of a transcription of clip: Transcribe's,
// else the next scripted text, round robin; without a script, the
// simulated transcript of clip in lang.
func (s *Server) transcript(clip []byte, lang string) string {
	if s.transcribe != nil {
		return s.transcribe(clip)
	}
	if len(s.transcripts) == 0 {
		return simulatedTranscript(clip, lang)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.transcripts[s.nextTranscript%len(s.transcripts)]
	s.nextTranscript = (s.nextTranscript + 1) % len(s.transcripts)
	return t
}
