package session

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers"
)

// upgradeOnly opens a WebSocket to srvAddr from local (an address on the
// loopback network, 127.0.0.0/8) and never says hello. It returns the
// raw socket once the server has answered 101, or nil after reporting an
// error (it may run on any goroutine).
func upgradeOnly(t testing.TB, srvAddr string, local net.IP) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: local}, Timeout: waitLimit}
	c, err := d.Dial("tcp", srvAddr)
	if err != nil {
		t.Errorf("dial from %s: %v", local, err)
		return nil
	}
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", srvAddr)
	c.SetReadDeadline(time.Now().Add(waitLimit))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Errorf("upgrade from %s: %v %v", local, resp, err)
		c.Close()
		return nil
	}
	c.SetReadDeadline(time.Time{})
	return c
}

// flood opens n hello-less sockets from 100 loopback addresses, 4 at a
// time, checking after each batch that the server holds at most max of
// them; it returns them to be closed.
func flood(t testing.TB, ts *testServer, n, max int) []net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(ts.srv.URL, "http://")
	conns := make([]net.Conn, n)
	for i := 0; i < n; i += 100 {
		var wg sync.WaitGroup
		for j := i; j < min(i+100, n); j++ {
			wg.Go(func() { conns[j] = upgradeOnly(t, addr, net.IPv4(127, 0, 1, byte(j%100+1))) })
		}
		wg.Wait()
		if t.Failed() {
			closeAll(conns)
			t.FailNow()
		}
		if got := ts.hub.lobby.len(); got > max {
			t.Fatalf("after %d hello-less sockets the server holds %d, over its cap %d", min(i+100, n), got, max)
		}
	}
	return conns
}

// TestPreHelloShed: 3,000 sockets that upgrade and never say hello are
// shed to the cap (default 1024 in all) oldest first, the goroutines and
// heap they hold stay bounded by the cap, and a real hello meanwhile gets
// its welcome. From one address, the per-address cap (default 32) sheds
// that address's oldest.
func TestPreHelloShed(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3)})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()

	conns := flood(t, ts, 3000, defaultPreHelloMax)
	defer closeAll(conns)
	c, _ := ts.start(t, "en") // a real client meanwhile
	c.send(map[string]any{"type": "ping", "t": 1})
	c.readType("pong")

	// Each kept socket costs its handler and writer goroutines; the shed
	// ones end (eventually: their handlers are scheduled like any other).
	bound := goroutines + 2*defaultPreHelloMax + 50
	eventually(t, fmt.Sprintf("at most %d goroutines", bound), func() bool { return runtime.NumGoroutine() <= bound })
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("3000 hello-less sockets: %d held, %d goroutines (%d before), heap in use +%.1f MiB",
		ts.hub.lobby.len(), runtime.NumGoroutine(), goroutines, float64(grown)/(1<<20))
	if limit := int64(defaultPreHelloMax) * 64 << 10; grown > limit { // 64 KiB a held socket, generously
		t.Fatalf("heap in use grew by %d bytes for %d held sockets, over %d", grown, defaultPreHelloMax, limit)
	}

	// One address: its oldest are shed past 32.
	addr := strings.TrimPrefix(ts.srv.URL, "http://")
	var mine []net.Conn
	for range 40 {
		mine = append(mine, upgradeOnly(t, addr, net.IPv4(127, 0, 2, 1)))
	}
	if t.Failed() {
		t.FailNow()
	}
	defer closeAll(mine)
	if n := ts.hub.lobby.count("127.0.2.1"); n > defaultPreHelloPerAddr {
		t.Fatalf("one address holds %d hello-less sockets, over its cap %d", n, defaultPreHelloPerAddr)
	}
	// The shed sockets see their end (which ones depends on the order the
	// handlers reached the lobby in).
	eventually(t, "the address's sockets over its cap shed", func() bool {
		closed := 0
		for _, c := range mine {
			c.SetReadDeadline(time.Now().Add(time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
				closed++
			}
		}
		return closed >= len(mine)-defaultPreHelloPerAddr
	})
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// BenchmarkWelcomeUnderFlood measures a real client's dial, hello and
// welcome while hello-less sockets from 100 addresses keep pressing on the
// pre-hello cap: 3,000 opened first, then a reconnect loop that keeps
// 3,000 open (target: a welcome within 100 ms).
func BenchmarkWelcomeUnderFlood(b *testing.B) {
	ts := newTestServer(b, Config{Health: newFakeHealth(tiers.L3)})
	ring := flood(b, ts, 3000, defaultPreHelloMax)
	addr := strings.TrimPrefix(ts.srv.URL, "http://")
	stop := make(chan struct{})
	var flooder sync.WaitGroup
	flooder.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if c := ring[i%len(ring)]; c != nil {
				c.Close()
			}
			if ring[i%len(ring)] = upgradeOnly(b, addr, net.IPv4(127, 0, 1, byte(i%100+1))); ring[i%len(ring)] == nil {
				return
			}
		}
	})
	defer func() {
		close(stop)
		flooder.Wait()
		closeAll(ring)
	}()
	var worst time.Duration
	for b.Loop() {
		start := time.Now()
		c, _ := ts.start(b, "en")
		worst = max(worst, time.Since(start))
		c.ws.CloseNow()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/welcome")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}
