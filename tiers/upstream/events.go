package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// Bounds of the event reader.
const (
	readBuffer   = 4 << 10 // bytes read from the body at a time; a longer line is read in pieces
	maxEventSize = 1 << 20 // bytes of one event's data; a longer event breaks the stream
)

// errEventTooLarge breaks a stream whose event never ends.
var errEventTooLarge = errors.New("upstream: stream event over 1 MiB")

// errGarbage breaks a stream that is mostly undecodable.
var errGarbage = errors.New("upstream: stream is mostly undecodable events")

// errLostChunk breaks a stream when an undecodable event looks like a chunk
// of the answer: skipping it could drop words, and a gap the client cannot
// see would present a damaged answer as complete.
var errLostChunk = errors.New("upstream: undecodable answer chunk")

// eventKind is what one event of a stream is.
type eventKind int

const (
	eventChunk eventKind = iota // a decoded chunk
	eventDone                   // data: [DONE]
	eventError                  // data: {"error": ...}: the stream failed
	eventBad                    // undecodable, skipped
)

// eventReader reads the server-sent events of one chat completion stream
// and decodes each: a chunk, [DONE], an error event, or a bad event, which
// is skipped unless it may have carried content or most events are bad
// (see next). It is tolerant where openai-go's stream is not: one
// undecodable event does not end an answer that is otherwise fine. Owned
// by one Stream call; its reads block on the body, which the call's
// context closes.
type eventReader struct {
	r    *bufio.Reader
	key  string // the endpoint's API key, cut out of error events
	data []byte // the event being read
	good int    // decoded events
	bad  int    // undecodable events
	err  error  // why reading stopped: io.EOF at a clean end
}

func newEventReader(body io.Reader, key string) *eventReader {
	return &eventReader{r: bufio.NewReaderSize(body, readBuffer), key: key}
}

// next reads one event and decodes it with decode, which reports whether
// the event's data was a chunk it could decode. It returns eventBad for an
// undecodable event that may be skipped, and false when the stream ended
// (err says why: io.EOF, a read error, errGarbage when more events were
// bad than good and there were at least two, or errLostChunk for a bad
// event that looks like an answer chunk). An error event comes back as
// eventError with err set to its *ssestream.StreamError, the API key cut
// out of its data.
func (e *eventReader) next(decode func(data []byte) bool) (eventKind, bool) {
	data, ok := e.event()
	if !ok {
		return 0, false
	}
	switch {
	case bytes.HasPrefix(data, []byte("[DONE]")):
		e.err = io.EOF
		return eventDone, true
	case bytes.Contains(data, []byte(`"error"`)) && isErrorEvent(data):
		clean := cleanErrorJSON(data, e.key)
		e.err = &ssestream.StreamError{Message: "received error while streaming: " + errorSummary(clean), Event: ssestream.Event{Data: clean}}
		return eventError, false
	}
	if len(data) > 0 && data[0] == '{' && decode(data) {
		e.good++
		return eventChunk, true
	}
	e.bad++
	switch {
	case looksLikeChunk(data):
		e.err = errLostChunk
		return eventBad, false
	case e.bad >= 2 && e.bad > e.good:
		e.err = errGarbage
		return eventBad, false
	}
	return eventBad, true
}

// event reads the data of the next event with data (SSE: "data:" lines up
// to a blank line; comments, other fields and empty events are skipped).
// An event cut by the end of the body is dropped, as the SSE spec says.
func (e *eventReader) event() ([]byte, bool) {
	if e.err != nil {
		return nil, false
	}
	e.data = e.data[:0]
	for {
		line, err := e.line()
		if err != nil {
			e.err = err
			return nil, false
		}
		if len(line) == 0 {
			if len(e.data) == 0 {
				continue
			}
			return bytes.TrimSuffix(e.data, []byte("\n")), true
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if string(name) != "data" {
			continue // a comment (": ping"), event:, id:, retry:
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if len(e.data)+len(value) > maxEventSize {
			e.err = errEventTooLarge
			return nil, false
		}
		e.data = append(append(e.data, value...), '\n')
	}
}

// line reads one line without its line ending. A line longer than the
// buffer is read in pieces, up to maxEventSize.
func (e *eventReader) line() ([]byte, error) {
	line, err := e.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(long) > maxEventSize {
				return nil, errEventTooLarge
			}
			line, err = e.r.ReadSlice('\n')
			long = append(long, line...)
		}
		if len(long) > maxEventSize {
			return nil, errEventTooLarge
		}
		line = long
	}
	if err != nil {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// ready reports whether the next event is in the buffer already (its
// blank line is), so that reading it waits for nothing.
func (e *eventReader) ready() bool {
	buf, _ := e.r.Peek(e.r.Buffered())
	return bytes.Contains(buf, []byte("\n\n")) || bytes.Contains(buf, []byte("\n\r\n"))
}

// isErrorEvent reports whether data is a JSON object with a non-null
// top-level "error", as OpenAI sends when a generation fails mid-stream.
func isErrorEvent(data []byte) bool {
	var w struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(data, &w) == nil && len(w.Error) > 0 && string(w.Error) != "null"
}

// looksLikeChunk reports whether an undecodable event looks like a chat
// completion chunk, one that may have carried part of the answer.
func looksLikeChunk(data []byte) bool {
	return bytes.Contains(data, []byte("chat.completion.chunk")) || bytes.Contains(data, []byte(`"delta"`)) ||
		bytes.Contains(data, []byte(`"choices"`))
}

// errorSummary is the error event's message, for the error's text.
func errorSummary(data []byte) string {
	var w struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &w) == nil && w.Error.Message != "" {
		return w.Error.Message
	}
	return fmt.Sprintf("%.200s", data)
}
