package session

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/tiers"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitLimit = 5 * time.Second // bound on any single wait in these tests

// eventually polls cond until it holds, failing after waitLimit.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", waitLimit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeHealth is a controllable Health: tests set the supported level and
// send signals to every subscriber.
type fakeHealth struct {
	mu    sync.Mutex
	level tiers.Level
	subs  map[chan tiers.Signal]struct{}
}

func newFakeHealth(l tiers.Level) *fakeHealth {
	return &fakeHealth{level: l, subs: make(map[chan tiers.Signal]struct{})}
}

func (f *fakeHealth) Supported() tiers.Level {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.level
}

func (f *fakeHealth) Subscribe(buf int) (<-chan tiers.Signal, func()) {
	ch := make(chan tiers.Signal, buf)
	f.mu.Lock()
	f.subs[ch] = struct{}{}
	f.mu.Unlock()
	return ch, func() {
		f.mu.Lock()
		delete(f.subs, ch)
		f.mu.Unlock()
	}
}

// set changes the supported level and signals every subscriber.
func (f *fakeHealth) set(l tiers.Level, sig tiers.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.level = l
	for ch := range f.subs {
		ch <- sig
	}
}

// testServer runs a Hub behind httptest and shuts both down at cleanup.
type testServer struct {
	hub *Hub
	srv *httptest.Server // nil on an in-memory network (serveMem)
	url string
	hc  *http.Client // what clients dial with; nil: the default client
}

func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	return serveHub(t, cfg, func(hub *Hub) http.Handler { return hub })
}

// serveHub runs the Hub of cfg behind the handler front makes of it.
func serveHub(t testing.TB, cfg Config, front func(*Hub) http.Handler) *testServer {
	t.Helper()
	if cfg.Log.GetLevel() == zerolog.TraceLevel {
		cfg.Log = zerolog.Nop()
	}
	hub := NewHub(cfg)
	srv := httptest.NewServer(front(hub))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := hub.Shutdown(ctx); err != nil {
			t.Errorf("hub shutdown: %v", err)
		}
		srv.Close()
	})
	return &testServer{hub: hub, srv: srv, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"}
}

// client is a test WebSocket client that decodes server messages.
type client struct {
	t  testing.TB
	ws *websocket.Conn
}

func (ts *testServer) dial(t testing.TB) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, ts.url, &websocket.DialOptions{HTTPClient: ts.hc})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &client{t: t, ws: ws}
}

// msg is any server message.
type msg map[string]any

func (m msg) str(k string) string { s, _ := m[k].(string); return s }
func (m msg) seq() uint64         { f, _ := m["seq"].(float64); return uint64(f) }

func (c *client) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(b)
}

func (c *client) sendRaw(b []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next server message, failing the test after waitLimit.
func (c *client) read() msg {
	c.t.Helper()
	m, err := c.tryRead(waitLimit)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

func (c *client) tryRead(d time.Duration) (msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m msg
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("server sent invalid JSON %q: %v", b, err)
	}
	return m, nil
}

// readType reads until a message of type typ, failing on any `error`
// message unless typ is "error".
func (c *client) readType(typ string) msg {
	c.t.Helper()
	for {
		m := c.read()
		if m.str("type") == typ {
			return m
		}
		if m.str("type") == "error" {
			c.t.Fatalf("unexpected error message while waiting for %s: %v", typ, m)
		}
	}
}

func hello(lang string) map[string]any {
	return map[string]any{"type": "hello", "v": 1, "profile": map[string]any{"lang": lang, "seniority": "mid", "role": "backend engineer"}}
}

// start dials, says hello and returns the client and its welcome.
func (ts *testServer) start(t testing.TB, lang string) (*client, msg) {
	t.Helper()
	c := ts.dial(t)
	c.send(hello(lang))
	w := c.read()
	if w.str("type") != "welcome" {
		t.Fatalf("first message = %v, want welcome", w)
	}
	return c, w
}

// smallBufListener shrinks the send buffer of accepted connections so that
// a client that stops reading fills it quickly.
type smallBufListener struct{ net.Listener }

func (l smallBufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// startSmallBuffers starts a session over a connection with small socket
// buffers on both ends.
func (ts *testServer) startSmallBuffers(t testing.TB) (*client, msg) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ts.hub}
	go srv.Serve(smallBufListener{ln})
	t.Cleanup(func() { srv.Close() })
	dialer := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	httpc := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/ws", &websocket.DialOptions{HTTPClient: httpc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow(); httpc.CloseIdleConnections() })
	c := &client{t: t, ws: ws}
	c.send(hello("en"))
	return c, c.readType("welcome")
}
