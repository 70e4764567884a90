package upstream

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
)

// countingConn counts the Write calls on a connection: the system calls
// a request costs.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestRequestGoesOutInOneWrite: a streaming request, headers and a body of
// a few KiB, is written to the connection in one call, not the headers and
// the body apart.
func TestRequestGoesOutInOneWrite(t *testing.T) {
	t.Parallel()
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer vendor.Close()
	var writes atomic.Int64
	hc := NewHTTPClient()
	tr := hc.Transport.(*http.Transport)
	defer tr.CloseIdleConnections()
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	}
	c := New(Endpoint{Name: "v", BaseURL: vendor.URL, Model: "m"}, hc)
	prompt := strings.Repeat("Five years of payments backends in Go. ", 60) // about 2.3 KiB
	res := c.Stream(t.Context(), Call{Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(prompt), openai.UserMessage("hi")},
		Model: "m", FirstToken: time.Second}, &textHandler{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if n := writes.Load(); n != 1 {
		t.Errorf("the request took %d writes, want 1", n)
	}
}
