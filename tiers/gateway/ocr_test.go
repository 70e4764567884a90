package gateway

import (
	"context"
	"encoding/base64"
	"net/http"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
)

// textReader stands in for OCR (tiers/ocr is tested on Tesseract itself).
type textReader struct {
	mu    sync.Mutex
	calls int
}

func (r *textReader) Read(ctx context.Context, img []byte, lang string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return "Two Sum: return the indices of the two numbers that add up to target.", nil
}

// TestOCRFallback: a request with an image to a chain whose vision
// endpoint (a) is down reaches the ocr_fallback entry (b) with the
// image's text instead of the image, and the response says so; without
// ocr_fallback the text endpoint gets the image as it is.
func TestOCRFallback(t *testing.T) {
	img, err := ocrtest.PNG(ocrtest.Shot{Text: "Two Sum", Font: ocrtest.SansFont, Size: 14, Scale: 1, Theme: ocrtest.Light})
	if err != nil {
		t.Fatal(err)
	}
	params := openai.ChatCompletionNewParams{Model: gwModel, Messages: []openai.ChatCompletionMessageParamUnion{
		openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("Solve the problem on this screenshot."),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)}),
		}),
	}}
	for _, fallback := range []bool{true, false} {
		r := newGatewayRig(t, func(r *gwRig) {
			b := r.entry("b", r.b, modelB)
			b.OCRFallback = fallback
			r.cfg.Chains[gwModel] = []Endpoint{r.entry("a", r.a, modelA), b}
		})
		reader := &textReader{}
		r.gw.UseOCR(reader)
		r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: 503})
		var resp *http.Response
		c, err := r.client.Chat.Completions.New(context.Background(), params, option.WithResponseInto(&resp))
		if err != nil || len(c.Choices) == 0 || c.Choices[0].Message.Content != replyB {
			t.Fatalf("ocr_fallback %v: %v, %+v; want b's answer", fallback, err, c)
		}
		got := resp.Header.Get(HeaderOCR)
		bImages := r.b.Sim.Counters(modelB).Images
		if fallback && (got != "1" || bImages != 0 || reader.calls != 1) {
			t.Fatalf("ocr_fallback: header %q, b got %d images, %d reads; want 1, 0, 1", got, bImages, reader.calls)
		}
		if !fallback && (got != "" || bImages != 1 || reader.calls != 0) {
			t.Fatalf("no ocr_fallback: header %q, b got %d images, %d reads; want none, 1, 0", got, bImages, reader.calls)
		}
		if n := r.a.Sim.Counters(modelA).Images; n != 1 {
			t.Fatalf("the vision endpoint got %d images, want 1", n)
		}
	}
}
