package asr

import (
	"bytes"
	"context"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const (
	cloudName          = "cloud"
	maxCloudInFlight   = 16 // concurrent cloud requests per process
	cloudClipName      = "clip.wav"
	cloudClipMediaType = "audio/wav"
)

// cloud is the optional OpenAI-compatible speech-to-text after whisper.
type cloud struct {
	client openai.Client
	model  string
	health health
	slots  chan struct{} // buffered (maxCloudInFlight): a token per request
}

func newCloud(cfg Config) *cloud {
	c := openai.NewClient(
		option.WithBaseURL(cfg.Cloud.BaseURL),
		option.WithAPIKey(cfg.Cloud.APIKey), // explicit, so OPENAI_API_KEY never leaks in
		option.WithMaxRetries(0),            // the chain is the retry
		option.WithHTTPClient(cfg.HTTPClient),
	)
	return &cloud{client: c, model: cfg.Cloud.Model, slots: make(chan struct{}, maxCloudInFlight)}
}

// transcribe posts wav to /audio/transcriptions. It blocks for a request
// slot and the answer, bounded by ctx and the request timeout.
func (c *cloud) transcribe(ctx context.Context, p *Pool, wav []byte, lang string) (string, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-c.slots }()
	rctx, cancel := context.WithTimeout(ctx, p.requestTimeout)
	defer cancel()
	params := openai.AudioTranscriptionNewParams{
		File:           openai.File(bytes.NewReader(wav), cloudClipName, cloudClipMediaType),
		Model:          openai.AudioModel(c.model),
		ResponseFormat: openai.AudioResponseFormatJSON,
	}
	if lang != "" && lang != "auto" {
		params.Language = openai.String(lang)
	}
	start := time.Now()
	res, err := c.client.Audio.Transcriptions.New(rctx, params)
	p.observe(cloudName, &c.health, false, 0, time.Since(start), err)
	if err != nil {
		return "", err
	}
	return res.Text, nil
}
