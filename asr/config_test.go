package asr

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestConfigYAMLKeys(t *testing.T) {
	t.Parallel()
	src := `
whisper_urls: [http://10.0.0.1:8178, http://10.0.0.2:8178]
cloud: {base_url: "https://api.example.com/v1", api_key: k, model: whisper-1}
silence_ms: 700
min_speech_ms: 80
preroll_ms: 300
max_utterance_ms: 12000
partial_every_ms: 500
request_timeout_ms: 4000
final_timeout_ms: 9000
retry_ms: 1000
queue_depth: 2
vad_threshold_db: 12
vad_floor_dbfs: -50
vad_zcr_max: 0.3
`
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Config{
		WhisperURLs: []string{"http://10.0.0.1:8178", "http://10.0.0.2:8178"},
		Cloud:       CloudConfig{BaseURL: "https://api.example.com/v1", APIKey: "k", Model: "whisper-1"},
		SilenceMs:   700, MinSpeechMs: 80, PrerollMs: 300, MaxUtteranceMs: 12000, PartialEveryMs: 500,
		RequestTimeoutMs: 4000, FinalTimeoutMs: 9000, RetryMs: 1000, QueueDepth: 2,
		ThresholdDB: 12, FloorDBFS: -50, MaxZCR: 0.3,
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	if err := (Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
	d := Config{}.withDefaults()
	if len(d.WhisperURLs) != 1 || d.WhisperURLs[0] != "http://127.0.0.1:8178" ||
		d.Cloud.Model != "gpt-4o-mini-transcribe" || d.SilenceMs != 600 || d.MinSpeechMs != 60 ||
		d.PrerollMs != 250 || d.MaxUtteranceMs != 15000 || d.PartialEveryMs != 1000 || d.HTTPClient == nil {
		t.Fatalf("defaults: %+v", d)
	}
}

func TestConfigValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    Config
		key  string
	}{
		{"bad whisper url", Config{WhisperURLs: []string{"ftp://x"}}, "whisper_urls[0]"},
		{"no host", Config{WhisperURLs: []string{"http://"}}, "whisper_urls[0]"},
		{"bad cloud url", Config{Cloud: CloudConfig{BaseURL: "::"}}, "cloud.base_url"},
		{"negative silence", Config{SilenceMs: -1}, "silence_ms"},
		{"negative queue", Config{QueueDepth: -2}, "queue_depth"},
		{"cut shorter than onset", Config{MaxUtteranceMs: 50}, "max_utterance_ms"},
		{"positive floor", Config{FloorDBFS: 3}, "vad_floor_dbfs"},
		{"zcr above 1", Config{MaxZCR: 1.5}, "vad_zcr_max"},
		{"negative threshold", Config{ThresholdDB: -1}, "vad_threshold_db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("err = %v, want one naming %s", err, tt.key)
			}
		})
	}
}
