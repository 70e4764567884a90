package session

import (
	"bytes"
	"context"
	"io"

	"github.com/coder/websocket"
)

// Bounds of a connection's read buffer.
const (
	readBufferStart = 512     // bytes at the first message: a ping or an audio frame fits after one growth
	readBufferKept  = 4 << 10 // a buffer grown past this (a résumé, a screenshot part) is not kept
)

// read reads the next message into the connection's reused buffer, so
// that a frame costs no allocation on the read path; what goes to the
// session is an audio frame's own copy, or the message decoded from the
// buffer (decoding copies what it keeps). The buffer is the reader's and
// valid until the next read.
func (c *conn) read(ctx context.Context) (websocket.MessageType, []byte, error) {
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	b := c.rbuf[:0]
	if b == nil {
		b = make([]byte, 0, readBufferStart)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, err
		}
	}
	if cap(b) <= readBufferKept {
		c.rbuf = b
	}
	return typ, b, nil
}

// readLoop forwards the client's messages to its session until the
// connection ends. Decoding happens here, off the session goroutine, and so
// does the inbound rate limit: a frame over it is dropped before it costs
// the session anything, and a client that keeps far over it is closed
// with 1008 (it may resume).
func (h *Hub) readLoop(ctx context.Context, c *conn, s *Session) {
	for {
		typ, data, err := c.read(context.WithoutCancel(ctx))
		if err != nil {
			return // closed by the client, by our writer, or too large (1009)
		}
		msg, abusive := c.inbound(typ, data)
		if abusive {
			s.logger().Warn().Msg("client far over its inbound rate for several seconds; closing its connection")
			c.close(websocket.StatusPolicyViolation, abuseCloseMessage)
			return
		}
		if msg != nil && !s.post(ctx, msg) {
			return
		}
	}
}

// inbound turns one frame into a session inbox message: audioFrame,
// clientMsg, or clientBad for a refused message or a too_fast warning. It
// returns nil for a frame dropped without a word, and abusive when the
// client has been far over its rate for long enough to be closed.
func (c *conn) inbound(typ websocket.MessageType, data []byte) (msg any, abusive bool) {
	var v inVerdict
	if typ == websocket.MessageBinary {
		if v = c.in.binary(len(data)); !v.drop {
			return audioFrame{c: c, data: bytes.Clone(data)}, false
		}
	} else if v = c.in.text(len(data)); !v.drop {
		m, perr := decodeInbound(data)
		if v = c.in.message(perr == nil && m.Type == typePing); !v.drop {
			if perr != nil {
				return clientBad{c: c, err: perr}, false
			}
			if m.Type == typeImage {
				return c.img.add(c, m), false
			}
			return clientMsg{c: c, m: m}, false
		}
	}
	if v.warn != nil {
		return clientBad{c: c, err: v.warn}, v.close
	}
	return nil, v.close
}
