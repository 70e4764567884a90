package upstream

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
)

// TestStreamsOverHTTP2: hosted vendors serve HTTPS and speak HTTP/2 to a
// client that offers it; the engine's client offers it and streams a
// completion over it, chunk by chunk, as over HTTP/1.1.
func TestStreamsOverHTTP2(t *testing.T) {
	t.Parallel()
	var proto atomic.Value
	vendor := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i, word := range []string{"A", " mutex", " guards", " state."} {
			finish := "null"
			if i == 3 {
				finish = `"stop"`
			}
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", word, finish)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	vendor.EnableHTTP2 = true
	vendor.StartTLS()
	defer vendor.Close()
	hc := NewHTTPClient()
	tr := hc.Transport.(*http.Transport)
	defer tr.CloseIdleConnections()
	tr.TLSClientConfig = &tls.Config{RootCAs: vendor.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}

	c := New(Endpoint{Name: "v", BaseURL: vendor.URL, Model: "m"}, hc)
	g := &gatherer{start: time.Now()}
	res := c.StreamDeltas(t.Context(), Call{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is a mutex?")},
		Model: "m", FirstToken: time.Second}, g)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := g.text(); got != "A mutex guards state." {
		t.Errorf("content %q, want the four chunks'", got)
	}
	if p, _ := proto.Load().(string); p != "HTTP/2.0" {
		t.Errorf("the vendor saw %q, want HTTP/2.0", p)
	}
}
