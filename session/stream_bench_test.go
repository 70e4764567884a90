package session

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/tiers"
)

// BenchmarkAnswerStream streams one answer of b.N tokens through a real
// hub and WebSocket (server and client in this process): the time per
// token, with deltas coalesced (the default) and sent one by one. The
// tokens come at once, as from a fast backend, so coalescing gathers as
// much as it can (up to maxCoalesced a message); at a real backend's
// 20 ms between tokens it halves the messages.
func BenchmarkAnswerStream(b *testing.B) {
	for _, tc := range []struct {
		name     string
		coalesce time.Duration
	}{{"coalesce_40ms", 0}, {"coalesce_off", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			tokens := make([]string, b.N)
			for i := range tokens {
				tokens[i] = "word "
			}
			ts := newTestServer(b, Config{Health: newFakeHealth(tiers.L1), Answerer: scriptedAnswerer{tokens: tokens}, Coalesce: tc.coalesce,
				SendQueue: b.N + 16}) // one by one, a burst is a backlog: not a slow client here
			c, _ := ts.start(b, "en")
			b.ReportAllocs()
			b.ResetTimer()
			c.send(map[string]any{"type": "question", "text": "Why this company?"})
			msgs := 0
			for c.read().str("type") != "answer_end" {
				msgs++
			}
			b.StopTimer()
			b.ReportMetric(float64(msgs)/float64(b.N), "msgs/token")
		})
	}
}

// BenchmarkFrameRead reads 20 ms audio frames (640 bytes) from a real
// WebSocket: the connection's reused buffer (read) against coder/
// websocket's Read, which allocates each message.
func BenchmarkFrameRead(b *testing.B) {
	frames := make(chan *websocket.Conn, 1)
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		frames <- ws
		<-stop
	}))
	defer srv.Close()
	defer close(stop)
	ctx := context.Background()
	client, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	server := <-frames
	defer server.CloseNow()
	frame := make([]byte, 640)
	var writer sync.WaitGroup
	defer writer.Wait()
	defer client.CloseNow() // ends the writer, before it is waited for
	writer.Go(func() {
		for client.Write(ctx, websocket.MessageBinary, frame) == nil {
		}
	})
	c := newConn(ctx, server, 1)
	b.Run("reused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := c.read(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ws.Read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := server.Read(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
