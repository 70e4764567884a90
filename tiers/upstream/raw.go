package upstream

import (
	"encoding/json"

	"github.com/openai/openai-go/v3"
)

// RawHandler is a Handler that takes each chunk as the JSON the server
// sent rather than decoded: a relay that passes chunks on (the gateway)
// then scans only the fields it needs, instead of paying openai-go's
// reflective decoder on every chunk. Stream calls RawChunk in place of
// Chunk, with the same results and timers; an event is a chunk when it is
// a valid JSON object (openai-go decodes every such object, so the
// tolerant reader's choices are the same either way).
type RawHandler interface {
	Handler
	// RawChunk takes one chunk's JSON, a valid JSON object on one or more
	// data lines joined by "\n". data is the reader's buffer: it is valid
	// only during the call.
	RawChunk(data []byte) (content bool, finish string, err error)
}

// rawReader returns the event reader of a stream for h: one that leaves
// chunks undecoded when h is a RawHandler.
func rawReader(ev *eventReader, h Handler) *eventReader {
	_, ev.raw = h.(RawHandler)
	return ev
}

// decode reports whether data is a chunk, and decodes it unless the
// reader is raw (then data stays in e.chunk for pass, and nothing is
// allocated: the chunk is returned by value, not decoded in place).
func (e *eventReader) decode(data []byte) (openai.ChatCompletionChunk, bool) {
	if !json.Valid(data) || data[0] != '{' {
		return openai.ChatCompletionChunk{}, false
	}
	if e.raw {
		e.chunk = data
		return openai.ChatCompletionChunk{}, true
	}
	var ch openai.ChatCompletionChunk
	return ch, json.Unmarshal(data, &ch) == nil
}

// pass hands the chunk next returned to h: its JSON to a RawHandler when
// the reader is raw, else the decoded ch.
func (e *eventReader) pass(h Handler, ch openai.ChatCompletionChunk) (bool, string, error) {
	if rh, ok := h.(RawHandler); ok && e.raw {
		return rh.RawChunk(e.chunk)
	}
	return h.Chunk(ch)
}
