// Package whisper is a client for whisper.cpp's HTTP server
// (examples/server): POST /inference with a WAV file, JSON response.
package whisper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
)

const (
	inferencePath = "/inference"
	maxBodyBytes  = 1 << 20 // a transcript of 30 s of audio is far smaller
)

// Client sends audio to one whisper.cpp server. It is safe for concurrent
// use, but the server decodes one request at a time: callers queue.
type Client struct {
	url  string
	http *http.Client
}

// New returns a client for the server at baseURL (its root, or the full
// /inference URL). hc carries the requests; nil means http.DefaultClient.
func New(baseURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("whisper: base url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("whisper: base url %q: want http(s)://host[:port]", baseURL)
	}
	if !strings.HasSuffix(u.Path, inferencePath) {
		u.Path = strings.TrimSuffix(u.Path, "/") + inferencePath
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{url: u.String(), http: hc}, nil
}

// URL is the /inference endpoint the client posts to.
func (c *Client) URL() string { return c.url }

// Error is a response from the server that carries no transcript: a status
// other than 200, or a 200 whose JSON has an "error" field (whisper.cpp
// answers some bad requests that way).
type Error struct {
	Status  int    // HTTP status
	Message string // the server's "error" field, or the start of the body
}

func (e *Error) Error() string {
	return fmt.Sprintf("whisper: status %d: %s", e.Status, e.Message)
}

// Transcribe posts wav (a RIFF WAV file) and returns the server's text,
// untrimmed. lang ("en", "zh", "auto") is sent when not empty; otherwise the
// server's default language applies. It blocks until the response is read
// or ctx ends. Errors are *Error for server answers, else transport or
// context errors, wrapped.
func (c *Client) Transcribe(ctx context.Context, wav []byte, lang string) (string, error) {
	body, contentType, err := form(wav, lang)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, body)
	if err != nil {
		return "", fmt.Errorf("whisper: request: %w", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("whisper: post: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return "", fmt.Errorf("whisper: read response: %w", err)
	}
	return parse(resp.StatusCode, raw)
}

// form builds the multipart body: file=clip.wav (audio/wav),
// response_format=json, temperature=0, and language when given.
func form(wav []byte, lang string) (io.Reader, string, error) {
	var buf bytes.Buffer
	buf.Grow(len(wav) + 1024)
	w := multipart.NewWriter(&buf)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", `form-data; name="file"; filename="clip.wav"`)
	h.Set("Content-Type", "audio/wav")
	part, err := w.CreatePart(h)
	if err == nil {
		_, err = part.Write(wav)
	}
	fields := [][2]string{{"response_format", "json"}, {"temperature", "0.0"}}
	if lang != "" {
		fields = append(fields, [2]string{"language", lang})
	}
	for _, f := range fields {
		if err == nil {
			err = w.WriteField(f[0], f[1])
		}
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, "", fmt.Errorf("whisper: build form: %w", err)
	}
	return &buf, w.FormDataContentType(), nil
}

type response struct {
	Text  *string `json:"text"`
	Error string  `json:"error"`
}

func parse(status int, raw []byte) (string, error) {
	var r response
	jsonErr := json.Unmarshal(raw, &r)
	if status != http.StatusOK {
		msg := r.Error
		if jsonErr != nil || msg == "" {
			msg = snippet(raw)
		}
		return "", &Error{Status: status, Message: msg}
	}
	if jsonErr != nil {
		return "", fmt.Errorf("whisper: decode response: %w", jsonErr)
	}
	if r.Error != "" {
		return "", &Error{Status: status, Message: r.Error}
	}
	if r.Text == nil {
		return "", errors.New("whisper: response has no text field")
	}
	return *r.Text, nil
}

func snippet(b []byte) string {
	const limit = 200
	s := strings.TrimSpace(string(b))
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}
