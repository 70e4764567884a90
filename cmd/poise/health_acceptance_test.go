package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/redistest"
)

// maxAsks bounds the questions a test asks to see a level change.
const maxAsks = 20

// Health settings of the acceptance tests: short, so that a partial outage
// and its recovery fit in seconds.
const (
	acceptIntervalMS   = 500  // health.interval_ms
	acceptRecoverAfter = 2    // health.recover_after
	acceptSLAMS        = 1500 // sla_ms
)

// healthRig is `poise serve` in-process with two simulated L1 vendors and
// a simulated local model, each a vendorsim behind its own HTTP server.
type healthRig struct {
	addr        string
	a, b, local *vendorsim.Server
	aURL        string // vendor-a's root URL
}

// startHealthRig starts the simulators and the server; redisURL "" runs
// on the in-memory store.
func startHealthRig(t *testing.T, redisURL string) *healthRig {
	t.Helper()
	r := &healthRig{}
	var urls []string
	for _, s := range []**vendorsim.Server{&r.a, &r.b, &r.local} {
		sim := vendorsim.New(vendorsim.Options{TokenDelay: time.Millisecond})
		srv := httptest.NewServer(sim)
		t.Cleanup(func() { sim.Close(); srv.Close() })
		*s = sim
		urls = append(urls, srv.URL)
	}
	cfg := fmt.Sprintf(`sla_ms: %d
limits: {questions_per_minute: 0}
health: {interval_ms: %d, recover_after: %d}
l1:
  first_token_timeout_ms: 1000
  vendors:
    - {name: vendor-a, base_url: %s/v1, api_key: test, model: gpt-4o-mini}
    - {name: vendor-b, base_url: %s/v1, api_key: test, model: gpt-4o-mini}
l2: {name: local, base_url: %s/v1, model: qwen-local}
asr: {whisper_urls: [%s]}
`, acceptSLAMS, acceptIntervalMS, acceptRecoverAfter, urls[0], urls[1], urls[2], urls[2])
	if redisURL != "" {
		cfg = "redis_url: " + redisURL + "\n" + cfg
	}
	r.aURL = urls[0]
	r.addr = startServer(t, noEnv, "-config", writeConfig(t, cfg))
	waitServing(t, r.addr)
	return r
}

// serveStartLimit bounds the server's start (the first log line comes
// before it loads the templates; a busy machine running -race takes a
// while).
const serveStartLimit = time.Minute

// waitServing waits until addr answers /readyz: the listener takes
// connections from the first log line, but HTTP is served once the
// server is built.
func waitServing(t *testing.T, addr string) {
	t.Helper()
	hc := &http.Client{Timeout: serveStartLimit}
	resp, err := hc.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatalf("the server did not start serving: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %s", resp.Status)
	}
}

// partialOutage makes both L1 vendors fail every completion with 503
// while their model list still answers 200 (on is false: heals them).
func (r *healthRig) partialOutage(on bool) {
	for _, s := range []*vendorsim.Server{r.a, r.b} {
		if on {
			s.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: http.StatusServiceUnavailable})
		} else {
			s.ClearFaults()
		}
	}
}

// requireModelList checks that vendor-a's model list answers 200: the
// outage is partial.
func (r *healthRig) requireModelList(t *testing.T) {
	t.Helper()
	resp, err := http.Get(r.aURL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/models during the partial outage: %s, want 200", resp.Status)
	}
}

// feedMsg is what the acceptance tests read of a server message.
type feedMsg struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	ID        string          `json:"id"`
	Level     string          `json:"level"`
	From      string          `json:"from"`
	Reason    string          `json:"reason"`
	Source    string          `json:"source"`
	Text      string          `json:"text"`
	Code      string          `json:"code"`
	Chip      json.RawMessage `json:"chip"`
	at        time.Time       // when it was read
}

// hasChip reports whether the message carries a chip (null at L1).
func (m feedMsg) hasChip() bool { return len(m.Chip) > 0 && string(m.Chip) != "null" }

// feed is a session's WebSocket with a reader goroutine, so that a test
// can ask on a schedule while messages arrive. The goroutine sends every
// message on msgs and ends (closing msgs) when the connection does; the
// test's cleanup closes the connection and waits for it.
type feed struct {
	t    *testing.T
	ws   *websocket.Conn
	msgs chan feedMsg
}

// openFeed dials addr, says hello and returns the feed and the welcome.
func openFeed(t *testing.T, addr string) (*feed, feedMsg) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(1 << 20)
	f := &feed{t: t, ws: ws, msgs: make(chan feedMsg, 256)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(f.msgs)
		for {
			var m feedMsg
			if err := wsjson.Read(context.Background(), ws, &m); err != nil {
				return
			}
			m.at = time.Now()
			f.msgs <- m
		}
	}()
	t.Cleanup(func() {
		ws.CloseNow()
		for range f.msgs { // unblock a send, then wait for the end
		}
		<-done
	})
	f.send(map[string]any{"type": "hello", "v": 1, "profile": map[string]any{"lang": "en", "seniority": "senior"}})
	w := f.next(waitLimit)
	if w.Type != "welcome" {
		t.Fatalf("got %s, want welcome", w.Type)
	}
	return f, w
}

func (f *feed) send(v any) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := wsjson.Write(ctx, f.ws, v); err != nil {
		f.t.Fatalf("write: %v", err)
	}
}

// next returns the next message, failing after d or at an error message.
func (f *feed) next(d time.Duration) feedMsg {
	f.t.Helper()
	select {
	case m, ok := <-f.msgs:
		if !ok {
			f.t.Fatal("the connection ended")
		}
		if m.Type == "error" {
			f.t.Fatalf("error message: %+v", m)
		}
		return m
	case <-time.After(d):
		f.t.Fatalf("no message within %v", d)
	}
	return feedMsg{}
}

// asked is one question of a schedule and what came of it.
type asked struct {
	sent    time.Time
	content time.Duration // to the first answer_delta or coach card; 0: none yet
	level   string        // answer_start's level
	source  string        // answer_start's source
}

// schedule asks questions with its own ids on a fixed period and follows
// their answers and the session's level messages.
type schedule struct {
	f      *feed
	every  time.Duration
	n      int
	qs     map[string]*asked
	ended  map[string]bool // answer_end came
	order  []string
	levels []feedMsg
}

func newSchedule(f *feed, every time.Duration) *schedule {
	return &schedule{f: f, every: every, qs: map[string]*asked{}, ended: map[string]bool{}}
}

// ask sends the next question.
func (s *schedule) ask() {
	s.n++
	id := fmt.Sprintf("pq%d", s.n)
	s.f.send(map[string]any{"type": "question", "id": id,
		"text": fmt.Sprintf("Tell me about a project you are proud of, take %d.", s.n)})
	s.qs[id] = &asked{sent: time.Now()}
	s.order = append(s.order, id)
}

// note records one message.
func (s *schedule) note(m feedMsg) {
	if m.Type == "error" {
		s.f.t.Fatalf("error message: %+v", m)
	}
	q := s.qs[m.ID]
	switch {
	case m.Type == "level":
		s.levels = append(s.levels, m)
	case q == nil:
	case m.Type == "answer_start":
		q.level, q.source = m.Level, m.Source
	case m.Type == "answer_end":
		s.ended[m.ID] = true
	case (m.Type == "answer_delta" && m.Text != "" || m.Type == "coach") && q.content == 0:
		q.content = max(m.at.Sub(q.sent), time.Nanosecond)
	}
}

// run asks every period until stop holds (checked after each message and
// tick) or until, failing the test.
func (s *schedule) run(until time.Time, stop func() bool) {
	s.f.t.Helper()
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	timeout := time.NewTimer(time.Until(until))
	defer timeout.Stop()
	for !stop() {
		select {
		case <-tick.C:
			s.ask()
		case m, ok := <-s.f.msgs:
			if !ok {
				s.f.t.Fatal("the connection ended")
			}
			s.note(m)
		case <-timeout.C:
			return
		}
	}
}

// drain reads until every question asked has content, for at most d.
func (s *schedule) drain(d time.Duration) {
	s.f.t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for s.pending() != "" {
		select {
		case m, ok := <-s.f.msgs:
			if !ok {
				s.f.t.Fatal("the connection ended")
			}
			s.note(m)
		case <-deadline.C:
			s.f.t.Fatalf("question %s has no content %v after the last was asked; %s", s.pending(), d, s)
		}
	}
}

// String lists every question's outcome, for failure messages.
func (s *schedule) String() string {
	var b strings.Builder
	for _, id := range s.order {
		q := s.qs[id]
		fmt.Fprintf(&b, "\n%s at +%v: content after %v, %s from %s, ended %v", id,
			q.sent.Sub(s.qs[s.order[0]].sent).Round(time.Millisecond), q.content.Round(time.Millisecond), q.level, q.source, s.ended[id])
	}
	for _, l := range s.levels {
		fmt.Fprintf(&b, "\nlevel %s → %s (%s) at +%v", l.From, l.Level, l.Reason, l.at.Sub(s.qs[s.order[0]].sent).Round(time.Millisecond))
	}
	return b.String()
}

// pending is the first question without content, or "".
func (s *schedule) pending() string {
	for _, id := range s.order {
		if s.qs[id].content == 0 {
			return id
		}
	}
	return ""
}

// TestPartialOutageThroughServer: both L1 vendors fail every completion
// with 503 while their model list answers. A session asking a question
// every 700 ms for 12 s changes level once (L1 → L2, vendor_all_down) and
// never climbs back while completions fail; once they heal it returns to
// L1 with reason recovered within recover_after × interval + 3 s, and
// every question has content within sla_ms throughout.
func TestPartialOutageThroughServer(t *testing.T) {
	t.Parallel()
	r := startHealthRig(t, "")
	f, w := openFeed(t, r.addr)
	if w.Level != "L1" {
		t.Fatalf("the session starts at %s, want L1", w.Level)
	}
	s := newSchedule(f, 700*time.Millisecond)
	s.ask() // a session under way: its vendors' connections are open
	s.drain(waitLimit)
	if q := s.qs[s.order[0]]; q.level != "L1" {
		t.Fatalf("before the outage the answer came from %s (%s), want L1", q.level, q.source)
	}

	r.partialOutage(true)
	r.requireModelList(t)
	s.ask()
	s.run(time.Now().Add(12*time.Second), func() bool { return false })
	during := len(s.levels)
	if during != 1 {
		t.Fatalf("%d level changes while completions failed, want one (L1 → L2): %+v", during, s.levels)
	}
	if lv := s.levels[0]; lv.From != "L1" || lv.Level != "L2" || lv.Reason != "vendor_all_down" || !lv.hasChip() {
		t.Fatalf("the level change while completions failed: %+v, want L1 → L2 (vendor_all_down) with a chip", lv)
	}
	if c := r.a.Counters(vendorsim.AnyModel); c.Failed == 0 {
		t.Fatalf("vendor-a failed no completion during the outage: %+v", c)
	}

	r.partialOutage(false)
	healed := time.Now()
	bound := time.Duration(acceptRecoverAfter*acceptIntervalMS)*time.Millisecond + 3*time.Second
	s.run(healed.Add(bound), func() bool { return len(s.levels) > during })
	if len(s.levels) == during {
		t.Fatalf("the session did not return to L1 within %v of the vendors healing", bound)
	}
	back := s.levels[during]
	if back.From != "L2" || back.Level != "L1" || back.Reason != "recovered" || back.hasChip() {
		t.Fatalf("after the vendors healed: %+v, want L2 → L1 (recovered) without a chip", back)
	}
	t.Logf("back at L1 %v after the vendors healed (bound %v)", back.at.Sub(healed).Round(time.Millisecond), bound)
	// The schedule may have asked a moment before the level changed: let
	// that question's content come first, since a question asked before
	// it has started supersedes it without an answer (docs/architecture.md).
	s.drain(waitLimit)
	s.ask() // answered at L1 again
	last := s.order[len(s.order)-1]
	s.drain(waitLimit)
	if len(s.levels) != during+1 {
		t.Fatalf("level changes after the return: %+v", s.levels[during+1:])
	}
	if q := s.qs[last]; q.level != "L1" {
		t.Fatalf("the question after the return was answered at %s by %s, want L1", q.level, q.source)
	}
	sla := time.Duration(acceptSLAMS) * time.Millisecond
	var worst time.Duration
	for _, id := range s.order {
		q := s.qs[id]
		if q.content > sla {
			t.Errorf("question %s (answered at %s by %s) had content after %v, over sla_ms %v%s", id, q.level, q.source, q.content, sla, s)
		}
		if q.level != "L1" && q.level != "L2" {
			t.Errorf("question %s answered at %q, want a model's answer (L1 or L2)", id, q.level)
		}
		worst = max(worst, q.content)
	}
	t.Logf("%d questions, slowest first content %v", len(s.order), worst.Round(time.Millisecond))
}

// TestResetAIWithL1DownThroughServer: with both L1 vendors failing
// completions, Reset AI sends the session to L1, and the next question,
// answered from L2, brings the chip and the session's level in the ops
// API and in Redis (poise:session:{id}) back to L2 within that question.
func TestResetAIWithL1DownThroughServer(t *testing.T) {
	t.Parallel()
	url := poiseDBURL(t)
	r := startHealthRig(t, url)
	f, w := openFeed(t, r.addr)
	s := newSchedule(f, time.Hour) // asked by hand
	r.partialOutage(true)
	for len(s.levels) == 0 && s.n < maxAsks {
		s.ask()
		s.drain(waitLimit)
	}
	if len(s.levels) == 0 || s.levels[0].Level != "L2" {
		t.Fatalf("with L1 failing, %d questions made the level changes %+v, want L1 → L2", s.n, s.levels)
	}

	f.send(map[string]any{"type": "reset_ai"})
	for len(s.levels) == 1 {
		s.note(f.next(waitLimit))
	}
	if lv := s.levels[1]; lv.From != "L2" || lv.Level != "L1" || lv.Reason != "reset" || lv.hasChip() {
		t.Fatalf("Reset AI: %+v, want L2 → L1 (reset) without a chip", lv)
	}
	s.ask()
	id := s.order[len(s.order)-1]
	var start, levelMsg *feedMsg
	for start == nil || !s.ended[id] {
		m := f.next(waitLimit)
		s.note(m)
		switch {
		case m.Type == "level" && levelMsg == nil:
			levelMsg = &m
		case m.Type == "answer_start" && m.ID == id:
			start = &m
		}
	}
	if start.Level != "L2" {
		t.Fatalf("after Reset AI with L1 down the answer came from %s (%s), want L2", start.Level, start.Source)
	}
	if levelMsg == nil || levelMsg.From != "L1" || levelMsg.Level != "L2" || levelMsg.Reason != "vendor_all_down" || !levelMsg.hasChip() || levelMsg.at.After(start.at) {
		t.Fatalf("the level message of the first question after Reset AI: %+v, want L1 → L2 with a chip before the answer", levelMsg)
	}
	rdb := redistest.Dial(t, url)
	// Before any further question: the records follow the session's
	// level change asynchronously, within moments.
	waitUntil(t, "the ops API and Redis say L2", func() bool {
		return opsLevel(t, r.addr, w.SessionID) == "L2" &&
			rdb.HGet(t.Context(), "poise:session:"+w.SessionID, "level").Val() == "L2"
	})
}

// opsLevel is the session's level in the ops API's session list.
func opsLevel(t *testing.T, addr, id string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/ops/api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var recs []struct {
		ID, Level string
	}
	if err := json.NewDecoder(resp.Body).Decode(&recs); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("ops API sessions: %s %v", resp.Status, err)
	}
	for _, r := range recs {
		if r.ID == id {
			return r.Level
		}
	}
	return ""
}
