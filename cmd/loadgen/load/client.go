package load

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// Resume backoff after a lost connection.
const (
	resumeBackoffMin = 50 * time.Millisecond
	resumeBackoffMax = time.Second
)

// client is one simulated candidate. drive owns every field but rec,
// which its reader shares.
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
	drop   chan struct{} // Run.Drop asks drive to drop the connection; buffered 1
	typed  int           // typed questions asked so far
	nextQ  time.Time     // when the next typed question is due
	audio  audioState
}

func newClient(idx int, cfg *Config) *client {
	seed := uint64(cfg.Seed)
	return &client{
		idx: idx, cfg: cfg, prof: cfg.Profiles[idx%len(cfg.Profiles)], rec: newRecorder(), drop: make(chan struct{}, 1),
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
	go c.readLoop(ws, c.done) // drive waits for done before it returns or replaces ws
}

// readLoop records every message of ws until ws ends, then closes done.
// It ends when the server closes the connection or drive closes it.
func (c *client) readLoop(ws *websocket.Conn, done chan<- struct{}) {
	defer close(done)
	for {
		var m message
		if err := wsjson.Read(context.Background(), ws, &m); err != nil {
			return
		}
		c.rec.onMessage(m, time.Now(), c.prof.AutoAnswer)
	}
}

// drive runs the session's traffic from start: typed questions and audio
// until stop, then a drain until end, resuming after lost connections. It
// closes the connection and waits for its reader before it returns.
func (c *client) drive(ctx context.Context, start, stop, end time.Time) {
	defer c.closeConn()
	// Uniform offsets spread the sessions' questions and utterances over
	// time from the start, as independent candidates' are: no burst.
	if c.prof.Typed {
		c.nextQ = start.Add(time.Duration(c.rng.Int64N(int64(c.prof.QuestionGap))))
	}
	if c.prof.Audio {
		c.audio = newAudioState(c.cfg.Clip, start.Add(time.Duration(c.rng.Int64N(int64(c.cfg.Clip.Duration())))))
	}
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	var frames <-chan time.Time // nil unless the session streams audio
	if c.prof.Audio {
		tick := time.NewTicker(frameDuration)
		defer tick.Stop()
		frames = tick.C
	}
	qTimer := time.NewTimer(time.Until(c.nextQ))
	defer qTimer.Stop()
	if !c.prof.Typed {
		qTimer.Stop()
	}
	stopTimer := time.NewTimer(time.Until(stop))
	defer stopTimer.Stop()
	endTimer := time.NewTimer(time.Until(end))
	defer endTimer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-endTimer.C:
			return
		case <-stopTimer.C:
			if c.audio.started {
				// The server flushes the open utterance as a final.
				_ = send(ctx, c.ws, map[string]any{"type": "audio_stop"}) // a failed write ends the reader
			}
		case <-c.drop:
			c.ws.CloseNow() // the reader ends; done follows
		case <-c.done:
			if !c.reconnect(ctx, end) {
				return
			}
			if c.prof.Typed {
				c.askMissed(time.Now(), stop)
				qTimer.Reset(time.Until(c.nextQ))
			}
		case now := <-qTimer.C:
			if now.Before(stop) {
				c.askTyped(ctx, now)
				qTimer.Reset(time.Until(c.nextQ))
			}
		case now := <-frames:
			if now.Before(stop) {
				c.streamAudio(ctx, now)
			}
		case now := <-ping.C:
			_ = send(ctx, c.ws, map[string]any{"type": "ping", "t": now.UnixMilli()}) // a failed write ends the reader
		}
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
	c.rec.ask(id, text, now)
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
