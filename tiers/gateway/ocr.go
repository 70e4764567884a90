package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Reader reads the text of an image (PNG or JPEG bytes) in lang ("zh":
// Chinese and English, else English). tiers/ocr's Pool is the production
// Reader.
type Reader interface {
	Read(ctx context.Context, img []byte, lang string) (string, error)
}

// HeaderOCR is set on a response whose request's images were replaced by
// their OCR text before it reached the answering endpoint: its value is
// the number of images read.
const HeaderOCR = "X-Poise-Ocr-Fallback"

// ocrNote introduces an image's text in the rewritten request.
const ocrNote = "[Text read from an image by OCR; it may have small errors]\n"

// UseOCR gives the gateway OCR for chains with ocr_fallback entries. Call
// it before serving; without it an ocr_fallback entry is skipped for a
// request with images.
func (g *Handler) UseOCR(r Reader) { g.ocr = r }

// ocrBeforeTarget is called before each target of a request: when t is
// an ocr_fallback entry and the request still carries images (the vision
// endpoints before it failed), the images are replaced by their OCR text,
// once, for t and every target after it, and the response says so in
// HeaderOCR. It reports false when t must be skipped: no OCR, the client
// has seen part of an answer already, or OCR failed.
func (c *gatewayCall) ocrBeforeTarget(ctx context.Context, t target) bool {
	if !t.ep.OCRFallback {
		return true
	}
	var messages []json.RawMessage
	if json.Unmarshal(c.rq.fields["messages"], &messages) != nil {
		return true // parseChatRequest checked it is an array; nothing to read
	}
	n := countImages(messages)
	if n == 0 {
		return true
	}
	if c.g.ocr == nil || c.sent {
		return false
	}
	msgs, err := readImages(ctx, c.g.ocr, messages)
	if err != nil {
		c.log.Info().Err(err).Str("endpoint", t.ep.Name).Msg("tiers: gateway: OCR fallback failed; endpoint skipped")
		return false
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		return false
	}
	c.rq.fields["messages"] = raw
	c.w.Header().Set(HeaderOCR, strconv.Itoa(n))
	c.log.Info().Int("images", n).Str("endpoint", t.ep.Name).Msg("tiers: gateway: images replaced by their OCR text")
	return true
}

// part is one content part of a chat message.
type part struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
}

// contentParts returns a message's content parts; ok is false for a
// string (or absent) content.
func contentParts(msg json.RawMessage) (fields map[string]json.RawMessage, parts []json.RawMessage, ok bool) {
	if json.Unmarshal(msg, &fields) != nil {
		return nil, nil, false
	}
	if json.Unmarshal(fields["content"], &parts) != nil {
		return nil, nil, false
	}
	return fields, parts, true
}

// countImages counts the image_url parts of msgs.
func countImages(msgs []json.RawMessage) int {
	n := 0
	for _, m := range msgs {
		_, parts, ok := contentParts(m)
		if !ok {
			continue
		}
		for _, raw := range parts {
			var p part
			if json.Unmarshal(raw, &p) == nil && p.Type == "image_url" {
				n++
			}
		}
	}
	return n
}

// readImages returns msgs with every image_url part replaced by a text
// part with the image's OCR text. Only data URLs are read: the gateway
// fetches no URL a client names. An image OCR cannot read fails the
// whole rewrite.
func readImages(ctx context.Context, r Reader, msgs []json.RawMessage) ([]json.RawMessage, error) {
	lang := "en"
	if hasHan(msgs) {
		lang = "zh"
	}
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		out[i] = m
		fields, parts, ok := contentParts(m)
		if !ok {
			continue
		}
		changed := false
		for j, raw := range parts {
			var p part
			if json.Unmarshal(raw, &p) != nil || p.Type != "image_url" {
				continue
			}
			text, err := readPart(ctx, r, p, lang)
			if err != nil {
				return nil, fmt.Errorf("messages[%d] part %d: %w", i, j, err)
			}
			parts[j], _ = json.Marshal(part{Type: "text", Text: ocrNote + text}) // cannot fail
			changed = true
		}
		if changed {
			fields["content"], _ = json.Marshal(parts)
			out[i], _ = json.Marshal(fields)
		}
	}
	return out, nil
}

func readPart(ctx context.Context, r Reader, p part, lang string) (string, error) {
	if p.ImageURL == nil {
		return "", fmt.Errorf("image_url part without a url")
	}
	meta, data, ok := strings.Cut(p.ImageURL.URL, ",")
	if !ok || !strings.HasPrefix(meta, "data:image/") || !strings.HasSuffix(meta, ";base64") {
		return "", fmt.Errorf("only base64 data URLs are read, not a URL")
	}
	img, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return "", fmt.Errorf("image data: %w", err)
	}
	text, err := r.Read(ctx, img, lang)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("no text in the image")
	}
	return text, nil
}

// hasHan reports Chinese in the messages' text: the images are then read
// as Chinese and English.
func hasHan(msgs []json.RawMessage) bool {
	for _, m := range msgs {
		for _, r := range string(m) {
			if unicode.Is(unicode.Han, r) {
				return true
			}
		}
	}
	return false
}
