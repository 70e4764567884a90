package session

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/coder/websocket"
)

// Bounds of a read buffer.
const (
	readBufferStart = 512     // bytes at the first message: a ping or an audio frame fits after one growth
	readBufferKept  = 4 << 10 // a buffer grown past this (a résumé, a screenshot part) is not kept
)

// readBuffers are the message buffers of every connection's reads: a
// connection takes one once a message has begun to arrive and gives it back
// once the message is handled, so an idle connection holds none.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 0, readBufferStart); return &b }}

// next reads the next message and turns it into a session inbox message
// (inbound); the read buffer goes back to readBuffers before it returns,
// since decoding copies what it keeps and an audio frame is its own copy.
func (c *conn) next(ctx context.Context) (msg any, abusive bool, err error) {
	typ, bp, err := c.read(ctx)
	if err != nil {
		return nil, false, err
	}
	defer putReadBuffer(bp)
	msg, abusive = c.inbound(typ, *bp)
	return msg, abusive, nil
}

// read reads the next message into a buffer of readBuffers, which the
// caller gives back with putReadBuffer once it is done with the bytes, so
// that a frame costs no allocation on the read path.
func (c *conn) read(ctx context.Context) (websocket.MessageType, *[]byte, error) {
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	bp := readBuffers.Get().(*[]byte)
	*bp, err = readAll(r, (*bp)[:0])
	if err != nil {
		putReadBuffer(bp)
		return 0, nil, err
	}
	return typ, bp, nil
}

// putReadBuffer gives a read buffer back, unless a large message grew it.
func putReadBuffer(bp *[]byte) {
	if cap(*bp) <= readBufferKept {
		*bp = (*bp)[:0]
		readBuffers.Put(bp)
	}
}

// readAll reads r to its end into b, growing it as needed.
func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// readLoop forwards the client's messages to its session until the
// connection ends. Decoding happens here, off the session goroutine, and so
// does the inbound rate limit: a frame over it is dropped before it costs
// the session anything, and a client that keeps far over it is closed
// with 1008 (it may resume).
func (h *Hub) readLoop(ctx context.Context, c *conn, s *Session) {
	for {
		msg, abusive, err := c.next(context.WithoutCancel(ctx))
		if err != nil {
			return // closed by the client, by our writer, or too large (1009)
		}
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
