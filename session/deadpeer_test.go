package session

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// pipeListener is an in-memory network: Dial makes a net.Pipe whose
// server end Accept returns. Inside a synctest bubble its waits are
// durable, so the bubble's clock runs through a dead peer's timeouts.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial returns the client end, wrapped so that it can go silent.
func (l *pipeListener) dial(context.Context, string, string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	return &silentConn{Conn: client, gone: make(chan struct{}), closed: make(chan struct{})}, nil
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:1" }

// silentConn is a client end that, once vanish is called, behaves like a
// laptop whose lid closed: nothing it sends arrives, nothing sent to it is
// read, and no FIN or RST ever tells the server.
type silentConn struct {
	net.Conn
	vanished atomic.Bool
	gone     chan struct{} // closed by vanish
	closed   chan struct{} // closed by Close
	once     sync.Once
	vOnce    sync.Once
}

func (c *silentConn) vanish() { c.vOnce.Do(func() { c.vanished.Store(true); close(c.gone) }) }

func (c *silentConn) Read(p []byte) (int, error) {
	if c.vanished.Load() {
		<-c.closed
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(p) // a read already waiting when the peer vanishes gets nothing more
	if c.vanished.Load() {
		<-c.closed
		return 0, net.ErrClosed
	}
	return n, err
}

func (c *silentConn) Write(p []byte) (int, error) {
	if c.vanished.Load() {
		return len(p), nil // lost on the way
	}
	return c.Conn.Write(p)
}

func (c *silentConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// dialSilent opens a WebSocket to l's server through tr and returns it
// with its raw connection, whose reads a test can stop.
func dialSilent(l *pipeListener, tr *http.Transport) (*websocket.Conn, *silentConn, error) {
	var raw *silentConn
	tr.DialContext = func(ctx context.Context, n, a string) (net.Conn, error) {
		c, err := l.dial(ctx, n, a)
		if err == nil {
			raw = c.(*silentConn)
		}
		return c, err
	}
	ws, _, err := websocket.Dial(context.Background(), "ws://127.0.0.1:1/ws", &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	return ws, raw, err
}

// pipeClient is a WebSocket client over the in-memory network whose reader
// answers pings and keeps the last message of each type.
type pipeClient struct {
	ws   *websocket.Conn
	raw  *silentConn
	msgs chan msg
	done chan struct{}
}

func dialPipe(t *testing.T, l *pipeListener, tr *http.Transport) *pipeClient {
	t.Helper()
	ws, raw, err := dialSilent(l, tr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c := &pipeClient{ws: ws, raw: raw, msgs: make(chan msg, 64), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			var m msg
			if err := wsjson.Read(context.Background(), ws, &m); err != nil {
				return
			}
			select {
			case c.msgs <- m:
			default:
			}
		}
	}()
	return c
}

func (c *pipeClient) hello(t *testing.T, token string) msg {
	t.Helper()
	if err := wsjson.Write(context.Background(), c.ws, helloAs(token)); err != nil {
		t.Fatalf("hello: %v", err)
	}
	for m := range c.msgs {
		if m.str("type") == "welcome" || m.str("type") == "error" {
			return m
		}
	}
	return nil
}

func (c *pipeClient) close() {
	c.ws.CloseNow()
	c.raw.Close()
	<-c.done
}

// connected reports the store's view of session id once everything that
// can run has run.
func connected(t *testing.T, st *MemoryStore, id string) bool {
	t.Helper()
	synctest.Wait()
	recs, _ := st.Sessions(context.Background())
	for _, r := range recs {
		if r.ID == id {
			return r.Connected
		}
	}
	t.Fatalf("session %s is not in the store", id)
	return false
}

// TestDeadPeerFound: a client that vanishes without closing (no FIN, no
// RST; its packets are dropped both ways) is found by the server's pings
// within the default 45 s: its session is no longer connected and its
// resume window starts; its sessions_per_subject slot stays taken during
// the window and is free once the window ends. A live client that says
// nothing is not taken for dead.
func TestDeadPeerFound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := NewMemoryStore()
		cfg := authConfig()
		cfg.Store = store
		cfg.Limits.SessionsPerSubject = 1
		cfg.HeartbeatTimeout = time.Hour // the app-level heartbeat is not what is tested
		hub := NewHub(cfg)
		ln := newPipeListener()
		srv := &http.Server{Handler: hub}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		tr := &http.Transport{}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := hub.Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v", err)
			}
			srv.Close()
			if err := <-served; !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
				t.Errorf("serve: %v", err)
			}
			tr.CloseIdleConnections()
		}()

		a := dialPipe(t, ln, tr)
		defer a.close()
		w := a.hello(t, mint(t, "cand-1"))
		id := w.str("session_id")
		if id == "" {
			t.Fatalf("first hello: %v", w)
		}
		time.Sleep(5 * time.Minute) // silent but alive: it answers pings
		if !connected(t, store, id) {
			t.Fatal("a live client that sends nothing was taken for dead")
		}

		a.raw.vanish()
		vanished := time.Now()
		for connected(t, store, id) {
			if time.Since(vanished) > 2*time.Minute {
				t.Fatal("the vanished client is still connected after 2 minutes")
			}
			time.Sleep(time.Second)
		}
		found := time.Since(vanished)
		t.Logf("dead peer found after %v", found)
		if found > 45*time.Second {
			t.Fatalf("dead peer found after %v, want within 45s", found)
		}

		b := dialPipe(t, ln, tr)
		defer b.close()
		if m := b.hello(t, mint(t, "cand-1")); m.str("code") != codeTooMany {
			t.Fatalf("a hello during the resume window: %v, want %s", m, codeTooMany)
		}
		time.Sleep(cfg.withDefaults().ResumeWindow)
		synctest.Wait()
		c := dialPipe(t, ln, tr)
		defer c.close()
		if m := c.hello(t, mint(t, "cand-1")); m.str("type") != "welcome" {
			t.Fatalf("a hello after the resume window: %v, want welcome (the slot is free)", m)
		}
	})
}
