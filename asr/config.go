package asr

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Defaults for Config; a zero field takes these.
const (
	defaultWhisperURL       = "http://127.0.0.1:8178"
	defaultCloudModel       = "gpt-4o-mini-transcribe"
	defaultSilenceMs        = 600   // trailing silence that ends an utterance
	defaultMinSpeechMs      = 60    // speech that opens an utterance
	defaultPrerollMs        = 250   // audio kept before the speech onset
	defaultMaxUtteranceMs   = 15000 // speech longer than this is cut
	defaultPartialEveryMs   = 1000  // re-decode period of the open utterance
	defaultRequestTimeoutMs = 10000 // one backend request (queue wait excluded)
	defaultFinalTimeoutMs   = 20000 // one final: queue wait plus the whole chain
	defaultRetryMs          = 2000  // a failing backend is skipped this long
	defaultQueueDepth       = 4     // finals waiting per whisper server
	defaultThresholdDB      = 9.0   // frame energy over the noise floor that counts as speech
	defaultFloorDBFS        = -60.0 // lowest noise floor: quieter frames are never speech
)

// Config is the `asr:` block of the server configuration. A zero field
// means its default, given per field.
type Config struct {
	// WhisperURLs are whisper.cpp servers (their root; /inference is
	// appended). Each decodes one request at a time and gets its own queue.
	// Default [http://127.0.0.1:8178].
	WhisperURLs []string `yaml:"whisper_urls"`
	// Cloud is an optional OpenAI-compatible speech-to-text tried after
	// whisper for finals. Off when Cloud.BaseURL is empty.
	Cloud CloudConfig `yaml:"cloud"`

	// SilenceMs of trailing silence end an utterance. Default 600.
	SilenceMs int `yaml:"silence_ms"`
	// MinSpeechMs of consecutive speech open an utterance. Default 60.
	MinSpeechMs int `yaml:"min_speech_ms"`
	// PrerollMs of audio before the speech onset are kept in the utterance.
	// Default 250.
	PrerollMs int `yaml:"preroll_ms"`
	// MaxUtteranceMs of speech (from the onset) cut an utterance; a new
	// one continues at once. Default 15000.
	MaxUtteranceMs int `yaml:"max_utterance_ms"`
	// PartialEveryMs is how often the open utterance is re-decoded for a
	// partial caption. Default 1000.
	PartialEveryMs int `yaml:"partial_every_ms"`
	// RequestTimeoutMs bounds one backend request, once it is sent.
	// Default 10000.
	RequestTimeoutMs int `yaml:"request_timeout_ms"`
	// FinalTimeoutMs bounds one final caption: queue waits plus every
	// backend of the chain. Default 20000.
	FinalTimeoutMs int `yaml:"final_timeout_ms"`
	// RetryMs is how long a backend that failed twice in a row is skipped
	// before it is tried again. Default 2000.
	RetryMs int `yaml:"retry_ms"`
	// QueueDepth is how many finals may wait for one whisper server before
	// further finals wait for room. Partials are only queued at a server
	// with nothing waiting. Default 4.
	QueueDepth int `yaml:"queue_depth"`

	// ThresholdDB is how far above the adaptive noise floor a frame's
	// energy must be to count as speech. Default 9.
	ThresholdDB float64 `yaml:"vad_threshold_db"`
	// FloorDBFS is the lowest noise floor, in dB below full scale: frames
	// quieter than FloorDBFS+ThresholdDB are never speech. Default -60.
	FloorDBFS float64 `yaml:"vad_floor_dbfs"`
	// MaxZCR, when above zero, rejects frames whose zero-crossing rate
	// (crossings per sample, 0..1) is higher, such as hiss. Default 0: off.
	MaxZCR float64 `yaml:"vad_zcr_max"`

	// HTTPClient carries every backend request. Not from YAML. Default: a
	// client of its own with no overall timeout (requests are bounded by
	// RequestTimeoutMs).
	HTTPClient *http.Client `yaml:"-"`
	// Circuits are the process's shared circuits of these backends (the
	// health center's, fed by its probes and by the pool's own results).
	// Not from YAML. Default nil: each backend's own health alone.
	Circuits Circuits `yaml:"-"`
}

// Circuits is what the pool needs of a health center that keeps one
// circuit per backend, by the pool's names ("whisper@host:port",
// "cloud"). A backend whose circuit is open is tried after the others
// (for a final, after the cloud), and counts as down in the captions
// State; every request's end is reported, so live failures and successes
// meet the probes' results. Implementations never block on I/O.
type Circuits interface {
	// BackendUp reports whether backend's circuit is closed.
	BackendUp(backend string) bool
	// Report records how one request to backend ended: ok, or failed
	// with class ("timeout", "server", "rate_limited", "unavailable").
	Report(backend string, ok bool, class string)
}

// CloudConfig is the optional cloud speech-to-text (OpenAI-compatible
// /v1/audio/transcriptions).
type CloudConfig struct {
	// BaseURL such as https://api.openai.com/v1. Empty: no cloud backend.
	BaseURL string `yaml:"base_url"`
	// APIKey is sent as a bearer token. Never logged.
	APIKey string `yaml:"api_key"`
	// Model defaults to gpt-4o-mini-transcribe.
	Model string `yaml:"model"`
}

// Validate reports the first field that cannot work, by its YAML key.
// Zero values are valid (they mean the defaults).
func (c Config) Validate() error {
	for i, u := range c.WhisperURLs {
		if err := checkURL(u); err != nil {
			return fmt.Errorf("asr: whisper_urls[%d]: %w", i, err)
		}
	}
	if c.Cloud.BaseURL != "" {
		if err := checkURL(c.Cloud.BaseURL); err != nil {
			return fmt.Errorf("asr: cloud.base_url: %w", err)
		}
	}
	ints := []struct {
		key string
		v   int
	}{
		{"silence_ms", c.SilenceMs}, {"min_speech_ms", c.MinSpeechMs},
		{"preroll_ms", c.PrerollMs}, {"max_utterance_ms", c.MaxUtteranceMs},
		{"partial_every_ms", c.PartialEveryMs}, {"request_timeout_ms", c.RequestTimeoutMs},
		{"final_timeout_ms", c.FinalTimeoutMs}, {"retry_ms", c.RetryMs},
		{"queue_depth", c.QueueDepth},
	}
	for _, f := range ints {
		if f.v < 0 {
			return fmt.Errorf("asr: %s: must not be negative, got %d", f.key, f.v)
		}
	}
	r := c.withDefaults()
	if r.MaxUtteranceMs < r.MinSpeechMs+frameMs {
		return fmt.Errorf("asr: max_utterance_ms: %d is shorter than min_speech_ms plus one frame", r.MaxUtteranceMs)
	}
	if c.ThresholdDB < 0 {
		return fmt.Errorf("asr: vad_threshold_db: must not be negative, got %g", c.ThresholdDB)
	}
	if c.FloorDBFS > 0 {
		return fmt.Errorf("asr: vad_floor_dbfs: must be below 0 dBFS, got %g", c.FloorDBFS)
	}
	if c.MaxZCR < 0 || c.MaxZCR > 1 {
		return fmt.Errorf("asr: vad_zcr_max: must be within 0..1, got %g", c.MaxZCR)
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme must be http or https", s)
	}
	if u.Host == "" {
		return errors.New("missing host")
	}
	return nil
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if len(c.WhisperURLs) == 0 {
		c.WhisperURLs = []string{defaultWhisperURL}
	}
	if c.Cloud.Model == "" {
		c.Cloud.Model = defaultCloudModel
	}
	orDefault(&c.SilenceMs, defaultSilenceMs)
	orDefault(&c.MinSpeechMs, defaultMinSpeechMs)
	orDefault(&c.PrerollMs, defaultPrerollMs)
	orDefault(&c.MaxUtteranceMs, defaultMaxUtteranceMs)
	orDefault(&c.PartialEveryMs, defaultPartialEveryMs)
	orDefault(&c.RequestTimeoutMs, defaultRequestTimeoutMs)
	orDefault(&c.FinalTimeoutMs, defaultFinalTimeoutMs)
	orDefault(&c.RetryMs, defaultRetryMs)
	orDefault(&c.QueueDepth, defaultQueueDepth)
	if c.ThresholdDB == 0 {
		c.ThresholdDB = defaultThresholdDB
	}
	if c.FloorDBFS == 0 {
		c.FloorDBFS = defaultFloorDBFS
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	return c
}

func orDefault(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
