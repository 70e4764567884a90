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
	in      *inRate        // owned by the reader (handshake, then readLoop)
	img     imageParts     // the screenshot being received; owned by the reader
	limit   int            // pending messages allowed
	writers sync.WaitGroup // the writer, while it runs
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
	// writeTimer closes the socket when one write lasts writeTimeout (see
	// write). Owned by the running writer: send hands that role on under mu.
	writeTimer *time.Timer
}

func newConn(ws *websocket.Conn, limit int) *conn {
	return &conn{ws: ws, in: newInRate(time.Now), limit: limit}
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

// writeLoop writes the backlog, each message within writeTimeout, until it
// is empty, then returns; after close it closes the socket once the
// backlog is written. A failed write closes the socket at once, which ends
// the handler's reads too.
func (c *conn) writeLoop() {
	for {
		c.mu.Lock()
		msgs, closing := c.pending, c.closing
		c.pending, c.bytes = nil, 0
		if len(msgs) == 0 {
			if closing {
				c.over = true
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
			c.over, c.writing, c.pending, c.bytes = true, false, nil, 0
			c.mu.Unlock()
			c.ws.CloseNow()
			return
		}
	}
}

// write writes msgs in order. Each write is bounded by writeTimer, armed
// before it and stopped after it: when it fires, it closes the
// socket, which fails the write. ws.Write gets a context that is never
// done, so coder/websocket arms nothing of its own per write (its
// context.AfterFunc on a deadline context, one per message, was 2.4% of
// poise's CPU at 1,000 sessions).
func (c *conn) write(msgs [][]byte) error {
	for _, msg := range msgs {
		c.armWrite()
		err := c.ws.Write(context.Background(), websocket.MessageText, msg)
		c.writeTimer.Stop()
		if err != nil {
			return err
		}
	}
	return nil
}

// armWrite starts writeTimer anew: the socket closes writeTimeout from now
// unless the timer is stopped or armed again first.
func (c *conn) armWrite() {
	if c.writeTimer == nil {
		c.writeTimer = time.AfterFunc(writeTimeout, func() { c.ws.CloseNow() })
		return
	}
	c.writeTimer.Reset(writeTimeout)
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
