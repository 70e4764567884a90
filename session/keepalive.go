package session

import (
	"context"
	"sync"
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
// No goroutine waits between pings: a timer's function sends each ping
// and arms the next, so an idle connection costs a timer, not a parked
// goroutine. The connection's handler (serveConn) starts it and calls
// stop when the connection ends; stop returns once a ping in flight has
// returned.
type keepAlive struct {
	c       *conn
	ctx     context.Context // cancelled by stop: ends a ping in flight
	cancel  context.CancelFunc
	every   time.Duration
	timeout time.Duration
	mu      sync.Mutex
	t       *time.Timer    // guarded by mu
	stopped bool           // guarded by mu
	pinging sync.WaitGroup // the ping in flight; Add only under mu while not stopped
}

// startKeepAlive arms c's first ping. ctx is the handler's; it is not
// cancelled when the hub shuts down (a shutdown closes the connection,
// which fails a ping in flight).
func startKeepAlive(ctx context.Context, c *conn, timeout time.Duration) *keepAlive {
	k := &keepAlive{c: c, every: timeout / 3, timeout: timeout}
	k.ctx, k.cancel = context.WithCancel(ctx)
	k.mu.Lock()
	k.t = time.AfterFunc(k.every, k.ping)
	k.mu.Unlock()
	return k
}

// ping runs in the timer's goroutine: it pings, and arms the next ping or
// closes a connection whose pong did not come.
func (k *keepAlive) ping() {
	k.mu.Lock()
	if k.stopped {
		k.mu.Unlock()
		return
	}
	k.pinging.Add(1)
	k.mu.Unlock()
	defer k.pinging.Done()
	pctx, cancel := context.WithTimeout(k.ctx, k.timeout-k.every)
	err := k.c.ws.Ping(pctx)
	cancel()
	if k.ctx.Err() != nil {
		return
	}
	if err != nil {
		k.c.lost.Store(true)
		k.c.ws.CloseNow()
		return
	}
	k.mu.Lock()
	if !k.stopped {
		k.t.Reset(k.every)
	}
	k.mu.Unlock()
}

// stop cancels the next ping and waits for one in flight.
func (k *keepAlive) stop() {
	k.mu.Lock()
	k.stopped = true
	k.t.Stop()
	k.mu.Unlock()
	k.cancel()
	k.pinging.Wait()
}
