package session

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Close codes the server uses besides the standard ones.
const (
	closeReplaced websocket.StatusCode = 4001 // a resume attached a newer connection
	closeEnded    websocket.StatusCode = 4002 // the session ended (resume window over)
)

const maxPendingBytes = 1 << 20 // unwritten bytes per connection before it counts as too slow

// conn is one WebSocket connection. Its writeLoop is the only writer.
// Messages wait in a pending list that send appends to without blocking; a
// burst is absorbed, but a connection whose backlog passes its limit (in
// messages or bytes) is too slow and gets closed with 1008, and the client
// resumes. The connection's handler goroutine owns writeLoop and reads.
type conn struct {
	ws      *websocket.Conn
	in      *inRate       // owned by the reader (handshake, then readLoop)
	img     imageParts    // the screenshot being received; owned by the reader
	limit   int           // pending messages allowed
	wake    chan struct{} // capacity 1: pending has messages
	done    chan struct{} // closed by close: the writer closes the socket
	closeMu sync.Once
	mu      sync.Mutex
	pending [][]byte // guarded by mu
	bytes   int      // guarded by mu
	code    websocket.StatusCode
	reason  string
	tooSlow bool        // guarded by mu
	lost    atomic.Bool // keepAlive found the peer dead
}

func newConn(ws *websocket.Conn, limit int) *conn {
	return &conn{ws: ws, in: newInRate(time.Now), limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues encoded messages in order and returns false when the backlog
// already waiting has reached its limit; the messages are then not queued.
// A batch (a resume's replay) always fits behind an empty backlog.
func (c *conn) send(msgs ...[]byte) bool {
	c.mu.Lock()
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	if c.tooSlow || len(c.pending) >= c.limit || c.bytes >= maxPendingBytes {
		c.tooSlow = true
		c.mu.Unlock()
		return false
	}
	c.pending = append(c.pending, msgs...)
	c.bytes += n
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// busy reports whether the backlog is over half its limit; droppable
// messages (partial captions) are skipped then.
func (c *conn) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > c.limit/2
}

// take removes and returns the whole backlog.
func (c *conn) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending
	c.pending, c.bytes = nil, 0
	return p
}

// close asks the writer to close the socket with code, after writing the
// backlog unless the client is too slow; later calls do nothing.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.closeMu.Do(func() {
		c.code, c.reason = code, reason
		close(c.done)
	})
}

// writeLoop writes the backlog, each message within writeTimeout, until
// close is called, a write fails or ctx is done. On return the socket is
// closed, which ends the handler's reads too.
func (c *conn) writeLoop(ctx context.Context) {
	for {
		select {
		case <-c.wake:
			if err := c.write(ctx, c.take()); err != nil {
				c.ws.CloseNow()
				return
			}
		case <-c.done:
			if c.code != websocket.StatusPolicyViolation {
				c.write(ctx, c.take()) // a too-slow client is not waited for
			}
			c.ws.Close(c.code, c.reason)
			return
		case <-ctx.Done():
			c.ws.Close(websocket.StatusGoingAway, "server shutting down")
			return
		}
	}
}

func (c *conn) write(ctx context.Context, msgs [][]byte) error {
	for _, msg := range msgs {
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		err := c.ws.Write(wctx, websocket.MessageText, msg)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// sendError queues an error message outside any session stream (before the
// session exists), with seq 0.
func (c *conn) sendError(e *protocolError) {
	c.send(encode(&errorMsg{head: head{Type: "error"}, Code: e.Code, Message: e.Message}))
}

// encode marshals a server message; every message type marshals cleanly,
// so an error is a programming mistake.
func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(errors.New("session: encode: " + err.Error()))
	}
	return b
}
