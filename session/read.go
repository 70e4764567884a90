package session

import (
	"context"

	"github.com/coder/websocket"
)

// readLoop forwards the client's messages to its session until the
// connection ends. Decoding happens here, off the session goroutine.
func (h *Hub) readLoop(ctx context.Context, c *conn, s *Session) {
	for {
		typ, data, err := c.ws.Read(context.WithoutCancel(ctx))
		if err != nil {
			return // closed by the client, by our writer, or too large (1009)
		}
		var msg any
		switch {
		case typ == websocket.MessageBinary:
			msg = audioFrame{c: c, data: data}
		case len(data) > maxTextMessage:
			msg = clientBad{c: c, err: refuse(codeTooLarge, "text message of %d bytes is over %d", len(data), maxTextMessage)}
		default:
			if m, perr := decodeInbound(data); perr != nil {
				msg = clientBad{c: c, err: perr}
			} else {
				msg = clientMsg{c: c, m: m}
			}
		}
		if !s.post(ctx, msg) {
			return
		}
	}
}
