package session

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/web/access"
)

// Hub accepts WebSocket connections on /ws and creates, resumes and ends
// sessions. It owns every session goroutine and connection handler and
// waits for them in Shutdown.
type Hub struct {
	cfg    Config
	rec    *recorder
	remote *resumeWriter   // nil without Config.Resume (resume_remote.go)
	ctx    context.Context // parent of every session and connection; cancelled by Shutdown
	cancel context.CancelFunc
	wg     sync.WaitGroup // sessions, handlers and the recorder

	mu       sync.Mutex
	closing  bool
	sessions map[string]*Session
	conns    map[*conn]struct{}
	limiter  *quota.Limiter
	lobby    *lobby   // connections that have not said hello
	origins  []string // AllowedOrigins with the bare host of each "host:*"
}

// NewHub returns a Hub ready to serve; call Shutdown to end it.
func NewHub(cfg Config) *Hub {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{cfg: cfg, ctx: ctx, cancel: cancel, sessions: make(map[string]*Session),
		conns: make(map[*conn]struct{}), limiter: quota.NewLimiter(cfg.Limits, cfg.Counters, cfg.Now, cfg.Log), origins: originPatterns(cfg.AllowedOrigins),
		lobby: newLobby(cfg.PreHelloMax, cfg.PreHelloPerAddr)}
	h.rec = newRecorder(cfg.Store, cfg.Metrics, cfg.Log)
	h.wg.Go(func() { h.rec.run(ctx) })
	h.startRemote(ctx)
	return h
}

// Ready reports whether the hub takes new sessions.
func (h *Hub) Ready() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.closing
}

// Len returns the number of live sessions.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// Shutdown stops taking connections, closes every client with 1001 (going
// away), ends every session and waits for all of them until ctx is done.
func (h *Hub) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	for c := range h.conns {
		c.close(websocket.StatusGoingAway, "server shutting down")
	}
	h.mu.Unlock()
	h.cancel()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("session: shutdown: sessions still running: " + ctx.Err().Error())
	}
}

// ServeHTTP upgrades a request to a WebSocket and hands the connection to
// a handler goroutine of the hub (serveUpgraded), then returns: net/http's
// goroutine, with its grown stack and the upgrade request, is gone while
// the connection lives. A hello that fails authentication (authenticate)
// gets one `unauthorized` error and a 1008 close; nothing is created.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.Ready() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(slimUpgrade{w}, r, &websocket.AcceptOptions{OriginPatterns: h.origins})
	if err != nil {
		return // Accept wrote the response
	}
	ws.SetReadLimit(readLimit)
	c := newConn(ws, h.cfg.SendQueue)
	if !h.track(c) {
		ws.Close(websocket.StatusGoingAway, "server shutting down")
		ws.CloseNow()
		return
	}
	local, addr := access.Local(r), access.ClientAddr(r)
	go h.serveUpgraded(c, local, addr) // tracked: endConn takes it out of h.wg
}

// serveUpgraded runs one upgraded connection's handshake, then hands the
// connection to a fresh goroutine of the hub for its reads (readConn) and
// returns: the handshake (decoding the hello, opening the session) grows a
// goroutine's stack far past what a read parked for the next message
// needs, and a stack shrinks only to four times its use, so a connection
// that then idles would keep the handshake's stack for its life. track
// counted the connection in h.wg; endConn, at its end, takes it out.
func (h *Hub) serveUpgraded(c *conn, local bool, addr string) {
	leave := h.lobby.enter(c, addr)
	s := h.handshake(h.ctx, c, local)
	leave()
	if s == nil {
		h.endConn(c)
		return
	}
	go h.readConn(c, s) // owned by h.wg through track, as this goroutine was
}

// readConn forwards the client's messages to its session until the
// connection ends, then ends it. The writer runs beside it while there is
// something to write. Each ends the other: the reader by close, the
// writer by closing the socket.
func (h *Hub) readConn(c *conn, s *Session) {
	defer h.endConn(c)
	pinger := startKeepAlive(context.WithoutCancel(h.ctx), c, h.cfg.DeadPeerTimeout)
	defer pinger.stop()
	defer s.post(h.ctx, detached{c: c})
	h.readLoop(h.ctx, c, s)
	if c.lost.Load() {
		s.logger().Info().Dur("dead_peer_timeout", h.cfg.DeadPeerTimeout).Msg("client stopped answering pings; connection lost, resume window starts")
	}
}

// endConn closes c (after its backlog), waits for its writer and takes it
// out of the hub's count.
func (h *Hub) endConn(c *conn) {
	c.close(websocket.StatusNormalClosure, "")
	c.wait()
	c.ws.CloseNow()
	h.untrack(c)
}

func (h *Hub) track(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.conns[c] = struct{}{}
	h.wg.Add(1)
	return true
}

func (h *Hub) untrack(c *conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	h.wg.Done()
}

// handshake reads messages until a valid hello starts or resumes a session,
// answering each bad one with an error, within handshakeTimeout. An
// unauthorized hello ends the connection instead (reject).
func (h *Hub) handshake(ctx context.Context, c *conn, local bool) *Session {
	// Reads never use the hub's context: a context cancelled during Read
	// closes the socket at once, and a shutdown must first send 1001. The
	// writer closing the socket is what ends a read.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handshakeTimeout)
	defer cancel()
	for {
		// The inbound rate limit holds before hello too: junk sent while
		// the handshake waits is dropped, and a flood is closed.
		msg, abusive, err := c.next(hctx)
		if err != nil {
			return nil // the client left or never said hello
		}
		var m inbound
		var perr *protocolError
		if abusive {
			c.close(websocket.StatusPolicyViolation, abuseCloseMessage)
			return nil
		}
		switch msg := msg.(type) {
		case nil:
			continue
		case clientBad:
			perr = msg.err
		case clientMsg:
			if m = msg.m; m.Type != typeHello {
				perr = refuse(codeNotHello, "the first message must be hello, got %q", m.Type)
			}
		default: // audio
			perr = refuse(codeNotHello, "the first message must be a hello text message")
		}
		if perr == nil {
			var s *Session
			if s, perr = h.open(ctx, c, m, local); perr == nil {
				return s
			}
		}
		if perr.Code == codeUnauthorized {
			reject(ctx, c, perr)
			return nil
		}
		c.sendError(perr)
	}
}

// open authenticates hello, then starts or resumes the session it asks
// for and attaches c. Nothing is created for a refused hello.
func (h *Hub) open(ctx context.Context, c *conn, m inbound, local bool) (*Session, *protocolError) {
	subject, perr := h.authenticate(m.Token, local)
	if perr != nil {
		return nil, perr
	}
	if m.Resume != nil {
		return h.resume(ctx, c, *m.Resume, subject)
	}
	s, perr := h.create(subject, m)
	if perr != nil {
		return nil, perr
	}
	return s, h.attach(ctx, s, c, 0, false)
}

// resume attaches c to the session r names when r carries its resume token
// and, with a secret, subject (the hello token's) is the session's: a
// resume token alone, stolen from its page, does not let another candidate
// in. Both are checked before anything is touched.
func (h *Hub) resume(ctx context.Context, c *conn, r resumeRequest, subject string) (*Session, *protocolError) {
	h.mu.Lock()
	s := h.sessions[r.SessionID]
	h.mu.Unlock()
	if s == nil || !h.ownsLocal(ctx, s) {
		return h.resumeRemote(ctx, c, r, subject)
	}
	tokenOK := subtle.ConstantTimeCompare([]byte(r.Token), []byte(s.resumeToken)) == 1
	if !tokenOK || (h.cfg.Secret != "" && subject != s.subject) {
		return nil, refuse(codeBadResumeToken, "wrong resume token for session %q", r.SessionID)
	}
	return s, h.attach(ctx, s, c, r.LastSeq, true)
}

func (h *Hub) attach(ctx context.Context, s *Session, c *conn, lastSeq uint64, resumed bool) *protocolError {
	reply := make(chan *protocolError, 1)
	if !s.post(ctx, attachReq{c: c, lastSeq: lastSeq, resumed: resumed, reply: reply}) {
		return refuse(codeUnknownSession, "session %q has ended", s.id)
	}
	select {
	case perr := <-reply:
		return perr
	case <-s.done:
		return refuse(codeUnknownSession, "session %q has ended", s.id)
	case <-ctx.Done():
		return refuse(codeUnknownSession, "server shutting down")
	}
}

// create registers and starts a new session.
func (h *Hub) create(subject string, m inbound) (*Session, *protocolError) {
	id, token := randomID(), randomToken()
	if subject == "" {
		subject = "anon:" + id
	}
	if !h.limiter.OpenSession(subject, id) { // outside the lock: it may wait for Redis
		h.cfg.Metrics.limitHit(limitSessions)
		return nil, refuse(codeTooMany, "subject already has %d live sessions", h.cfg.Limits.SessionsPerSubject)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		h.rec.enqueue(func(ctx context.Context) error { return h.limiter.ReleaseSession(ctx, subject, id) })
		return nil, refuse(codeUnknownSession, "server shutting down")
	}
	autoAnswer := m.AutoAnswer == nil || *m.AutoAnswer
	s := newSession(h, id, token, subject, *m.Profile, autoAnswer)
	h.sessions[id] = s
	h.wg.Go(func() { s.run(h.ctx) })
	return s, nil
}

// forget removes an ended session. Called by the session's run.
func (h *Hub) forget(s *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[s.id] == s { // a session taken back by a resume has a newer copy
		delete(h.sessions, s.id)
	}
	for _, other := range h.sessions {
		if other.subject == s.subject {
			return
		}
	}
	h.limiter.Forget(s.subject)
}

// authenticate returns the subject of a hello's token. With a secret the
// token must verify; without one the session is anonymous (subject "")
// and allowed only for a local client unless AnonymousAnywhere.
func (h *Hub) authenticate(token string, local bool) (string, *protocolError) {
	if h.cfg.Secret == "" {
		if !local && !h.cfg.AnonymousAnywhere {
			return "", refuse(codeUnauthorized, "anonymous sessions are for clients on the server's host; the server needs auth.secret")
		}
		return "", nil
	}
	sub, err := VerifyToken(h.cfg.Secret, token, h.cfg.Now(), h.cfg.MaxTokenTTL)
	if err != nil {
		return "", refuse(codeUnauthorized, "%v", err)
	}
	return sub, nil
}

// reject sends perr and closes the connection with 1008 (policy
// violation). It writes the error itself rather than through the writer,
// which drops its backlog on a 1008 close (meant for too-slow clients);
// coder/websocket allows a write beside the writer's.
func reject(ctx context.Context, c *conn, perr *protocolError) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	c.ws.Write(wctx, websocket.MessageText, encode(&errorMsg{head: head{Type: "error"}, Code: perr.Code, Message: perr.Message}))
	c.close(websocket.StatusPolicyViolation, perr.Code)
}

// originPatterns adds, for each "host:*" pattern, the bare host: an Origin
// on the scheme's default port carries no port, and "any port" includes it.
func originPatterns(patterns []string) []string {
	out := slices.Clone(patterns)
	for _, p := range patterns {
		if host, ok := strings.CutSuffix(p, ":*"); ok {
			out = append(out, host)
		}
	}
	return out
}

func randomID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func randomToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
