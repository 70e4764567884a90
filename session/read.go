package session

import (
	"context"

	"github.com/coder/websocket"
)

// readLoop forwards the client's messages to its session until the
// connection ends. Decoding happens here, off the session goroutine, and so
// does the inbound rate limit: a frame over it is dropped before it costs
// the session anything, and a client that keeps far over it is closed
// with 1008 (it may resume).
func (h *Hub) readLoop(ctx context.Context, c *conn, s *Session) {
	for {
		typ, data, err := c.ws.Read(context.WithoutCancel(ctx))
		if err != nil {
			return // closed by the client, by our writer, or too large (1009)
		}
		msg, abusive := c.inbound(typ, data)
		if abusive {
			s.log.Warn().Msg("client far over its inbound rate for several seconds; closing its connection")
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
			return audioFrame{c: c, data: data}, false
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
