package load

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Resume backoff after a lost connection.
const (
	resumeBackoffMin = 50 * time.Millisecond
	resumeBackoffMax = time.Second
)

// client is one simulated candidate. Its pacer owns every field but rec,
// which the reader shares, and buf and ended, which the reader of the
// current connection writes; while the session reconnects, the
// reconnecting goroutine owns it until it hands it back.
type client struct {
	idx    int
	cfg    *Config
	prof   Profile
	rec    *recorder
	rng    *rand.Rand
	server int // index of the server the session is on
	rs     resumeState
	ws     *websocket.Conn
	done   chan struct{} // closed by the reader of ws when ws ends
	// ended is set by the reader of ws as it ends, dropAsked by Run.Drop:
	// flags the pacer polls each tick, cheaper than a select per session.
	ended, dropAsked atomic.Bool
	typed            int       // typed questions asked so far
	nextQ            time.Time // when the next typed question is due
	ping             time.Time // when the next heartbeat is due
	audio            audioState
	// stopped: audio_stop was sent on this connection; away: the session
	// is reconnecting; gone: it could not, and its traffic is over.
	stopped, away, gone bool
	buf                 bytes.Buffer // the current reader's message buffer
}

func newClient(idx int, cfg *Config) *client {
	seed := uint64(cfg.Seed)
	return &client{
		idx: idx, cfg: cfg, prof: cfg.Profiles[idx%len(cfg.Profiles)], rec: newRecorder(),
		rng:    rand.New(rand.NewPCG(seed, uint64(idx)+1)),
		server: idx % len(cfg.Servers),
	}
}

// dial opens the session's first connection and starts its reader.
func (c *client) dial(ctx context.Context) error {
	ws, m, err := open(ctx, c.cfg.Servers[c.server], c.prof, nil, c.cfg.Headers, c.cfg.DialTimeout)
	if err != nil {
		return err
	}
	c.attach(ws, m, false)
	return nil
}

// attach makes ws the session's connection and starts its reader.
func (c *client) attach(ws *websocket.Conn, welcome message, resuming bool) {
	c.rec.welcome(welcome, time.Now(), resuming)
	c.rs.sessionID, c.rs.token = welcome.SessionID, welcome.ResumeToken
	c.ws = ws
	c.done = make(chan struct{})
	c.ended.Store(false)      // the previous reader, if any, has ended
	go c.readLoop(ws, c.done) // the owner waits for done before it replaces ws or ends
}

// readLoop records every message of ws until ws ends, then closes done.
// It ends when the server closes the connection, the owner closes it, or
// a message is not JSON. An answer_delta, most of the traffic, is only
// counted by its seq (fastSeq); the rest are decoded.
func (c *client) readLoop(ws *websocket.Conn, done chan<- struct{}) {
	defer close(done)
	defer c.ended.Store(true)
	for {
		_, r, err := ws.Reader(context.Background())
		if err != nil {
			return
		}
		c.buf.Reset()
		if _, err := c.buf.ReadFrom(r); err != nil {
			return
		}
		now := time.Now()
		if seq, ok := fastSeq(c.buf.Bytes()); ok {
			c.rec.onSeq(seq)
			continue
		}
		var m message
		if json.Unmarshal(c.buf.Bytes(), &m) != nil {
			return
		}
		c.rec.onMessage(m, now, c.prof.AutoAnswer)
	}
}

// begin schedules the session's first question, audio and heartbeat.
// Uniform offsets spread the sessions' questions and utterances over time
// from the start, as independent candidates' are: no burst.
func (c *client) begin(start time.Time) {
	if c.prof.Typed {
		c.nextQ = start.Add(time.Duration(c.rng.Int64N(int64(c.prof.QuestionGap))))
	}
	if c.prof.Audio {
		c.audio = newAudioState(c.cfg.Clip, start.Add(time.Duration(c.rng.Int64N(int64(c.cfg.Clip.Duration())))))
	}
	c.ping = start.Add(pingEvery)
}

// tick sends what is due at now: until stop typed questions and audio
// frames, then audio_stop once; a heartbeat every pingEvery. ctx bounds
// the writes. It reports whether the connection is lost (its reader
// ended, or Run.Drop dropped it): the caller must reconnect.
func (c *client) tick(ctx context.Context, now, stop time.Time) bool {
	if c.ended.Load() {
		return true
	}
	if c.dropAsked.Load() && c.dropAsked.Swap(false) {
		c.ws.CloseNow() // a lost network: no close handshake
		return true
	}
	if now.Before(stop) {
		if c.prof.Typed && !now.Before(c.nextQ) {
			c.askTyped(ctx, now)
		}
		if c.prof.Audio {
			c.streamAudio(ctx, now)
		}
	} else if c.audio.started && !c.stopped {
		c.stopped = true
		// The server flushes the open utterance as a final: one cut
		// mid-speech ends here.
		if c.audio.speaking() {
			c.rec.uttEnded(c.audio.nextUtt, time.Now())
		}
		_ = send(ctx, c.ws, map[string]any{"type": "audio_stop"}) // a failed write ends the reader
	}
	if !now.Before(c.ping) {
		c.ping = now.Add(pingEvery)
		_ = send(ctx, c.ws, map[string]any{"type": "ping", "t": now.UnixMilli()}) // a failed write ends the reader
	}
	return false
}

// resumed goes on after a reconnect: the questions that fell due while
// offline were coached by the browser.
func (c *client) resumed(now, stop time.Time) {
	c.stopped = false
	if c.prof.Typed {
		c.askMissed(now, stop)
	}
}

// gap is a seeded question gap: QuestionGap ±25%.
func (c *client) gap() time.Duration {
	g := c.prof.QuestionGap
	return g*3/4 + time.Duration(c.rng.Int64N(int64(g/2)+1))
}

func (c *client) question() string {
	qs := c.cfg.Questions[c.prof.Lang]
	return qs[c.rng.IntN(len(qs))]
}

// askTyped sends the next typed question and schedules the one after.
func (c *client) askTyped(ctx context.Context, now time.Time) {
	c.typed++
	id, text := "t"+strconv.Itoa(c.typed), c.question()
	c.rec.ask(id, text, time.Now())                                                 // when it is sent: the tick may run late
	_ = send(ctx, c.ws, map[string]any{"type": "question", "id": id, "text": text}) // a failed write ends the reader
	c.nextQ = now.Add(c.gap())
}

// askMissed records the questions that fell due while the session had no
// connection: the browser coached those on its own.
func (c *client) askMissed(now, stop time.Time) {
	for !c.nextQ.After(now) && c.nextQ.Before(stop) {
		c.typed++
		c.rec.askOffline("t"+strconv.Itoa(c.typed), c.question(), c.nextQ)
		c.nextQ = c.nextQ.Add(c.gap())
	}
}

// reconnect resumes the session after its connection died, on the next
// server in turn, until it succeeds or end passes. A session the servers
// no longer know is started anew (and counted as lost).
func (c *client) reconnect(ctx context.Context, end time.Time) bool {
	c.closeConn()
	c.rec.lostConnection(time.Now())
	c.audio.restart(time.Now())
	backoff := resumeBackoffMin
	deadline := time.Now().Add(c.cfg.ResumeWithin)
	if end.Before(deadline) {
		deadline = end
	}
	for time.Now().Before(deadline) {
		c.rs.lastSeq = c.rec.seq()
		c.server = (c.server + 1) % len(c.cfg.Servers)
		rs := &c.rs
		ws, m, err := open(ctx, c.cfg.Servers[c.server], c.prof, rs, c.cfg.Headers, time.Until(deadline))
		if isRefused(err, "unknown_session", "resume_gap") {
			ws, m, err = open(ctx, c.cfg.Servers[c.server], c.prof, nil, c.cfg.Headers, time.Until(deadline))
		}
		if err == nil {
			c.attach(ws, m, true)
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, resumeBackoffMax)
	}
	return false
}

// closeConn closes the connection, if any, and waits for its reader.
func (c *client) closeConn() {
	if c.ws == nil {
		return
	}
	c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.done
	c.ws = nil
}
