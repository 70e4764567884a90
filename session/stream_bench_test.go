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

// BenchmarkAnswerStream streams answers of answerTokens tokens through a
// real hub and WebSocket (server and client in this process), one answer
// an op, with deltas coalesced (the default) and sent one by one. The
// tokens come at once, as from a fast backend, so coalescing gathers as
// much as it can (up to maxCoalesced a message); at a real backend's
// 20 ms between tokens it halves the messages. A new connection every
// questionsPerConn answers keeps under the inbound message rate.
func BenchmarkAnswerStream(b *testing.B) {
	const answerTokens, questionsPerConn = 1000, 40
	tokens := make([]string, answerTokens)
	for i := range tokens {
		tokens[i] = "word "
	}
	for _, tc := range []struct {
		name     string
		coalesce time.Duration
	}{{"coalesce_50ms", 0}, {"coalesce_off", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			ts := newTestServer(b, Config{Health: newFakeHealth(tiers.L1), Answerer: scriptedAnswerer{tokens: tokens}, Coalesce: tc.coalesce,
				SendQueue: 2 * answerTokens}) // one by one, a burst is a backlog: not a slow client here
			var c *client
			b.ReportAllocs()
			msgs, n := 0, 0
			for b.Loop() {
				if n%questionsPerConn == 0 {
					if c != nil {
						c.ws.CloseNow()
					}
					c, _ = ts.start(b, "en")
				}
				n++
				c.send(map[string]any{"type": "question", "text": "Why this company?"})
				for c.read().str("type") != "answer_end" {
					msgs++
				}
			}
			b.ReportMetric(float64(msgs)/float64(n*answerTokens), "msgs/token")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*answerTokens), "ns/token")
		})
	}
}

// BenchmarkFrameRead reads 20 ms audio frames (640 bytes) from a real
// WebSocket: into the read buffers' pool (read) against coder/
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
	c := newConn(server, 1)
	b.Run("pooled", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, bp, err := c.read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			putReadBuffer(bp)
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
