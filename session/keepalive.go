package session

import (
	"context"
	"time"
)

// keepAlive finds a dead peer: a client that vanished without a FIN or a
// RST (a laptop lid closed, a phone off Wi-Fi) leaves its socket open for
// as long as the kernel keeps retrying, about 15 minutes. Every third of
// timeout it pings the client and waits the rest of timeout for the pong;
// a pong that does not come closes the socket at once, which ends the
// connection's reads as if the client had closed it: the session is
// detached and its resume window starts. So a vanished client is found
// within timeout. The client's pongs come through the reader (readLoop),
// which coder/websocket needs for a ping to complete.
//
// keepAlive runs beside the connection's reader and writer and returns
// when ctx is done; its caller (serveConn) cancels ctx when the
// connection ends and waits for it.
func (c *conn) keepAlive(ctx context.Context, timeout time.Duration) {
	every := timeout / 3
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, timeout-every)
		err := c.ws.Ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.lost.Store(true)
			c.ws.CloseNow()
			return
		}
		t.Reset(every)
	}
}
