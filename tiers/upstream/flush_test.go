package upstream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
)

// timedEvent is one server-sent event and when the server sends it, from
// the response.
type timedEvent struct {
	at   time.Duration
	data string
}

// timedUpstream answers every request with its events, each sent at its
// time: a read of the body blocks until the next event is due, then
// returns every event due by then, as a socket returns what has arrived.
// For synctest bubbles.
type timedUpstream struct {
	events []timedEvent
	hang   bool // after the last event the body blocks until the request ends
}

func (u *timedUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	body := &timedBody{u: u, start: time.Now(), ctx: r.Context()}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: body, Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

type timedBody struct {
	u     *timedUpstream
	start time.Time
	ctx   context.Context
	next  int
	left  string // sent, not yet read
}

func (b *timedBody) Read(p []byte) (int, error) {
	if b.left != "" {
		n := copy(p, b.left)
		b.left = b.left[n:]
		return n, nil
	}
	if b.next == len(b.u.events) {
		if !b.u.hang {
			return 0, io.EOF
		}
		<-b.ctx.Done()
		return 0, b.ctx.Err()
	}
	due := b.start.Add(b.u.events[b.next].at)
	select {
	case <-time.After(time.Until(due)):
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	}
	var sent strings.Builder
	for b.next < len(b.u.events) && !b.start.Add(b.u.events[b.next].at).After(time.Now()) {
		sent.WriteString("data: " + b.u.events[b.next].data + "\n\n")
		b.next++
	}
	n := copy(p, sent.String())
	b.left = sent.String()[n:]
	return n, nil
}

func (b *timedBody) Close() error { return nil }

// piece is one Flush's text and when it came, from the request.
type piece struct {
	at   time.Duration
	text string
}

// gatherer is a Flusher: it records what each Flush passes on.
type gatherer struct {
	start   time.Time
	pending strings.Builder
	pieces  []piece
}

func (g *gatherer) Delta(d Delta) (bool, string, error) {
	g.pending.WriteString(d.Content)
	return d.Content != "", d.Finish, nil
}

func (g *gatherer) Flush() error {
	if g.pending.Len() > 0 {
		g.pieces = append(g.pieces, piece{time.Since(g.start), g.pending.String()})
		g.pending.Reset()
	}
	return nil
}

func (g *gatherer) Ended() string { return "" }

func (g *gatherer) text() string {
	var b strings.Builder
	for _, p := range g.pieces {
		b.WriteString(p.text)
	}
	return b.String()
}

// gatheredStream streams up's events with call's Stall and Pacer (run
// for the call) and returns the pieces, the result and how long the call
// took.
func gatheredStream(t *testing.T, up *timedUpstream, call Call) (*gatherer, Result, time.Duration) {
	t.Helper()
	if call.Pacer != nil {
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { call.Pacer.Run(ctx) })
		defer wg.Wait()
		defer cancel()
	}
	c := New(Endpoint{Name: "timed", BaseURL: "http://vendor.invalid/v1", APIKey: "sk-timed", Model: "m"}, &http.Client{Transport: up})
	g := &gatherer{start: time.Now()}
	call.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Why this job?")}
	call.Model, call.FirstToken = "m", time.Second
	res := c.StreamDeltas(t.Context(), call, g)
	return g, res, time.Since(g.start)
}

// TestStreamFlushesEachRead: a Flusher gets the tokens of one read from
// the server as one piece, at once (the first token too), and a token that
// comes on its own as a piece of its own; nothing is lost, and the finish
// ends the stream without waiting for more.
func TestStreamFlushesEachRead(t *testing.T) {
	const first = 300 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		ev := []timedEvent{
			{first, `{"choices":[{"index":0,"delta":{"role":"assistant","content":"t0 "}}]}`},
			{first + 20*time.Millisecond, `{"choices":[{"index":0,"delta":{"content":"t1 "}}]}`},
			{first + 20*time.Millisecond, `{"choices":[{"index":0,"delta":{"content":"t2 "}}]}`}, // in the same read
			{first + 20*time.Millisecond, `{"choices":[{"index":0,"delta":{"content":"t3 "}}]}`},
			{first + 40*time.Millisecond, `{"choices":[{"index":0,"delta":{"content":"t4 "}}]}`},
			{first + 60*time.Millisecond, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`},
			{first + 60*time.Millisecond, "[DONE]"},
		}
		g, res, took := gatheredStream(t, &timedUpstream{events: ev}, Call{})
		if res.Err != nil || res.Finish != "stop" || !res.Started {
			t.Fatalf("result %+v, want a complete answer", res)
		}
		want := []piece{{first, "t0 "}, {first + 20*time.Millisecond, "t1 t2 t3 "}, {first + 40*time.Millisecond, "t4 "}}
		if fmt.Sprint(g.pieces) != fmt.Sprint(want) {
			t.Errorf("pieces %v, want %v", g.pieces, want)
		}
		if took != first+60*time.Millisecond {
			t.Errorf("the stream took %v, want it to end with its finish at %v", took, first+60*time.Millisecond)
		}
	})
}

// TestStreamStallKeepsWhatCame: a stream whose server goes silent is cut
// by the stall watchdog, with what came before the silence passed on.
func TestStreamStallKeepsWhatCame(t *testing.T) {
	const (
		first = 100 * time.Millisecond
		stall = 300 * time.Millisecond
	)
	synctest.Test(t, func(t *testing.T) {
		var ev []timedEvent
		for i := range 5 {
			ev = append(ev, timedEvent{first + time.Duration(i)*10*time.Millisecond, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"t%d "}}]}`, i)})
		}
		g, res, took := gatheredStream(t, &timedUpstream{events: ev, hang: true}, Call{Stall: stall})
		if res.Err == nil || res.Err.Class != ClassCut {
			t.Fatalf("result %+v, want ClassCut", res)
		}
		if got := g.text(); got != "t0 t1 t2 t3 t4 " {
			t.Errorf("text %q, want every token before the silence", got)
		}
		if want := first + 40*time.Millisecond + stall; took != want {
			t.Errorf("the stall cut came after %v, want %v", took, want)
		}
	})
}
