package sim

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
)

// MemNet is an in-memory network for tests inside a testing/synctest
// bubble: each connection is a pair of net.Pipe ends, whose blocking
// synctest understands (real sockets would stop the bubble's clock).
// Servers are reached by "host:port"; a dial to an unknown address is
// refused. Create it inside the bubble and Close it before the bubble ends.
type MemNet struct {
	mu        sync.Mutex
	listeners map[string]*MemListener // guarded by mu
	servers   sync.WaitGroup          // Serve goroutines; Close waits for them
	stops     []func()                // guarded by mu
	tr        *http.Transport
	client    *http.Client
}

// NewMemNet returns an empty network.
func NewMemNet() *MemNet {
	n := &MemNet{listeners: make(map[string]*MemListener)}
	n.tr = &http.Transport{DialContext: n.dial}
	n.client = &http.Client{Transport: n.tr}
	return n
}

// Client returns an HTTP client whose connections go over the network.
func (n *MemNet) Client() *http.Client { return n.client }

// Serve serves h at addr ("host:port"; the URL is "http://"+addr) until
// Close.
func (n *MemNet) Serve(addr string, h http.Handler) *MemListener {
	l := &MemListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	n.mu.Lock()
	n.listeners[addr] = l
	n.stops = append(n.stops, func() { srv.Close() })
	n.mu.Unlock()
	n.servers.Go(func() { srv.Serve(l) })
	return l
}

// Listener returns the listener at addr, or nil.
func (n *MemNet) Listener(addr string) *MemListener {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.listeners[addr]
}

// Close stops every server and waits for them, and drops idle client
// connections.
func (n *MemNet) Close() {
	n.tr.CloseIdleConnections()
	n.mu.Lock()
	stops := n.stops
	n.stops = nil
	n.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	n.servers.Wait()
}

func (n *MemNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if l := n.Listener(addr); l != nil {
		return l.dial(ctx)
	}
	return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
}

// MemListener is one server's end of a MemNet.
type MemListener struct {
	conns  chan net.Conn
	done   chan struct{}
	once   sync.Once
	refuse atomic.Bool
}

// Refuse makes dials to this server fail as a dead server's would, until
// Refuse(false).
func (l *MemListener) Refuse(on bool) { l.refuse.Store(on) }

// Accept implements net.Listener.
func (l *MemListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *MemListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *MemListener) Addr() net.Addr { return memAddr{} }

func (l *MemListener) dial(ctx context.Context) (net.Conn, error) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	if l.refuse.Load() {
		return nil, refused
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.done:
		return nil, refused
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }
