package upstream

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"
)

// Delta is what the answer path reads of one chunk: choice 0's content,
// refusal and finish_reason, and the usage the last chunk may carry.
type Delta struct {
	Choices          int // how many choices the chunk had; 0 for a usage chunk
	Content          string
	Refusal          string
	Finish           string
	PromptTokens     int64
	CompletionTokens int64
}

// DeltaHandler takes the Deltas of one stream, as Handler takes whole
// chunks; Delta's results and Ended mean what Handler's Chunk and Ended
// do.
type DeltaHandler interface {
	Delta(d Delta) (content bool, finish string, err error)
	Ended() string
}

// Flusher is a DeltaHandler that gathers the content Delta takes and
// passes it on in Flush, which the stream calls when no further event is
// at hand (the next needs a read from the server), at the finish, and
// when the stream ends: one read's tokens then go on as one piece. An
// error stops the stream as Delta's does.
type Flusher interface {
	Flush() error
}

// StreamDeltas is Stream for a handler that needs only Deltas: each event
// is validated and only a Delta's fields are read (gjson), instead of
// openai-go's whole chunk, whose reflective decoder was about a tenth of
// Poise's CPU under load. Timers, errors and results are Stream's.
func (c *Client) StreamDeltas(ctx context.Context, call Call, h DeltaHandler) Result {
	return c.stream(ctx, call, &deltaSink{h: h})
}

// Stream sends call and passes each chunk to h, as JSON when h is a
// RawHandler; see stream.
func (c *Client) Stream(ctx context.Context, call Call, h Handler) Result {
	if rh, ok := h.(RawHandler); ok {
		return c.stream(ctx, call, &rawSink{h: rh})
	}
	return c.stream(ctx, call, &chunkSink{h: h})
}

// sink decodes a stream's events and hands them to its handler. Owned by
// one stream call.
type sink interface {
	decode(data []byte) bool                        // false: undecodable
	take() (content bool, finish string, err error) // the last decoded chunk, to the handler
	flush() error                                   // nothing more at hand (Flusher)
	ended() string
}

type chunkSink struct {
	h  Handler
	ch openai.ChatCompletionChunk
}

func (s *chunkSink) decode(data []byte) bool {
	s.ch = openai.ChatCompletionChunk{}
	return json.Valid(data) && json.Unmarshal(data, &s.ch) == nil
}

func (s *chunkSink) take() (bool, string, error) { return s.h.Chunk(s.ch) }
func (s *chunkSink) flush() error                { return nil }
func (s *chunkSink) ended() string               { return s.h.Ended() }

// deltaSink decodes with gjson: it validates the event, then reads only
// the Delta's fields, a third of encoding/json's cost into a small struct
// and a tenth of openai-go's whole chunk (BenchmarkChunkDecode).
type deltaSink struct {
	h DeltaHandler
	d Delta
}

func (s *deltaSink) decode(data []byte) bool {
	s.d = Delta{}
	if !gjson.ValidBytes(data) {
		return false
	}
	return fields(gjson.ParseBytes(data), s.chunkField)
}

// chunkField reads one top-level field of a chunk.
func (s *deltaSink) chunkField(k string, v gjson.Result) bool {
	switch k {
	case "choices":
		return s.choices(v)
	case "usage":
		return fields(v, s.usageField)
	}
	return true
}

// usageField reads one field of the usage.
func (s *deltaSink) usageField(k string, v gjson.Result) bool {
	switch k {
	case "prompt_tokens":
		return count(v, &s.d.PromptTokens)
	case "completion_tokens":
		return count(v, &s.d.CompletionTokens)
	}
	return true
}

// choices reads the choices array: how many there are, and choice 0's
// content, refusal and finish_reason. Null is no choices; any other type
// but an array makes the chunk undecodable.
func (s *deltaSink) choices(v gjson.Result) bool {
	switch {
	case v.Type == gjson.Null:
		s.d.Choices = 0
		return true
	case !v.IsArray():
		return false
	}
	s.d.Content, s.d.Refusal, s.d.Finish = "", "", ""
	n, ok := 0, true
	v.ForEach(func(_, c gjson.Result) bool {
		if n == 0 {
			ok = fields(c, s.choiceField)
		}
		n++
		return ok
	})
	s.d.Choices = n
	return ok
}

// choiceField reads one field of choice 0.
func (s *deltaSink) choiceField(k string, v gjson.Result) bool {
	switch k {
	case "delta":
		return fields(v, s.deltaField)
	case "finish_reason":
		return text(v, &s.d.Finish)
	}
	return true
}

// deltaField reads one field of choice 0's delta.
func (s *deltaSink) deltaField(k string, v gjson.Result) bool {
	switch k {
	case "content":
		return text(v, &s.d.Content)
	case "refusal":
		return text(v, &s.d.Refusal)
	}
	return true
}

// fields calls f on each key and value of object o in one pass, until f
// returns false, and returns what f last returned; a value that is no
// object has no fields. A key given twice is read twice, so the last one
// wins, as encoding/json (and openai-go) read it.
func fields(o gjson.Result, f func(k string, v gjson.Result) bool) bool {
	if !o.IsObject() {
		return true
	}
	ok := true
	o.ForEach(func(k, v gjson.Result) bool {
		ok = f(k.Str, v)
		return ok
	})
	return ok
}

// text sets *dst to a string field; absent or null is "", any other type
// makes the chunk undecodable.
func text(v gjson.Result, dst *string) bool {
	switch v.Type {
	case gjson.String:
		*dst = v.Str
	case gjson.Null:
	default:
		return false
	}
	return true
}

// count sets *dst to an integer field, as text does a string.
func count(v gjson.Result, dst *int64) bool {
	switch v.Type {
	case gjson.Number:
		*dst = v.Int()
	case gjson.Null:
	default:
		return false
	}
	return true
}

func (s *deltaSink) take() (bool, string, error) { return s.h.Delta(s.d) }
func (s *deltaSink) ended() string               { return s.h.Ended() }

func (s *deltaSink) flush() error {
	if f, ok := s.h.(Flusher); ok {
		return f.Flush()
	}
	return nil
}
