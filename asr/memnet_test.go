package asr

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// memListener is an in-memory network for tests inside a synctest bubble:
// connections are net.Pipe halves, whose blocking synctest understands
// (real sockets would stop its clock). While refuse is set, dials fail as
// a dead server's would.
type memListener struct {
	conns  chan net.Conn
	done   chan struct{}
	once   sync.Once
	refuse atomic.Bool
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	if l.refuse.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

// memNet routes dials by host:port to in-memory listeners. Build it with
// newMemNet inside the bubble; cleanup closes every server and waits.
type memNet struct {
	t         *testing.T
	mu        sync.Mutex
	listeners map[string]*memListener
	tr        *http.Transport
	client    *http.Client
}

func newMemNet(t *testing.T) *memNet {
	t.Helper()
	n := &memNet{t: t, listeners: make(map[string]*memListener)}
	n.tr = &http.Transport{DialContext: n.dial}
	n.client = &http.Client{Transport: n.tr}
	t.Cleanup(n.tr.CloseIdleConnections)
	return n
}

func (n *memNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.listeners[addr]
	n.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}
	return l.dial(ctx, network, addr)
}

// serve starts h at addr ("host:port"); the URL is "http://"+addr.
func (n *memNet) serve(addr string, h http.Handler) *memListener {
	l := newMemListener()
	n.mu.Lock()
	n.listeners[addr] = l
	n.mu.Unlock()
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.t.Errorf("serve %s: %v", addr, err)
		}
	}()
	n.t.Cleanup(func() {
		srv.Close()
		<-served
	})
	return l
}
