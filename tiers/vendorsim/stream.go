package vendorsim

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"
)

// writeTimeout bounds each write to a client, so a client that stops
// reading cannot hold a handler for ever.
const writeTimeout = 10 * time.Second

// chunk is one chat.completion.chunk, fields in the order OpenAI sends them.
type chunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	ServiceTier       string          `json:"service_tier"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []chunkChoice   `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"` // "null" on every chunk when usage was asked for
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	Logprobs     *struct{}  `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
}

type chunkDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

var jsonNull = json.RawMessage("null")

// chunk builds a chunk of a with one choice.
func (a answer) chunk(delta chunkDelta, finish *string, includeUsage bool) []byte {
	c := chunk{
		ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
		ServiceTier: serviceTier, SystemFingerprint: systemFingerprint,
		Choices: []chunkChoice{{Delta: delta, FinishReason: finish}},
	}
	if includeUsage {
		c.Usage = jsonNull
	}
	b, _ := json.Marshal(c) // cannot fail: plain structs
	return b
}

// usageChunk is the last chunk when stream_options.include_usage is set:
// no choices, the usage of the whole answer.
func (a answer) usageChunk() []byte {
	u, _ := json.Marshal(a.usage())
	b, _ := json.Marshal(chunk{
		ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
		ServiceTier: serviceTier, SystemFingerprint: systemFingerprint,
		Choices: []chunkChoice{}, Usage: u,
	})
	return b
}

// sseWriter writes server-sent events, one flushed write per event.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// event writes "data: <data>\n\n" and flushes it, within writeTimeout.
func (sw sseWriter) event(data []byte) error {
	if err := sw.rc.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	buf := make([]byte, 0, len(data)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := sw.w.Write(buf); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// streamError is the SSE error event ErrorAfter sends.
var streamError = errorBody{Error: apiError{
	Message: "The server had an error while processing your request. Sorry about that!",
	Type:    strp(typeServer),
}}

// faultPoint is after how many content chunks a fault set to n fires when
// the answer has total chunks: never past the last one.
func faultPoint(n, total int) int {
	if n <= 0 {
		return -1
	}
	return min(n, total)
}

// stream writes a as an SSE stream, applying the mid-stream faults:
// StallAfter, CutAfter, ErrorAfter, MalformedAt and NoDone.
func (s *Sim) stream(w http.ResponseWriter, r *http.Request, a answer, f Fault, includeUsage bool) outcome {
	ctx := r.Context()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	if f.NoDone {
		h.Set("Connection", "close") // the server closes after the last chunk
	}
	w.WriteHeader(http.StatusOK)
	sw := sseWriter{w: w, rc: http.NewResponseController(w)}

	total := len(a.pieces)
	stallAt, cutAt, errorAt := faultPoint(f.StallAfter, total), faultPoint(f.CutAfter, total), faultPoint(f.ErrorAfter, total)
	malformedAt := -1 // content chunk index, or total+1 for the final chunk
	if f.MalformedAt > 0 {
		malformedAt = min(f.MalformedAt, total+1)
	}
	broken := false // a malformed chunk was sent: the request has failed whatever follows
	lost := func() outcome {
		if broken {
			return outcomeFailed
		}
		return outcomeCancelled
	}
	send := func(n int, data []byte) error {
		if n == malformedAt {
			data, broken = data[:len(data)/2], true
		}
		return sw.event(data)
	}

	stopped := func(err error) outcome { // a wait ended early
		if s.abandon(w, err) == outcomeCancelled {
			return lost()
		}
		return outcomeFailed
	}

	empty := ""
	if err := sw.event(a.chunk(chunkDelta{Role: "assistant", Content: &empty}, nil, includeUsage)); err != nil {
		return lost()
	}
	for n := 0; ; n++ { // n content chunks have been sent
		if n > 0 {
			if err := send(n, a.chunk(chunkDelta{Content: &a.pieces[n-1]}, nil, includeUsage)); err != nil {
				return lost()
			}
		}
		switch n {
		case stallAt:
			return stopped(s.hold(ctx))
		case cutAt:
			abortConn(w, false)
			return outcomeFailed
		case errorAt:
			b, _ := json.Marshal(streamError)
			_ = sw.event(b)
			return outcomeFailed
		}
		if n == total {
			break
		}
		if n > 0 { // the first content chunk follows the role chunk at once
			if err := s.sleep(ctx, s.tokenDelay); err != nil {
				return stopped(err)
			}
		}
	}

	finish := a.finish
	if err := send(total+1, a.chunk(chunkDelta{}, &finish, includeUsage)); err != nil {
		return lost()
	}
	if includeUsage {
		if err := sw.event(a.usageChunk()); err != nil {
			return lost()
		}
	}
	if !f.NoDone {
		if err := sw.event([]byte("[DONE]")); err != nil {
			return lost()
		}
	}
	if broken {
		return outcomeFailed
	}
	return outcomeCompleted
}

// abortConn closes the client's connection at once, without finishing
// the response; rst makes it a TCP reset (SO_LINGER 0) rather than a FIN.
// Where the connection cannot be hijacked (HTTP/2), it aborts the handler
// with http.ErrAbortHandler, which net/http turns into a stream reset;
// callers count their outcome in a defer for that reason.
func abortConn(w http.ResponseWriter, rst bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok && rst {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
