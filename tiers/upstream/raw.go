package upstream

import "encoding/json"

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

// rawSink hands a RawHandler each chunk's JSON, validated, undecoded.
type rawSink struct {
	h    RawHandler
	data []byte
}

func (s *rawSink) decode(data []byte) bool {
	s.data = data
	return json.Valid(data)
}

func (s *rawSink) take() (bool, string, error) { return s.h.RawChunk(s.data) }
func (s *rawSink) flush() error                { return nil }
func (s *rawSink) ended() string               { return s.h.Ended() }
