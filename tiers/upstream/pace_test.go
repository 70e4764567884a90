package upstream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
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
// It records when each read returned. For synctest bubbles.
type timedUpstream struct {
	events []timedEvent
	hang   bool // after the last event the body blocks until the request ends
	reads  []time.Duration
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
	b.u.reads = append(b.u.reads, time.Since(b.start))
	n := copy(p, sent.String())
	b.left = sent.String()[n:]
	return n, nil
}

func (b *timedBody) Close() error { return nil }

// tokenEvents are n content chunks, one every gap from first, then a
// finish chunk gap after the last and [DONE] at done.
func tokenEvents(n int, first, gap, done time.Duration) []timedEvent {
	var ev []timedEvent
	for i := range n {
		ev = append(ev, timedEvent{first + time.Duration(i)*gap, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"t%d "}}]}`, i)})
	}
	finish := first + time.Duration(n)*gap
	return append(ev, timedEvent{finish, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}, timedEvent{done, "[DONE]"})
}

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

// pacedStream streams up's events with pace and returns the pieces, the
// result and how long the call took.
func pacedStream(t *testing.T, up *timedUpstream, pace, stall time.Duration) (*gatherer, Result, time.Duration) {
	t.Helper()
	c := New(Endpoint{Name: "paced", BaseURL: "http://vendor.invalid/v1", APIKey: "sk-paced", Model: "m"}, &http.Client{Transport: up})
	g := &gatherer{start: time.Now()}
	res := c.StreamDeltas(t.Context(), Call{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Why this job?")},
		Model: "m", FirstToken: time.Second, Stall: stall, Pace: pace}, g)
	return g, res, time.Since(g.start)
}

// TestPacedStreamReadsOncePerPace: with Pace, a stream's first token
// passes on the moment it comes; after it, the body is read at most once
// per Pace and each read's tokens pass on as one piece; the [DONE] after
// the finish is not waited for; nothing is lost. Without Pace, every
// token is read and passed on as it comes.
func TestPacedStreamReadsOncePerPace(t *testing.T) {
	const (
		tokens = 20
		first  = 300 * time.Millisecond
		gap    = 10 * time.Millisecond
		pace   = 50 * time.Millisecond
	)
	var want strings.Builder
	for i := range tokens {
		fmt.Fprintf(&want, "t%d ", i)
	}
	finish := first + tokens*gap
	synctest.Test(t, func(t *testing.T) {
		up := &timedUpstream{events: tokenEvents(tokens, first, gap, finish+5*time.Millisecond)}
		g, res, took := pacedStream(t, up, pace, 0)
		if res.Err != nil || res.Finish != "stop" || !res.Started {
			t.Fatalf("result %+v, want a complete answer", res)
		}
		if got := g.text(); got != want.String() {
			t.Fatalf("text %q, want %q", got, want.String())
		}
		if g.pieces[0].at != first || g.pieces[0].text != "t0 " {
			t.Errorf("first piece %+v, want t0 alone at %v: the first token must not wait", g.pieces[0], first)
		}
		for i := 1; i < len(up.reads); i++ {
			if d := up.reads[i] - up.reads[i-1]; d < pace && up.reads[i-1] < finish {
				t.Errorf("reads %d and %d were %v apart between the first token and the finish, want at least %v: %v", i-1, i, d, pace, up.reads)
			}
		}
		// 200 ms of tokens at one read per 50 ms: the first, four paced
		// reads, the finish's read and the [DONE]'s.
		if len(g.pieces) > 6 || len(up.reads) > 7 {
			t.Errorf("%d pieces in %d reads, want at most 6 in 7: %v", len(g.pieces), len(up.reads), g.pieces)
		}
		if limit := finish + pace + 5*time.Millisecond; took > limit {
			t.Errorf("the stream took %v, want at most %v: the [DONE] after the finish must not wait a pace", took, limit)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		up := &timedUpstream{events: tokenEvents(tokens, first, gap, finish)}
		g, res, _ := pacedStream(t, up, 0, 0)
		if res.Err != nil || g.text() != want.String() {
			t.Fatalf("unpaced: result %+v, text %q", res, g.text())
		}
		if len(g.pieces) != tokens {
			t.Errorf("unpaced: %d pieces, want one per token (%d)", len(g.pieces), tokens)
		}
	})
}

// TestPacedStreamStalls: a paced stream whose server goes silent is still
// cut by the stall watchdog, within the stall and one pace, with what came
// before the silence passed on.
func TestPacedStreamStalls(t *testing.T) {
	const (
		first = 100 * time.Millisecond
		pace  = 50 * time.Millisecond
		stall = 300 * time.Millisecond
	)
	synctest.Test(t, func(t *testing.T) {
		events := tokenEvents(5, first, 10*time.Millisecond, 0)
		up := &timedUpstream{events: events[:5], hang: true}
		g, res, took := pacedStream(t, up, pace, stall)
		if res.Err == nil || res.Err.Class != ClassCut {
			t.Fatalf("result %+v, want ClassCut", res)
		}
		if got := g.text(); got != "t0 t1 t2 t3 t4 " {
			t.Errorf("text %q, want every token before the silence", got)
		}
		if limit := first + 40*time.Millisecond + stall + pace; took > limit {
			t.Errorf("the stall cut came after %v, want at most %v", took, limit)
		}
	})
}
