// Package upstreamtest plays an OpenAI-compatible upstream for the fuzz
// tests of the clients built on tiers/upstream (the upstream client's own,
// the gateway's): every request gets one response made of fuzz bytes,
// with no network and no real-time wait.
package upstreamtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
)

// FuzzStatuses are the upstream statuses a fuzz input picks from; the
// first is a streaming answer, the others are error responses.
var FuzzStatuses = []int{200, 400, 401, 402, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504}

// Fuzz is an http.RoundTripper that answers every request with one fuzz
// response: Body as a text/event-stream (Status 200) or as an error
// response's JSON. With Hang the body, once read, blocks until the
// request is cancelled, as a server that stops sending; else it ends.
type Fuzz struct {
	Status int
	Body   []byte
	Hang   bool
}

// RoundTrip reads and closes the request's body and answers.
func (u Fuzz) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	h := http.Header{"Content-Type": {"text/event-stream"}}
	if u.Status != http.StatusOK {
		h.Set("Content-Type", "application/json")
	}
	var body io.ReadCloser = io.NopCloser(bytes.NewReader(u.Body))
	if u.Hang {
		body = &hangingBody{r: bytes.NewReader(u.Body), ctx: r.Context()}
	}
	return &http.Response{StatusCode: u.Status, Status: http.StatusText(u.Status), Header: h, Body: body,
		Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// hangingBody returns its bytes, then blocks until ctx ends.
type hangingBody struct {
	r   *bytes.Reader
	ctx context.Context
}

func (b *hangingBody) Read(p []byte) (int, error) {
	if b.r.Len() > 0 {
		return b.r.Read(p)
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *hangingBody) Close() error { return nil }
