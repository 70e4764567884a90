package session

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
)

// TestStuckWriteClosesTheSocket: a peer that stops reading blocks the
// writer; writeTimeout after that write began the socket is closed, the
// writer returns, and nothing more is queued. A peer that reads is never
// closed by the bound, however long the connection stays idle between
// writes.
func TestStuckWriteClosesTheSocket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		accepted := make(chan *websocket.Conn, 1)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ws, err := websocket.Accept(w, r, nil); err == nil {
				accepted <- ws
			}
		})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		tr := &http.Transport{}
		client, raw, err := dialSilent(ln, tr)
		if err != nil {
			t.Fatal(err)
		}
		c := newConn(<-accepted, 16)
		defer func() {
			c.close(websocket.StatusGoingAway, "test over")
			c.wait()
			client.CloseNow()
			raw.Close()
			srv.Close()
			if err := <-served; !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
				t.Errorf("serve: %v", err)
			}
			tr.CloseIdleConnections()
		}()

		// A reading peer, idle for longer than the bound between writes.
		got := make(chan string, 4)
		reader := make(chan struct{})
		go func() {
			defer close(reader)
			for {
				_, b, err := client.Read(context.Background())
				if err != nil {
					return
				}
				got <- string(b)
			}
		}()
		for _, m := range []string{"one", "two"} {
			c.send([]byte(m))
			if r := <-got; r != m {
				t.Fatalf("read %q, want %q", r, m)
			}
			time.Sleep(3 * writeTimeout)
			synctest.Wait()
		}
		if c.closed() {
			t.Fatal("a connection whose peer reads was closed")
		}

		// The peer reads nothing more. The read it already waits in takes
		// the next message and drops it; the one after it blocks.
		raw.vanish()
		synctest.Wait()
		start := time.Now()
		c.send([]byte("three"), []byte("four"))
		time.Sleep(writeTimeout - time.Millisecond)
		synctest.Wait()
		if c.closed() {
			t.Fatalf("closed %v after the write began, before writeTimeout (%v)", time.Since(start), writeTimeout)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !c.closed() {
			t.Fatalf("still open writeTimeout (%v) after a write to a peer that reads nothing", writeTimeout)
		}
		if !c.send([]byte("five")) {
			t.Error("a send after the close was refused as too slow; it is dropped into the replay buffer instead")
		}
		client.CloseNow()
		<-reader
	})
}

// closed reports whether the socket is closed, as the writer left it.
func (c *conn) closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over && !c.writing
}
