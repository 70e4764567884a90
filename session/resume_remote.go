package session

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/rs/zerolog"
)

// Resume across nodes.
//
// With a Config.Resume (redisstore.Store; none for one node), every
// session keeps its resume state there: its header
// (token, subject, profile, level) on each record, and every message it
// sends, through the hub's resumeWriter, which batches them into one round
// trip and never blocks a session (a full queue drops and counts). A hello
// that resumes a session this node does not have loads that state, takes
// the session over and recreates it here with its seq continuing. The
// store checks the resume token, and with auth.secret the hello's subject,
// before it moves anything.
//
// Ownership: the store fences each session by a per-process owner id. The
// resuming node becomes the owner; the old node's copy, if it is alive,
// ends without touching the shared state as soon as it learns: at once
// when the store announces take-overs (TakeoverFeed; redisstore does, by
// pub/sub), and in any case from its next write (each message, or the
// writer's periodic header refresh) and before it starts an answer
// (stillOwned). A resume that lands on a node whose local copy is no
// longer the owner asks the store first and takes the session back the
// same way.

// ResumeStore keeps what a session needs to resume on another node.
type ResumeStore interface {
	// WriteResume applies writes in order, in one round trip where it can,
	// and returns the ids of sessions that another process has taken over;
	// their writes were not applied.
	WriteResume(ctx context.Context, writes []ResumeWrite) (disowned []string, err error)
	// TakeOverAs makes this process the owner of session id if token is
	// its resume token and, unless subject is empty, subject is its
	// subject, and returns its saved state: ErrNoResumeState when none is
	// saved, ErrResumeToken when the token or the subject is wrong (and
	// then nothing changes). A store need not keep the token itself, only
	// what proves it (redisstore.Store keeps a hash).
	TakeOverAs(ctx context.Context, id, token, subject string) (ResumeState, error)
	// Owns reports whether this process still owns session id (true when
	// the store knows nothing of it).
	Owns(ctx context.Context, id string) (bool, error)
}

// TakeoverFeed is a ResumeStore that announces take-overs as they happen,
// so that the node that lost a session stops serving it at once (a
// split brain otherwise lasts until its next write).
type TakeoverFeed interface {
	// WatchTakeovers calls taken with the id of each session that another
	// process takes over, until ctx is done; it blocks until then, and
	// keeps listening across store outages (announcements made meanwhile
	// are lost: the next write tells instead). taken must not block.
	WatchTakeovers(ctx context.Context, taken func(id string))
}

// Errors of ResumeStore.TakeOverAs.
var (
	ErrNoResumeState = errors.New("session: no resume state")
	ErrResumeToken   = errors.New("session: wrong resume token")
)

// ResumeState is a session as another node needs it to resume it. Token
// is the resume token: written by the session, and on TakeOverAs the one
// the client proved.
type ResumeState struct {
	ID, Token, Subject string
	Profile            tiers.Profile
	AutoAnswer         bool
	Level              string // "L1".."L4"
	Node               string // the node that wrote it
	FirstSeq           uint64 // seq of Messages[0]
	Messages           [][]byte
	// LastSeq is the newest seq the session is known to have sent (0:
	// unknown); a kept list that does not reach it back to the client's
	// last_seq is a gap.
	LastSeq uint64
}

// ResumeWrite is one session's part of a WriteResume: its header (State,
// whose Messages are ignored), sent messages with contiguous seqs from
// FirstSeq, or, with Delete, the end of its resume state.
type ResumeWrite struct {
	ID       string
	State    *ResumeState
	FirstSeq uint64
	Messages [][]byte
	Delete   bool
}

// Resume tunables.
const (
	resumeQueue        = 16384                  // writes waiting before new ones are dropped
	resumeBatch        = 1024                   // queued writes taken into one round trip
	resumeMaxMessages  = 256                    // messages per session in one write
	resumeWriteTimeout = time.Second            // one round trip
	resumeRefresh      = 10 * time.Second       // headers re-written (expiry, ownership, catch-up), at most
	resumeRefreshes    = 4                      // header refreshes per resume window, at least
	resumeLoadTimeout  = time.Second            // a resume's take-over read
	resumeOwnsTimeout  = 300 * time.Millisecond // a resume's ownership check of a local copy
	resumeHandoff      = 2 * time.Second        // wait for a disowned local copy to end
)

// remoteOp is one queued resume write: a header, a message or a delete.
type remoteOp struct {
	id    string
	state *ResumeState
	seq   uint64
	msg   []byte
	del   bool
}

// takenOver tells a session that another node owns it now.
type takenOver struct{}

// resumeWriter writes sessions' resume state from its own goroutine, in
// batches. Sessions enqueue without blocking.
type resumeWriter struct {
	store    ResumeStore
	ops      chan remoteOp // many senders; never closed, run ends with ctx
	m        *Metrics
	log      zerolog.Logger
	disowned func(id string)
	refresh  time.Duration // between header refreshes

	headers map[string]*ResumeState // live sessions' last header. Owned by run.
	lastSeq map[string]uint64       // live sessions' newest message seq. Owned by run.
}

func newResumeWriter(rs ResumeStore, cfg Config, disowned func(string)) *resumeWriter {
	return &resumeWriter{store: rs, ops: make(chan remoteOp, resumeQueue), m: cfg.Metrics, log: cfg.Log,
		disowned: disowned, refresh: min(resumeRefresh, cfg.ResumeWindow/resumeRefreshes),
		headers: map[string]*ResumeState{}, lastSeq: map[string]uint64{}}
}

// enqueue never blocks; a dropped message leaves a gap that the store
// notices (the kept messages restart after it).
func (w *resumeWriter) enqueue(op remoteOp) {
	select {
	case w.ops <- op:
	default:
		w.m.storeDropped()
	}
}

// run writes queued ops in batches, and every refresh re-writes the
// live sessions' headers, until ctx is done; then it drains what is queued
// within a bounded time.
func (w *resumeWriter) run(ctx context.Context) {
	t := time.NewTicker(w.refresh)
	defer t.Stop()
	for {
		select {
		case op := <-w.ops:
			w.write(ctx, w.batch(op))
		case <-t.C:
			w.refreshHeaders(ctx)
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*resumeWriteTimeout)
			defer cancel()
			for dctx.Err() == nil {
				select {
				case op := <-w.ops:
					w.write(dctx, w.batch(op))
				default:
					return
				}
			}
			return
		}
	}
}

// batch takes first and whatever else is queued (up to resumeBatch) and
// merges them into one write per session where the seqs allow.
func (w *resumeWriter) batch(first remoteOp) []ResumeWrite {
	var out []ResumeWrite
	last := map[string]int{} // id → index in out of its newest write
	add := func(op remoteOp) {
		i, ok := last[op.id]
		switch {
		case op.del:
			delete(w.headers, op.id)
			delete(w.lastSeq, op.id)
			out = append(out, ResumeWrite{ID: op.id, Delete: true})
			last[op.id] = len(out) - 1
		case op.state != nil:
			op.state.LastSeq = w.lastSeq[op.id]
			w.headers[op.id] = op.state
			if ok && !out[i].Delete {
				out[i].State = op.state
				return
			}
			out = append(out, ResumeWrite{ID: op.id, State: op.state})
			last[op.id] = len(out) - 1
		default:
			w.lastSeq[op.id] = max(w.lastSeq[op.id], op.seq)
			if ok && !out[i].Delete && len(out[i].Messages) < resumeMaxMessages &&
				(len(out[i].Messages) == 0 || op.seq == out[i].FirstSeq+uint64(len(out[i].Messages))) {
				if len(out[i].Messages) == 0 {
					out[i].FirstSeq = op.seq
				}
				out[i].Messages = append(out[i].Messages, op.msg)
				return
			}
			out = append(out, ResumeWrite{ID: op.id, FirstSeq: op.seq, Messages: [][]byte{op.msg}})
			last[op.id] = len(out) - 1
		}
	}
	add(first)
	for range resumeBatch - 1 {
		select {
		case op := <-w.ops:
			add(op)
		default:
			return out
		}
	}
	return out
}

// write sends one batch; sessions that another node took over are told.
func (w *resumeWriter) write(ctx context.Context, writes []ResumeWrite) {
	ctx, cancel := context.WithTimeout(ctx, resumeWriteTimeout)
	defer cancel()
	disowned, err := w.store.WriteResume(ctx, writes)
	if err != nil {
		w.m.storeFailed()
		w.log.Debug().Err(err).Int("writes", len(writes)).Msg("resume state write failed")
		return
	}
	for _, id := range disowned {
		delete(w.headers, id)
		delete(w.lastSeq, id)
		w.disowned(id)
	}
}

// refreshHeaders re-writes every live header: it keeps the keys from expiring,
// restores them after a Redis outage, and tells a session that was taken
// over while it sent nothing.
func (w *resumeWriter) refreshHeaders(ctx context.Context) {
	writes := make([]ResumeWrite, 0, len(w.headers))
	for id, st := range w.headers {
		st.LastSeq = w.lastSeq[id]
		writes = append(writes, ResumeWrite{ID: id, State: st})
	}
	for len(writes) > 0 {
		n := min(len(writes), resumeBatch)
		w.write(ctx, writes[:n])
		writes = writes[n:]
	}
}

// startRemote starts the resume writer when the hub has a ResumeStore.
func (h *Hub) startRemote(ctx context.Context) {
	if h.cfg.Resume == nil {
		return
	}
	h.remote = newResumeWriter(h.cfg.Resume, h.cfg, h.disown)
	h.wg.Go(func() { h.remote.run(ctx) })
	if feed, ok := h.cfg.Resume.(TakeoverFeed); ok {
		h.wg.Go(func() { feed.WatchTakeovers(ctx, h.disown) })
	}
}

// disown tells the local copy of session id, if any, that another node took
// it over. It never blocks.
func (h *Hub) disown(id string) {
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s != nil {
		s.takeOver()
	}
}

// stillOwned reports whether this node still owns s, asking the store
// (bounded by resumeOwnsTimeout; true without a ResumeStore or when the
// store cannot tell in time). An answer goroutine asks before it spends
// anything: a session that moved must not answer on its old connection.
func (s *Session) stillOwned(ctx context.Context) bool {
	w := s.hub.remote
	if w == nil {
		return true
	}
	octx, cancel := context.WithTimeout(ctx, resumeOwnsTimeout)
	defer cancel()
	owned, err := w.store.Owns(octx, s.id)
	return err != nil || owned
}

// ownsLocal reports whether the local copy s may be resumed here: always
// without a ResumeStore or when the store cannot tell in time. When another
// node owns the session, the local copy is told to end and ownsLocal waits
// (bounded) until it has.
func (h *Hub) ownsLocal(ctx context.Context, s *Session) bool {
	if h.remote == nil {
		return true
	}
	octx, cancel := context.WithTimeout(ctx, resumeOwnsTimeout)
	owned, err := h.remote.store.Owns(octx, s.id)
	cancel()
	if err != nil || owned {
		return true
	}
	if s.post(ctx, takenOver{}) {
		select {
		case <-s.done:
		case <-time.After(resumeHandoff):
		case <-ctx.Done():
		}
	}
	return false
}

// resumeRemote resumes a session that this node does not have (or no
// longer owns) from the ResumeStore. With a secret, subject (the hello
// token's) must be the session's, as for a local resume.
func (h *Hub) resumeRemote(ctx context.Context, c *conn, r resumeRequest, subject string) (*Session, *protocolError) {
	if h.remote == nil {
		return nil, refuse(codeUnknownSession, "no live session %q; it may have ended after the resume window", r.SessionID)
	}
	lctx, cancel := context.WithTimeout(ctx, resumeLoadTimeout)
	if h.cfg.Secret == "" {
		subject = "" // anonymous: the resume token alone
	}
	st, err := h.remote.store.TakeOverAs(lctx, r.SessionID, r.Token, subject)
	cancel()
	switch {
	case errors.Is(err, ErrResumeToken):
		return nil, refuse(codeBadResumeToken, "wrong resume token for session %q", r.SessionID)
	case errors.Is(err, ErrNoResumeState):
		return nil, refuse(codeUnknownSession, "no live session %q; it may have ended after the resume window", r.SessionID)
	case err != nil:
		h.cfg.Log.Warn().Err(err).Str("session", r.SessionID).Msg("resume state unavailable")
		return nil, refuse(codeUnknownSession, "session %q cannot be resumed on this node now; start a new session", r.SessionID)
	}
	s, perr := h.restore(st, r.LastSeq)
	if perr != nil {
		return nil, perr
	}
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return nil, refuse(codeUnknownSession, "server shutting down")
	}
	h.sessions[s.id] = s
	h.wg.Go(func() { s.run(h.ctx) })
	h.mu.Unlock()
	s.logger().Info().Str("from_node", st.Node).Uint64("last_seq", r.LastSeq).Msg("session resumed from another node")
	return s, h.attach(ctx, s, c, r.LastSeq, true)
}

// restore recreates a session from its saved state before its run starts.
// Its seqs continue after both what was saved and what the client has.
// An answer that the old node left open is ended as cut, and a session
// whose level the health state no longer supports is restored to the
// supported one on attach (as after a heartbeat loss).
func (h *Hub) restore(st ResumeState, lastSeq uint64) (*Session, *protocolError) {
	n := uint64(len(st.Messages))
	if (n > 0 && lastSeq+1 < st.FirstSeq) || (n == 0 && lastSeq < st.LastSeq) {
		return nil, refuse(codeResumeGap, "messages after seq %d are no longer kept; start a new session", lastSeq)
	}
	s := newSession(h, st.ID, st.Token, st.Subject, st.Profile, st.AutoAnswer)
	level, ok := level.Parse(st.Level)
	if !ok {
		level = h.cfg.Health.Supported()
	}
	s.m = newMachine(level)
	s.heartbeatLost = level != h.cfg.Health.Supported()
	known := n > 0 && lastSeq < st.FirstSeq+n // the store has all the client has
	if known {
		s.replay = restoredReplay(h.cfg.Replay, st.FirstSeq, st.Messages)
	} else {
		s.replay = restoredReplay(h.cfg.Replay, lastSeq+1, nil)
	}
	open, questions := scanRestored(st.Messages)
	s.questions = questions
	if known {
		for _, id := range open {
			s.send(&answerEndMsg{head: head{Type: "answer_end"}, ID: id, Reason: endCut})
		}
	}
	return s, nil
}

// restoredReplay returns a replay whose oldest kept message has seq first.
func restoredReplay(capacity int, first uint64, msgs [][]byte) *replay {
	r := newReplay(capacity)
	r.first = first
	for _, m := range msgs {
		r.add(m)
	}
	return r
}

// scanRestored returns the answers started but not ended in msgs, and the
// highest automatic question number ("q<N>") seen.
func scanRestored(msgs [][]byte) (open []string, questions int) {
	var m struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	started := map[string]bool{}
	var order []string
	for _, b := range msgs {
		m.Type, m.ID = "", ""
		if json.Unmarshal(b, &m) != nil || m.ID == "" {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(m.ID, "q")); err == nil && strings.HasPrefix(m.ID, "q") {
			questions = max(questions, n)
		}
		switch m.Type {
		case "answer_start":
			if !started[m.ID] {
				order = append(order, m.ID)
			}
			started[m.ID] = true
		case "answer_end":
			started[m.ID] = false
		}
	}
	for _, id := range order {
		if started[id] {
			open = append(open, id)
		}
	}
	return open, questions
}

// keepRemote queues a sent message (seq = the replay's newest) for the
// resume state. Run only.
func (s *Session) keepRemote(data []byte) {
	if w := s.hub.remote; w != nil && !s.disowned {
		w.enqueue(remoteOp{id: s.id, seq: s.replay.last(), msg: data})
	}
}

// saveResume queues the session's resume header. Run only.
func (s *Session) saveResume() {
	if w := s.hub.remote; w != nil && !s.disowned {
		w.enqueue(remoteOp{id: s.id, state: &ResumeState{ID: s.id, Token: s.resumeToken, Subject: s.subject,
			Profile: s.profile, AutoAnswer: s.autoAnswer, Level: s.m.level().String(), Node: s.cfg.Node}})
	}
}

// forgetRemote queues the deletion of the resume state when the session
// ends for good. A hub shutting down keeps it, so that the clients resume
// on another node. Run only.
func (s *Session) forgetRemote() {
	if w := s.hub.remote; w != nil && !s.disowned && s.hub.ctx.Err() == nil {
		w.enqueue(remoteOp{id: s.id, del: true})
	}
}

// onTakenOver ends this copy of a session that another node now owns: its
// connection (if any) is closed and run returns without touching the
// shared state. Run only.
func (s *Session) onTakenOver() {
	if s.disowned {
		return
	}
	s.disowned = true
	if s.conn != nil {
		s.conn.close(closeReplaced, "resumed on another node")
		s.conn = nil
	}
	s.logger().Info().Msg("session taken over by another node; this copy ends")
}
