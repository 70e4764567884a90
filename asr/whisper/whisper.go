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
	"net"
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
	f, err := newForm(wav, lang)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, f.body())
	if err != nil {
		return "", fmt.Errorf("whisper: request: %w", err)
	}
	req.ContentLength = f.size()
	req.GetBody = func() (io.ReadCloser, error) { return f.body(), nil }
	req.Header.Set("Content-Type", f.contentType)
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

// form is the multipart body of one request: file=clip.wav (audio/wav),
// response_format=json, temperature=0, and language when given. The WAV is
// not copied into it: the body reads the part's header, the WAV and the
// fields in turn.
type form struct {
	head, tail  []byte // around the WAV
	wav         []byte
	contentType string
}

func newForm(wav []byte, lang string) (*form, error) {
	var buf bytes.Buffer // the part's header, then the fields after the WAV
	w := multipart.NewWriter(&buf)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", `form-data; name="file"; filename="clip.wav"`)
	h.Set("Content-Type", "audio/wav")
	_, err := w.CreatePart(h) // the WAV follows the part's header in the body
	split := buf.Len()
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
		return nil, fmt.Errorf("whisper: build form: %w", err)
	}
	b := buf.Bytes()
	return &form{head: b[:split], tail: b[split:], wav: wav, contentType: w.FormDataContentType()}, nil
}

// body is a fresh reader of the whole body (a retry reads it again). Its
// WriteTo (net.Buffers') hands the parts to the transport's writer as they
// are, where io.MultiReader's would take a 32 KiB buffer of its own for
// each request.
func (f *form) body() io.ReadCloser { return io.NopCloser(&net.Buffers{f.head, f.wav, f.tail}) }

func (f *form) size() int64 { return int64(len(f.head) + len(f.wav) + len(f.tail)) }

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
