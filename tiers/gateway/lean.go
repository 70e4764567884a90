package gateway

import (
	"encoding/json"
	"strconv"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
)

// RawChunk implements upstream.RawHandler: the lean relay. A chunk of the
// common kind (one choice of text, see scanChunk) is read by scanChunk
// alone, and its choices pass to the client as the endpoint sent them,
// inside the gateway's envelope; any other chunk, and every chunk while a
// regenerated answer is being matched against what the client has, is
// decoded in full and takes the path of Chunk.
func (r *relay) RawChunk(data []byte) (bool, string, error) {
	c := r.c
	if c.rq.n == 1 && (c.match == nil || c.match.done()) {
		if s, ok := scanChunk(data); ok {
			if text, ok := s.contentText(); ok {
				payload, err := c.takeScanned(s, text, r.t, r.res, r.continuation)
				return r.after(payload, err)
			}
		}
	}
	var ch openai.ChatCompletionChunk
	_ = json.Unmarshal(data, &ch) // a valid JSON object: openai-go decodes every one (see upstream.RawHandler)
	return r.Chunk(ch)
}

// takeScanned is take for a chunk scanChunk read: text is choice 0's
// content.
func (c *gatewayCall) takeScanned(s chunkScan, text []byte, t target, res *attemptResult, continuation bool) (payload bool, err error) {
	if len(s.model) > 0 && string(s.model) != res.model {
		res.model = upstream.RedactKey(string(s.model), t.ep.APIKey) // a hostile upstream's echo
	}
	if s.n == 0 {
		return false, nil // a chunk without choices (and without usage: scanChunk leaves that to take)
	}
	fingerprint := "" // this chunk's, as chunk renders it; c.fingerprint keeps the last one
	if len(s.fingerprint) > 0 {
		if string(s.fingerprint) != c.rawFingerprint {
			c.rawFingerprint = string(s.fingerprint)
			c.fingerprint = upstream.RedactKey(c.rawFingerprint, t.ep.APIKey)
		}
		fingerprint = c.fingerprint
	}
	var finish string
	if len(s.finish) > 0 {
		finish = string(s.finish)
	}
	payload = c.acc.addText(text, finish)
	if err := c.tooLarge(); err != nil {
		return payload, err
	}
	if !c.rq.stream {
		return payload, nil
	}
	c.out = c.envelope(c.out[:0], t, res.model, fingerprint)
	c.out = append(append(c.out, s.choices...), '}')
	return payload, c.emit(c.out, t, res, payload, finish != "", continuation)
}

// envelope appends the start of a chunk for the client to dst: the
// gateway's id, created time, model, provider and fingerprint, up to and
// with `"choices":`. It renders the fields as chunk does.
func (c *gatewayCall) envelope(dst []byte, t target, model, fingerprint string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, c.id)
	dst = append(dst, `,"object":"chat.completion.chunk","created":`...)
	dst = strconv.AppendInt(dst, c.created, 10)
	dst = append(dst, `,"model":`...)
	dst = appendJSONString(dst, model)
	dst = append(dst, `,"provider":`...)
	dst = appendJSONString(dst, t.ep.Name)
	if fingerprint != "" {
		dst = append(dst, `,"system_fingerprint":`...)
		dst = appendJSONString(dst, fingerprint)
	}
	return append(dst, `,"choices":`...)
}

// appendJSONString appends s as a JSON string, as encoding/json writes it:
// plain text as it is, anything that needs escaping through json.Marshal.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' {
			q, _ := json.Marshal(s) // cannot fail: a string
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
