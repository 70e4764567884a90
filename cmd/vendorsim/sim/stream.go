package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"
)

// writeTimeout bounds each write to a client, so a client that stops
// reading cannot hold a handler for ever. net/http clears the deadline
// after each request.
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

// contentTemplate is a stream's content chunk cut around its content
// string: every content chunk of an answer is head, the piece as a JSON
// string, tail. Built once per stream from a.chunk itself, so the bytes
// are those json.Marshal writes.
type contentTemplate struct{ head, tail []byte }

// templateMark stands for the content while the template is cut.
const templateMark = "vendorsim-content-mark"

func (a answer) contentTemplate(includeUsage bool) contentTemplate {
	mark := templateMark
	full := a.chunk(chunkDelta{Content: &mark}, nil, includeUsage)
	field := []byte(`"content":"` + templateMark + `"`)
	i := bytes.LastIndex(full, field) // the model name cannot hold it unescaped
	return contentTemplate{head: full[:i+len(`"content":`)], tail: full[i+len(field):]}
}

// append appends the content chunk of piece to dst.
func (t contentTemplate) append(dst []byte, piece string) []byte {
	dst = append(dst, t.head...)
	dst = appendJSONString(dst, piece)
	return append(dst, t.tail...)
}

// appendJSONString appends s as encoding/json writes a string: printable
// ASCII without quotes, backslashes or HTML characters as is, anything
// else through json.Marshal.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // cannot fail: a string
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// sseWriter writes server-sent events, one flushed write per event. Owned
// by its handler.
type sseWriter struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	buf      []byte    // the event being written, reused
	deadline time.Time // the write deadline set last
}

// event writes "data: <data>\n\n" and flushes it, within writeTimeout.
// (The deadline is renewed once half of it has passed, not per event.)
func (sw *sseWriter) event(data []byte) error {
	if now := time.Now(); sw.deadline.Sub(now) < writeTimeout/2 {
		if err := sw.rc.SetWriteDeadline(now.Add(writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		sw.deadline = now.Add(writeTimeout)
	}
	sw.buf = append(sw.buf[:0], "data: "...)
	sw.buf = append(sw.buf, data...)
	sw.buf = append(sw.buf, "\n\n"...)
	if _, err := sw.w.Write(sw.buf); err != nil {
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
func (s *Server) stream(w http.ResponseWriter, r *http.Request, a answer, f Fault, includeUsage bool) outcome {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	if f.NoDone {
		h.Set("Connection", "close") // the server closes after the last chunk
	}
	w.WriteHeader(http.StatusOK)
	st := &streamRun{
		s: s, w: w, sw: &sseWriter{w: w, rc: http.NewResponseController(w)}, r: r,
		a: a, f: f, includeUsage: includeUsage, malformedAt: -1, content: a.contentTemplate(includeUsage),
	}
	defer st.stopTimer()
	if f.MalformedAt > 0 {
		st.malformedAt = min(f.MalformedAt, len(a.pieces)+1)
	}
	if o, ended := st.contents(); ended {
		return o
	}
	return st.finish()
}

// streamRun is one stream being written; owned by its handler.
type streamRun struct {
	s            *Server
	w            http.ResponseWriter
	sw           *sseWriter
	r            *http.Request
	a            answer
	f            Fault
	includeUsage bool
	content      contentTemplate
	data         []byte      // the content chunk being sent, reused
	timer        *time.Timer // the token delay's, reused
	malformedAt  int         // chunk to break: content chunk n, or len(pieces)+1 for the finish chunk; -1 none
	broken       bool        // a malformed chunk was sent: the request has failed whatever follows
}

// send writes chunk n (see malformedAt), breaking it if asked to.
func (st *streamRun) send(n int, data []byte) error {
	if n == st.malformedAt {
		data, st.broken = data[:len(data)/2], true
	}
	return st.sw.event(data)
}

// lost is the outcome when the client went away.
func (st *streamRun) lost() outcome {
	if st.broken {
		return outcomeFailed
	}
	return outcomeCancelled
}

// stopped is the outcome when a wait ended early with err.
func (st *streamRun) stopped(err error) outcome {
	if st.s.abandon(st.w, err) == outcomeCancelled {
		return st.lost()
	}
	return outcomeFailed
}

// contents writes the role chunk and the content chunks, one every
// TokenDelay, and applies StallAfter, CutAfter and ErrorAfter. It reports
// whether the stream has ended, and how.
func (st *streamRun) contents() (outcome, bool) {
	a, total := st.a, len(st.a.pieces)
	stallAt, cutAt, errorAt := faultPoint(st.f.StallAfter, total), faultPoint(st.f.CutAfter, total), faultPoint(st.f.ErrorAfter, total)
	empty := ""
	if err := st.sw.event(a.chunk(chunkDelta{Role: "assistant", Content: &empty}, nil, st.includeUsage)); err != nil {
		return st.lost(), true
	}
	for n := 0; ; n++ { // n content chunks have been sent
		if n > 0 {
			st.data = st.content.append(st.data[:0], a.pieces[n-1])
			if err := st.send(n, st.data); err != nil {
				return st.lost(), true
			}
		}
		if n == st.f.GarbageAfter && n > 0 {
			if err := st.sw.event([]byte("{oops")); err != nil {
				return st.lost(), true
			}
		}
		if n == 0 && st.f.FirstContentDelayMS > 0 {
			if err := st.s.sleep(st.r.Context(), time.Duration(st.f.FirstContentDelayMS)*time.Millisecond); err != nil {
				return st.stopped(err), true
			}
		}
		switch n {
		case stallAt:
			return st.stopped(st.s.hold(st.r.Context())), true
		case cutAt:
			abortConn(st.w, false)
			return outcomeFailed, true
		case errorAt:
			b, _ := json.Marshal(streamError) // cannot fail: plain structs
			_ = st.sw.event(b)
			return outcomeFailed, true
		}
		if n == total {
			return 0, false
		}
		if n > 0 { // the first content chunk follows the role chunk at once
			if err := st.sleep(st.s.tokenDelay); err != nil {
				return st.stopped(err), true
			}
		}
	}
}

// sleep waits d on the stream's reusable timer, as Server.sleep does.
func (st *streamRun) sleep(d time.Duration) error {
	ctx := st.r.Context()
	if d <= 0 {
		return st.s.alive(ctx)
	}
	if st.timer == nil {
		st.timer = time.NewTimer(d)
	} else {
		st.timer.Reset(d) // stopped or fired and drained: Go 1.23 timers hold no stale tick
	}
	select {
	case <-st.timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-st.s.done:
		return errClosed
	}
}

func (st *streamRun) stopTimer() {
	if st.timer != nil {
		st.timer.Stop()
	}
}

// finish writes the finish chunk, the usage chunk when asked for, and
// [DONE] unless NoDone.
func (st *streamRun) finish() outcome {
	reason := st.a.finish
	if err := st.send(len(st.a.pieces)+1, st.a.chunk(chunkDelta{}, &reason, st.includeUsage)); err != nil {
		return st.lost()
	}
	if st.includeUsage {
		if err := st.sw.event(st.a.usageChunk()); err != nil {
			return st.lost()
		}
	}
	if !st.f.NoDone {
		if err := st.sw.event([]byte("[DONE]")); err != nil {
			return st.lost()
		}
	}
	if st.broken {
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
