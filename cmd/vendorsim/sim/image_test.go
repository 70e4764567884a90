package sim

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
)

// TestImageParts sends a screenshot to the simulator with the real
// openai-go client: a valid PNG data URL is answered, streaming, and
// counted; a broken one gets OpenAI's 400 invalid_image_format; a fault
// on the model (slow, down) applies to image requests like any other.
func TestImageParts(t *testing.T) {
	sim := New(Options{TokenDelay: -1})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	defer sim.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	png, err := ocrtest.PNG(ocrtest.Shot{Text: "two sum", Font: ocrtest.SansFont, Size: 14, Scale: 1, Theme: ocrtest.Light})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(url string) (string, error) {
		st := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model: "vision-model",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
				openai.TextContentPart("The question is on this screenshot."),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url, Detail: "high"}),
			})},
		})
		defer st.Close()
		var text string
		for st.Next() {
			if ch := st.Current(); len(ch.Choices) > 0 {
				text += ch.Choices[0].Delta.Content
			}
		}
		return text, st.Err()
	}
	good := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	if text, err := ask(good); err != nil || text == "" {
		t.Fatalf("a PNG data URL: %q, %v; want an answer", text, err)
	}
	if c := sim.Counters("vision-model"); c.Images != 1 || c.Completed != 1 {
		t.Fatalf("counters %+v, want one image in one completed request", c)
	}
	for name, url := range map[string]string{
		"not base64":   "data:image/png;base64,%%%",
		"not a png":    "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("hello")),
		"not an image": "data:text/plain;base64,aGVsbG8=",
		"not a url":    "screenshot.png",
		"wrong mime":   "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(png),
	} {
		_, err := ask(url)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "invalid_image_format" {
			t.Errorf("%s: %v, want a 400 invalid_image_format", name, err)
		}
	}
	sim.SetFault("vision-model", Fault{Status: 503})
	var apiErr *openai.Error
	if _, err := ask(good); !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Fatalf("with a 503 fault: %v, want 503", err)
	}
	if c := sim.Counters("vision-model"); c.Images != 2 {
		t.Fatalf("images %d, want 2 (the faulted request was accepted, then failed)", c.Images)
	}
}
