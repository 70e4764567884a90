package session

import (
	"context"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/rs/zerolog"
)

// Session is one interview session. Its run goroutine owns every field
// marked "Owned by run"; the Hub and the connection handlers talk to it
// only through inbox.
type Session struct {
	id          string
	resumeToken string
	subject     string // token subject, or the session id when anonymous
	hub         *Hub
	cfg         *Config       // the hub's; read only
	inbox       chan any      // many senders (readers, answer goroutines); never closed; run ends with its ctx
	done        chan struct{} // closed when run has returned and cleaned up
	taken       chan struct{} // closed by takeOver: another node owns the session now
	takenOnce   sync.Once

	// Owned by run.
	m             *machine
	profile       tiers.Profile
	autoAnswer    bool
	replay        *replay
	conn          *conn
	heartbeatLost bool
	audioOn       bool
	limits        episodes      // the limits biting now (limit.go)
	audio         *audioStream  // the audio stream started last (untagged frames go to it), or nil
	assist        assist        // the state of the v1 additions (assist.go)
	captions      captionsWatch // the caption chain's state as told to the client (captions.go)
	transcript    []line
	deltas        coalescer // answer deltas waiting to go out together
	q             *question
	questions     int            // the highest "q<N>" wire id given or seen (questionID)
	gen           uint64         // the last generation handed out (next)
	retryLevels   bool           // the next question tries every level: the candidate pressed Reset AI
	disowned      bool           // another node took the session over (resume_remote.go)
	workers       sync.WaitGroup // answer goroutines and pipeline stops; run waits for them before it returns
}

// Inbox messages.
type (
	clientMsg struct {
		c *conn
		m inbound
	}
	clientBad struct {
		c   *conn
		err *protocolError
	}
	audioFrame struct {
		c    *conn
		data []byte
	}
	attachReq struct {
		c       *conn
		lastSeq uint64
		resumed bool
		reply   chan *protocolError // buffered 1
	}
	detached struct{ c *conn }
)

func newSession(h *Hub, id, token, subject string, p tiers.Profile, autoAnswer bool) *Session {
	cfg := &h.cfg
	return &Session{
		id: id, resumeToken: token, subject: subject, hub: h, cfg: cfg,
		inbox:      make(chan any, defaultInbox),
		done:       make(chan struct{}),
		taken:      make(chan struct{}),
		m:          newMachine(cfg.Health.Supported()),
		profile:    p,
		autoAnswer: autoAnswer,
		replay:     newReplay(cfg.Replay),
		deltas:     coalescer{window: cfg.Coalesce},
		assist:     assist{facts: tiers.ExtractFacts(p.Resume, p.Job, cfg.Now())},
	}
}

// logger is the hub's logger with the session's id. It is made on each
// use, not kept: a kept zerolog context costs every session 500 bytes for
// the few lines it logs.
func (s *Session) logger() *zerolog.Logger {
	l := s.cfg.Log.With().Str("session", s.id).Logger()
	return &l
}

// post delivers msg to the session's run goroutine, or gives up when ctx or
// the session is done. While the inbox has room it queues msg without a
// select over the three channels (most posts: audio frames, answer
// events), even for a session that has just ended; a caller that waits
// for a reply also waits on done.
func (s *Session) post(ctx context.Context, msg any) bool {
	select {
	case s.inbox <- msg:
		return true
	default:
	}
	select {
	case s.inbox <- msg:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// takeOver tells run that another node owns the session now; it never
// blocks, and later calls do nothing.
func (s *Session) takeOver() { s.takenOnce.Do(func() { close(s.taken) }) }

// run owns the session until ctx is done or the resume window passes with
// no connection. It recovers a panic so that only this session ends.
func (s *Session) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	sigs, unsubscribe := s.cfg.Health.Subscribe(4)
	defer func() {
		if p := recover(); p != nil {
			s.logger().Error().Interface("panic", p).Bytes("stack", debug.Stack()).Msg("session crashed")
			s.cfg.Metrics.userVisibleError()
		}
		unsubscribe()
		s.limits.stop()
		s.deltas.stop()
		cancel()
		s.stopAudio()
		s.workers.Wait()
		s.end()
	}()
	s.started()
	s.captionsNow() // arms s.captions.changed
	heartbeat := time.NewTimer(s.cfg.HeartbeatTimeout)
	defer heartbeat.Stop()
	resume := resumeWindow{d: s.cfg.ResumeWindow}
	resume.start()
	defer resume.halt()
	connected := false
	for {
		select { // a take-over goes first: nothing more for the old connection
		case <-s.taken:
			s.onTakenOver()
			return
		default:
		}
		var sla <-chan time.Time
		if s.q != nil && s.q.sla != nil {
			sla = s.q.sla.C
		}
		select {
		case <-ctx.Done():
			return
		case msg := <-s.inbox:
			if s.handleBatch(ctx, msg) {
				heartbeat.Reset(s.cfg.HeartbeatTimeout)
			}
		case sig := <-sigs:
			s.onHealth(ctx, sig)
		case <-s.captions.changed:
			s.onCaptionsChanged()
		case <-s.taken:
			s.onTakenOver()
		case <-heartbeat.C:
			s.onHeartbeatLost(ctx)
		case <-sla:
			s.onSLA()
		case <-s.limits.lifted():
			s.onLimitTimer()
		case <-s.deltas.due():
			s.flushDelta()
		case <-resume.c():
			if s.conn == nil {
				s.logger().Info().Msg("resume window over; session ends")
				return
			}
		}
		if s.disowned {
			return
		}
		// The resume window runs while no connection is attached.
		if now := s.conn != nil; now != connected {
			connected = now
			if connected {
				resume.halt()
			} else {
				resume.start()
			}
		}
	}
}

// resumeWindow times the resume window of a session with no connection.
// Its timer exists only while the window runs, so a connected session
// keeps none and run's select waits on one channel fewer. Owned by run.
type resumeWindow struct {
	d time.Duration
	t *time.Timer // nil while connected
}

func (w *resumeWindow) start() { w.halt(); w.t = time.NewTimer(w.d) }

func (w *resumeWindow) halt() {
	if w.t != nil {
		w.t.Stop()
		w.t = nil
	}
}

// c fires when the window is over; nil while it does not run.
func (w *resumeWindow) c() <-chan time.Time {
	if w.t == nil {
		return nil
	}
	return w.t.C
}

// inboxBatch is how many inbox messages run takes at most per turn of its
// select: a burst (audio frames, answer events) costs one select over
// every channel, not one each, while timers and signals wait at most a
// batch.
const inboxBatch = 16

// handleBatch handles msg and up to inboxBatch-1 more that already wait,
// and reports whether any came from the client. It stops early once the
// session is disowned or taken over (nothing more for the old
// connection).
func (s *Session) handleBatch(ctx context.Context, msg any) (fromClient bool) {
	fromClient = s.handle(ctx, msg)
	for range inboxBatch - 1 {
		if s.disowned {
			return fromClient
		}
		select {
		case <-s.taken:
			return fromClient // run's next turn handles it first
		default:
		}
		select {
		case msg := <-s.inbox:
			fromClient = s.handle(ctx, msg) || fromClient
		default:
			return fromClient
		}
	}
	return fromClient
}

// handle processes one inbox message and reports whether it came from the
// client (which keeps the heartbeat alive).
func (s *Session) handle(ctx context.Context, msg any) (fromClient bool) {
	switch m := msg.(type) {
	case attachReq:
		m.reply <- s.attach(ctx, m)
		return true
	case detached:
		if m.c == s.conn {
			s.conn = nil
			s.record()
		}
	case clientMsg:
		if m.c != s.conn {
			return false
		}
		s.clientAlive(ctx)
		s.onClient(ctx, m.m)
		return true
	case clientBad:
		if m.c != s.conn {
			return false
		}
		s.clientAlive(ctx)
		s.sendError(m.err)
		return true
	case audioFrame:
		if m.c != s.conn {
			return false
		}
		s.clientAlive(ctx)
		s.onAudio(m.data)
		return true
	case answerEvent:
		s.onAnswerEvent(m)
	case answerDone:
		s.onAnswerDone(m)
	case captionEvent:
		s.onCaption(ctx, m)
	case fileRead:
		s.onFileRead(m)
	case takenOver:
		s.onTakenOver()
	}
	return false
}

// attach makes c the session's connection: it sends welcome, then every
// message after lastSeq, then the live stream. A previous connection is
// closed.
func (s *Session) attach(ctx context.Context, a attachReq) *protocolError {
	backlog, ok := s.replay.after(a.lastSeq)
	if !ok {
		return refuse(codeResumeGap, "messages after seq %d are no longer kept; start a new session", a.lastSeq)
	}
	if s.conn != nil && s.conn != a.c {
		s.conn.close(closeReplaced, "resumed on another connection")
	}
	s.conn = a.c
	level := s.m.level()
	welcome := encode(welcomeMsg{Type: "welcome", SessionID: s.id, ResumeToken: s.resumeToken,
		Resumed: a.resumed, LastSeq: s.replay.last(), Level: level.String(), Chip: chipFor(level, s.profile.Lang)})
	s.conn.send(append([][]byte{welcome}, backlog...)...)
	s.captionsAfterWelcome(a.resumed)
	s.record()
	if s.heartbeatLost {
		s.clientAlive(ctx)
	}
	return nil
}

// clientAlive restores a session whose heartbeat was lost to the level the
// shared health state supports now.
func (s *Session) clientAlive(ctx context.Context) {
	if !s.heartbeatLost {
		return
	}
	s.heartbeatLost = false
	if target := s.cfg.Health.Supported(); target != s.m.level() {
		s.transition(ctx, restoreTo(target))
	}
}

func (s *Session) onHeartbeatLost(ctx context.Context) {
	if s.heartbeatLost {
		return
	}
	s.heartbeatLost = true
	s.transition(ctx, evHeartbeatLost)
}

// onHealth moves the session to follow the shared health state: down while
// its level is better than what is supported, and one step up on a
// recovery (or straight to the supported level when the levels between are
// still down; the reason is recovered either way: restore is only for a
// session coming back after a heartbeat loss). A session whose client is silent stays at L4 until it returns.
func (s *Session) onHealth(ctx context.Context, sig tiers.Signal) {
	if s.heartbeatLost {
		return
	}
	target := s.cfg.Health.Supported()
	for cur := s.m.level(); cur < target; cur = s.m.level() {
		if !s.transition(ctx, level.DownEvent(cur)) {
			break
		}
	}
	cur := s.m.level()
	if sig.Event != evRecovered || cur <= target {
		return
	}
	if target == cur-1 {
		s.transition(ctx, evRecovered)
	} else {
		s.transition(ctx, recoverTo(target)) // several levels at once: still "recovered"
	}
}

// transition fires an FSM event and, when the level changes, tells the
// client, the ops store and the metrics. It reports whether the level
// changed.
func (s *Session) transition(ctx context.Context, event string) bool {
	from := s.m.level()
	changed, err := s.m.fire(ctx, event)
	if err != nil {
		s.logger().Error().Err(err).Msg("level transition failed")
		return false
	}
	if !changed {
		return false
	}
	at := s.cfg.Now()
	to := s.m.level()
	reason, _, _ := strings.Cut(event, ":") // restoreTo and recoverTo name their destination after a colon
	s.send(&levelMsg{head: head{Type: "level"}, Level: to.String(), From: from.String(), Reason: reason,
		Chip: chipFor(to, s.profile.Lang)})
	s.cfg.Metrics.levelLeave(from.String())
	s.cfg.Metrics.levelEnter(to.String())
	s.cfg.Metrics.transition(from.String(), to.String(), reason)
	t := Transition{Session: s.id, From: from.String(), To: to.String(), Reason: reason, Node: s.cfg.Node, At: at}
	s.hub.rec.enqueue(func(ctx context.Context) error { return s.cfg.Store.AddTransition(ctx, t) })
	s.record()
	s.logger().Info().Str("from", from.String()).Str("to", to.String()).Str("reason", reason).Msg("level changed")
	return true
}

// send stamps m with the next seq, keeps it for resume and queues it to the
// connection, after the answer delta text gathered so far (coalescer). A
// connection whose queue is full is closed as too slow; the message stays
// in the replay buffer for the client's resume.
func (s *Session) send(m outbound) {
	s.flushDelta()
	s.emit(m)
}

// emit is send without the flush.
func (s *Session) emit(m outbound) {
	m.header().Seq = s.replay.last() + 1
	data := encode(m)
	s.replay.add(data)
	s.keepRemote(data)
	if s.conn != nil && !s.conn.send(data) {
		s.logger().Warn().Msg("client too slow; closing its connection")
		s.cfg.Metrics.slowClient()
		s.conn.close(websocket.StatusPolicyViolation, "client too slow to read its messages")
		s.conn = nil
		s.record()
	}
}

// sendsNow reports whether a droppable message would go out now: the
// connection is attached and not busy. A message dropped instead gets no
// seq, so the client sees no gap.
func (s *Session) sendsNow() bool {
	return s.conn != nil && !s.conn.busy()
}

// next hands out a new generation: every question (with its answer
// attempt) and every audio pipeline takes one, and their results carry it
// back, so that run matches results by generation and never by a wire id
// the client chose. Run only.
func (s *Session) next() uint64 {
	s.gen++
	return s.gen
}

func (s *Session) sendError(e *protocolError) {
	s.send(&errorMsg{head: head{Type: "error"}, Code: e.Code, Message: e.Message, Reason: e.Reason})
}

// record queues the session's ops record.
func (s *Session) record() {
	r := SessionRecord{ID: s.id, Node: s.cfg.Node, Level: s.m.level().String(), Lang: s.profile.Lang,
		Seniority: s.profile.Seniority, Connected: s.conn != nil, Limit: s.limits.active, UpdatedAt: s.cfg.Now()}
	s.hub.rec.enqueue(func(ctx context.Context) error { return s.cfg.Store.PutSession(ctx, r) })
	s.saveResume()
}

func (s *Session) started() {
	s.cfg.Metrics.sessionStarted()
	s.cfg.Metrics.levelEnter(s.m.level().String())
	s.record()
	subject, id := s.subject, s.id
	s.hub.rec.enqueue(func(ctx context.Context) error { return s.hub.limiter.HoldSession(ctx, subject, id) })
}

// end releases the session: its connection is closed and the ops view
// forgets it. Called by run only, after every answer goroutine returned.
func (s *Session) end() {
	if !s.disowned {
		s.flushDelta()
	}
	if s.conn != nil {
		s.conn.close(closeEnded, "session ended")
		s.conn = nil
	}
	s.cfg.Metrics.levelLeave(s.m.level().String())
	s.cfg.Metrics.sessionEnded()
	id, subject := s.id, s.subject
	s.hub.rec.enqueue(func(ctx context.Context) error { return s.cfg.Store.DeleteSession(ctx, id) })
	if !s.disowned { // a session taken over lives on, and is held, on its new node
		s.hub.rec.enqueue(func(ctx context.Context) error { return s.hub.limiter.ReleaseSession(ctx, subject, id) })
	}
	s.forgetRemote()
	s.hub.forget(s)
	close(s.done)
}
