package sim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// imagePart is an image_url content part of a chat message.
type imagePart struct {
	Type     string `json:"type"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

// images returns the message's image_url parts; none for a string content.
func (m chatMessage) images() []imagePart {
	var parts []imagePart
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil
	}
	out := parts[:0]
	for _, p := range parts {
		if p.Type == "image_url" {
			out = append(out, p)
		}
	}
	return out
}

// imageFormats are the data URL types OpenAI's vision models accept.
var imageFormats = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// validateImages checks every image_url part as OpenAI does: an http(s)
// URL, or a data URL of an accepted type whose base64 decodes to an
// image of that type (by its magic bytes); anything else is a 400
// invalid_image_format, so a client sending a broken image learns it
// over the wire, not from an answer.
func validateImages(req *chatRequest) (*apiError, int) {
	for i, m := range req.Messages {
		for _, p := range m.images() {
			if err := checkImageURL(p); err != "" {
				e := badRequest(fmt.Sprintf("Invalid image in messages[%d]: %s", i, err), "")
				e.Code = strp("invalid_image_format")
				return &e, http.StatusBadRequest
			}
		}
	}
	return nil, 0
}

func checkImageURL(p imagePart) string {
	if p.ImageURL == nil || p.ImageURL.URL == "" {
		return "image_url.url is missing."
	}
	u := p.ImageURL.URL
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return ""
	}
	meta, data, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !strings.HasPrefix(u, "data:") || !ok || !strings.HasSuffix(meta, ";base64") {
		return "expected a URL or a base64 data URL."
	}
	mime := strings.TrimSuffix(meta, ";base64")
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) == 0 {
		return "You uploaded an unsupported image. Please make sure your image is valid."
	}
	if sniffed := http.DetectContentType(raw); sniffed != mime || !knownFormat(mime) {
		return fmt.Sprintf("You uploaded an unsupported image (%s). Please make sure your image has one of the following formats: ['png', 'jpeg', 'gif', 'webp'].", mime)
	}
	return ""
}

func knownFormat(mime string) bool {
	for _, f := range imageFormats {
		if f == mime {
			return true
		}
	}
	return false
}

// noteImages counts the accepted image parts of a chat request.
func (s *Server) noteImages(model string, req *chatRequest) {
	n := 0
	for _, m := range req.Messages {
		n += len(m.images())
	}
	if n > 0 {
		s.count(model, Counters{Images: int64(n)})
	}
}
