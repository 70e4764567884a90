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

// conn is one WebSocket connection. Its writer (writeLoop) is the only
// writer, and runs only while there is something to write: send starts it
// when messages wait and none runs, and it returns once the backlog is
// written, so an idle connection costs no goroutine. Messages wait in a
// pending list that send appends to without blocking; a burst is
// absorbed, but a connection whose backlog passes its limit (in messages
// or bytes) is too slow and gets closed with 1008, and the client
// resumes. The connection's handler goroutine reads, and waits for the
// writer (wait) after close.
type conn struct {
	ws      *websocket.Conn
	ctx     context.Context // bounds each write with writeTimeout; the hub's
	in      *inRate         // owned by the reader (handshake, then readLoop)
	img     imageParts      // the screenshot being received; owned by the reader
	limit   int             // pending messages allowed
	writers sync.WaitGroup  // the writer, while it runs
	mu      sync.Mutex
	pending [][]byte // guarded by mu
	bytes   int      // guarded by mu
	writing bool     // guarded by mu: a writer runs
	closing bool     // guarded by mu: close was called; the writer closes the socket
	over    bool     // guarded by mu: the socket is closed; nothing more is written
	code    websocket.StatusCode
	reason  string
	tooSlow bool        // guarded by mu
	lost    atomic.Bool // keepAlive found the peer dead
	bound   writeBound  // owned by the running writer
}

func newConn(ctx context.Context, ws *websocket.Conn, limit int) *conn {
	return &conn{ws: ws, ctx: ctx, in: newInRate(time.Now), limit: limit}
}

// send queues encoded messages in order and returns false when the backlog
// already waiting has reached its limit; the messages are then not queued.
// A batch (a resume's replay) always fits behind an empty backlog.
func (c *conn) send(msgs ...[]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	if c.tooSlow || len(c.pending) >= c.limit || c.bytes >= maxPendingBytes {
		c.tooSlow = true
		return false
	}
	if c.over {
		return true // the socket is closed: the messages stay in the replay buffer
	}
	c.pending = append(c.pending, msgs...)
	c.bytes += n
	c.startWriter()
	return true
}

// startWriter starts the writer unless one runs or the socket is closed.
// Called with mu held: an Add happens before the handler's wait, which
// follows close.
func (c *conn) startWriter() {
	if c.writing || c.over {
		return
	}
	c.writing = true
	c.writers.Go(c.writeLoop)
}

// busy reports whether the backlog is over half its limit; droppable
// messages (partial captions) are skipped then.
func (c *conn) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > c.limit/2
}

// close asks the writer to close the socket with code, after writing the
// backlog unless the client is too slow (1008); later calls do nothing.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return
	}
	c.closing, c.code, c.reason = true, code, reason
	if code == websocket.StatusPolicyViolation {
		c.pending, c.bytes = nil, 0 // a too-slow client is not waited for
	}
	c.startWriter()
}

// wait returns when the writer has returned. The handler calls it after
// close, so the socket is closed by then.
func (c *conn) wait() { c.writers.Wait() }

// writeLoop writes the backlog, each message within writeTimeout (less up
// to writeRenew: writeBound), until it is empty, then returns; after close
// it closes the socket once the backlog is written. A failed write closes
// the socket at once, which ends the handler's reads too.
func (c *conn) writeLoop() {
	for {
		c.mu.Lock()
		msgs, closing := c.pending, c.closing
		c.pending, c.bytes = nil, 0
		if len(msgs) == 0 {
			if closing {
				c.over = true
				c.bound.stop()
			}
			c.writing = false
			c.mu.Unlock()
			if closing {
				c.ws.Close(c.code, c.reason)
			}
			return
		}
		c.mu.Unlock()
		if err := c.write(msgs); err != nil {
			c.mu.Lock()
			c.bound.stop()
			c.over, c.writing, c.pending, c.bytes = true, false, nil, 0
			c.mu.Unlock()
			c.ws.CloseNow()
			return
		}
	}
}

func (c *conn) write(msgs [][]byte) error {
	for _, msg := range msgs {
		if err := c.ws.Write(c.bound.get(c.ctx, time.Now()), websocket.MessageText, msg); err != nil {
			return err
		}
	}
	return nil
}

// writeBound is the writers' write context. One deadline context serves
// the writes of writeRenew, so each message still gets writeTimeout less
// up to writeRenew, and a write costs no context and timer of its own
// (they were about 3% of poise's CPU at 1,000 sessions). The last one
// lapses by itself when a connection goes idle, and stop releases it when
// the socket closes. Owned by the running writer: send hands that role on
// under conn.mu.
type writeBound struct {
	ctx    context.Context
	cancel context.CancelFunc
	renew  time.Time // when a write needs a new ctx
}

// get returns the context to write with at now.
func (w *writeBound) get(parent context.Context, now time.Time) context.Context {
	if w.ctx == nil || !now.Before(w.renew) {
		w.stop()
		w.ctx, w.cancel = context.WithDeadline(parent, now.Add(writeTimeout))
		w.renew = now.Add(writeRenew)
	}
	return w.ctx
}

// stop releases the context and its timer.
func (w *writeBound) stop() {
	if w.cancel != nil {
		w.cancel()
		w.ctx, w.cancel = nil, nil
	}
}

// sendError queues an error message outside any session stream (before the
// session exists), with seq 0.
func (c *conn) sendError(e *protocolError) {
	c.send(encode(&errorMsg{head: head{Type: "error"}, Code: e.Code, Message: e.Message}))
}

// encode marshals a server message; every message type marshals cleanly,
// so an error is a programming mistake.
func encode(v any) []byte {
	if d, ok := v.(*answerDeltaMsg); ok {
		return d.appendJSON(make([]byte, 0, 64+len(d.Type)+len(d.ID)+len(d.Text)+len(d.Text)/8))
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(errors.New("session: encode: " + err.Error()))
	}
	return b
}
