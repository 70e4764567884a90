package session

import (
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/poise-dev/poise/asr"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/session/quota/quotatest"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/health/healthtest"
	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

// limitStack is newStack's real engine and simulated backends behind a hub
// of its own with limits, a test clock, metrics, an ops store and counters
// the test can read. (newStack's own hub stays unused.)
type limitStack struct {
	*stack
	ts       *testServer
	clock    *healthtest.Clock
	metrics  *Metrics
	store    *MemoryStore
	counters *quota.MemoryCounters
}

func newLimitStack(t *testing.T, limits quota.Limits, o stackOptions) *limitStack {
	t.Helper()
	st := newStack(t, o)
	ls := &limitStack{stack: st, clock: healthtest.NewClockAt(quotatest.MidMinute), metrics: NewMetrics(prometheus.NewPedanticRegistry()),
		store: NewMemoryStore(), counters: quota.NewMemoryCounters()}
	ls.ts = newTestServer(t, Config{Answerer: st.hub.cfg.Answerer, Health: st.health, SLA: 1500 * time.Millisecond,
		Limits: limits, Now: ls.clock.Now, Metrics: ls.metrics, Store: ls.store, Counters: ls.counters})
	return ls
}

func (m *Metrics) hits(limit string) float64 {
	return testutil.ToFloat64(m.limitHits.WithLabelValues(limit))
}

// opsLimit waits until the ops store shows session id with the given limit.
func opsLimit(t *testing.T, store Store, id, limit string) {
	t.Helper()
	eventually(t, "ops record of "+id+" with limit "+limit, func() bool {
		recs, _ := store.Sessions(t.Context())
		for _, r := range recs {
			if r.ID == id {
				return r.Limit == limit
			}
		}
		return false
	})
}

// ask sends a question and reads until its first useful content: the
// answer (through answer_end) or the coach. It returns the limit messages
// met on the way, and fails on any error message.
func (c *client) ask(q string) (first msg, limits []msg) {
	c.t.Helper()
	first, _, _ = c.askSeeing(q, func(m msg) {
		if m.str("type") != "limit" {
			return
		}
		if m.seq() == 0 {
			c.t.Fatalf("limit message without seq: %v", m)
		}
		limits = append(limits, m)
	})
	return first, limits
}

// checkLimit fails unless m is the limit message of limit in lang, lifting
// at until.
func checkLimit(t *testing.T, m msg, limit, lang string, until time.Time) {
	t.Helper()
	if m.str("type") != "limit" || m.str("limit") != limit || m.str("hint") != limitHint(limit, lang) || m.str("hint") == "" {
		t.Fatalf("limit message %v, want %s with its %s hint", m, limit, lang)
	}
	if got, _ := m["until"].(float64); int64(got) != until.UnixMilli() {
		t.Fatalf("limit until %v, want %d (%v)", m["until"], until.UnixMilli(), until)
	}
}

// TestQuestionLimitMidInterview: with questions_per_minute 3, the 4th
// question of a minute is answered from the templates (the 5th, matching
// none, by the coach), with one limit message and no error; the metric
// and the ops record show it; the next minute the models answer again.
func TestQuestionLimitMidInterview(t *testing.T) {
	ls := newLimitStack(t, quota.Limits{QuestionsPerMinute: 3}, stackOptions{})
	c, w := ls.ts.start(t, "zh")
	id := w.str("session_id")
	for i := range 3 {
		if first, limits := c.ask(bankQuestion); first.str("level") != "L1" || len(limits) != 0 {
			t.Fatalf("question %d: %v, limits %v; want L1", i+1, first, limits)
		}
	}
	first, limits := c.ask(bankQuestion)
	if first.str("type") != "answer_start" || first.str("level") != "L3" || len(limits) != 1 {
		t.Fatalf("4th question: %v with limits %v; want a template answer and one limit message", first, limits)
	}
	checkLimit(t, limits[0], limitQuestions, "zh", quota.WindowEnd(quotatest.MidMinute, time.Minute))
	if n := ls.a.Counters("model-a").Requests; n != 3 {
		t.Fatalf("vendor a got %d requests, want 3: the 4th question must skip the models", n)
	}
	opsLimit(t, ls.store, id, limitQuestions)

	first, limits = c.ask("How does Paxos handle a dueling-proposers livelock?")
	if first.str("type") != "coach" || len(limits) != 0 {
		t.Fatalf("5th question (no template): %v, limits %v; want the coach and no second limit message", first, limits)
	}
	if got := ls.metrics.hits(limitQuestions); got != 2 {
		t.Fatalf("poise_limit_hits_total{limit=%q} = %v, want 2", limitQuestions, got)
	}

	ls.clock.Advance(30 * time.Second) // the next minute
	if first, limits := c.ask(bankQuestion); first.str("level") != "L1" || len(limits) != 0 {
		t.Fatalf("next minute: %v, limits %v; want L1 again", first, limits)
	}
	opsLimit(t, ls.store, id, "")
	if got := ls.metrics.hits(limitQuestions); got != 2 {
		t.Fatalf("hits %v after the limit lifted, want still 2", got)
	}
}

// TestTokenBudgetFallsToLowerLevel: a daily budget that fits one answer
// per vendor: the second question skips vendor a (no request reaches it)
// for b, the third skips both and the local model answers (L2), with the
// limit message; the ops record shows it.
func TestTokenBudgetFallsToLowerLevel(t *testing.T) {
	req := tiers.Request{Question: bankQuestion, Profile: tiers.Profile{Lang: "en", Seniority: "mid", Role: "backend engineer"}}
	budget := tiers.AttemptTokens(req, tiers.L1) + 10 // one answer: its actual cost is far more than 10
	ls := newLimitStack(t, quota.Limits{DailyTokensPerVendor: budget}, stackOptions{})
	c, w := ls.ts.start(t, "en")
	want := []struct{ level, source string }{{"L1", "vendor-a"}, {"L1", "vendor-b"}, {"L2", "local"}}
	var limits []msg
	for i, wt := range want {
		first, l := c.ask(bankQuestion)
		if first.str("level") != wt.level || first.str("source") != wt.source {
			t.Fatalf("question %d answered by %s %s, want %s %s", i+1, first.str("level"), first.str("source"), wt.level, wt.source)
		}
		limits = append(limits, l...)
		if i < 2 && len(limits) != 0 {
			t.Fatalf("question %d: limit message %v while L1 still answers", i+1, limits)
		}
	}
	if len(limits) != 1 {
		t.Fatalf("limit messages %v, want one when the answer fell to L2", limits)
	}
	checkLimit(t, limits[0], limitTokens, "en", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	for _, sim := range []struct {
		s     *vendorsim.Server
		model string
	}{{ls.a, "model-a"}, {ls.b, "model-b"}} { // the local model's count has its health probes too
		if n := sim.s.Counters(sim.model).Requests; n != 1 {
			t.Fatalf("%s got %d requests, want 1: no request once over budget", sim.model, n)
		}
	}
	if ls.health.Down(tiers.L1) {
		t.Fatal("vendors over budget took L1 down")
	}
	opsLimit(t, ls.store, w.str("session_id"), limitTokens)
	if got := ls.metrics.hits(limitTokens); got != 1 {
		t.Fatalf("hits %v, want 1", got)
	}
}

// TestTokenBudgetCountsHedgedAttempts: the primary is slow, the backup is
// fired after hedge_after and wins; the day's counts have both attempts.
func TestTokenBudgetCountsHedgedAttempts(t *testing.T) {
	ls := newLimitStack(t, quota.Limits{DailyTokensPerVendor: 1_000_000}, stackOptions{})
	ls.a.SetFault("model-a", vendorsim.Fault{FirstTokenDelayMS: 1000})
	c, w := ls.ts.start(t, "en")
	if first, _ := c.ask(bankQuestion); first.str("source") != "vendor-b" {
		t.Fatalf("answer %v, want the backup's", first)
	}
	subject := "anon:" + w.str("session_id")
	count := func(backend string) int64 {
		n, _, _ := ls.counters.Add(t.Context(), "tokens:"+subject+":"+backend, 0, 0, quota.TokenWindow, ls.clock.Now())
		return n
	}
	a, b := count("vendor-a"), count("vendor-b")
	if a <= 0 || b <= a {
		t.Fatalf("day's tokens a %d, b %d; want the cancelled primary's prompt and the backup's prompt and answer", a, b)
	}
	t.Logf("tokens counted: primary (cancelled) %d, backup (answered) %d", a, b)
}

// TestAudioLimitMidStream: with audio_seconds_per_hour 3, the first
// question of a spoken WAV gets its caption, then frames are dropped: one
// limit message, no error, no caption of the later questions, and a typed
// question is still answered.
func TestAudioLimitMidStream(t *testing.T) {
	sim := vendorsim.New(vendorsim.Options{Transcripts: []string{spoken}, InferenceDelay: 30 * time.Millisecond})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { sim.Close(); srv.Close() })
	acfg := asr.Config{WhisperURLs: []string{srv.URL}, PartialEveryMs: 150, RetryMs: 100}
	pool := asr.NewPool(acfg, zerolog.Nop(), nil)
	t.Cleanup(pool.Close)
	m := NewMetrics(prometheus.NewPedanticRegistry())
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L3), ASR: pool, ASRConfig: acfg, Metrics: m,
		Limits: quota.Limits{AudioSecondsPerHour: 3}})
	c, _ := ts.start(t, "en")
	if err := c.streamWAV("../asr/testdata/en_questions.wav", 8); err != nil { // 11 s of audio
		t.Fatal(err)
	}
	c.send(map[string]any{"type": "question", "text": "Why this role?"})
	finals, limits, coached := 0, 0, false
	for finals < 1 || !coached {
		m := c.read()
		switch m.str("type") {
		case "error", "level":
			t.Fatalf("over the audio limit got %v", m)
		case "limit":
			limits++
			checkLimit(t, m, limitAudio, "en", quota.WindowEnd(time.Now(), time.Hour))
		case "caption":
			if m["final"] == true {
				finals++
			}
		case "coach":
			coached = true
		}
	}
	if finals != 1 || limits != 1 {
		t.Fatalf("%d final captions and %d limit messages; want the first utterance only (3 of 11 s) and one limit", finals, limits)
	}
	if got := m.hits(limitAudio); got != 1 {
		t.Fatalf("audio hits %v, want 1 (once per episode)", got)
	}
}

// TestSessionsPerSubjectRefused: a hello over sessions_per_subject is
// refused with too_many_sessions (nothing to answer yet) and counted.
func TestSessionsPerSubjectRefused(t *testing.T) {
	const secret = "test-secret"
	m := NewMetrics(prometheus.NewPedanticRegistry())
	ts := newTestServer(t, Config{Secret: secret, Metrics: m, Limits: quota.Limits{SessionsPerSubject: 1}})
	first := ts.dial(t)
	first.send(tokenHello(t, secret, "alice"))
	first.readType("welcome")
	second := ts.dial(t)
	second.send(tokenHello(t, secret, "alice"))
	if e := second.readType("error"); e.str("code") != codeTooMany {
		t.Fatalf("second session: %v, want %s", e, codeTooMany)
	}
	if got := m.hits(limitSessions); got != 1 {
		t.Fatalf("sessions hits %v, want 1", got)
	}
}

func tokenHello(t *testing.T, secret, subject string) map[string]any {
	t.Helper()
	tok, err := IssueToken(secret, subject, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := hello("en")
	h["token"] = tok
	return h
}

// TestLimitsSharedBetweenHubs: two hubs on one Redis share a subject's
// counts: questions asked on either count against one limit, and live
// sessions on either count against sessions_per_subject.
func TestLimitsSharedBetweenHubs(t *testing.T) {
	url := testRedisURL(t)
	const secret = "test-secret"
	limits := quota.Limits{QuestionsPerMinute: 3, SessionsPerSubject: 2}
	node := func() *testServer {
		return newTestServer(t, Config{Secret: secret, Limits: limits, Health: newFakeHealth(tiers.L3),
			Counters: sharedCounters(t, url)})
	}
	n1, n2 := node(), node()
	start := func(ts *testServer) *client {
		c := ts.dial(t)
		c.send(tokenHello(t, secret, "alice"))
		c.readType("welcome")
		return c
	}
	c1, c2 := start(n1), start(n2)
	for i, c := range []*client{c1, c2, c1} {
		if _, limits := c.ask("Why this role?"); len(limits) != 0 {
			t.Fatalf("question %d: limited early: %v", i+1, limits)
		}
	}
	if _, limits := c2.ask("Why this role?"); len(limits) != 1 || limits[0].str("limit") != limitQuestions {
		t.Fatalf("4th question of the subject, on node 2: limits %v; want the shared limit to bite", limits)
	}
	rdb := redistest.Dial(t, url)
	eventually(t, "both sessions held in Redis", func() bool {
		n, _ := rdb.ZCard(t.Context(), "poise:limit:sessions:alice").Result()
		return n == 2
	})
	third := n1.dial(t)
	third.send(tokenHello(t, secret, "alice"))
	if e := third.readType("error"); e.str("code") != codeTooMany {
		t.Fatalf("third session (one live on each node): %v, want %s", e, codeTooMany)
	}
}

// TestSessionsRaceOnTwoHubs: hellos of one subject racing on two hubs
// that share a Redis never open more than sessions_per_subject sessions:
// the check and the hold are one step.
func TestSessionsRaceOnTwoHubs(t *testing.T) {
	url := testRedisURL(t)
	const secret = "test-secret"
	const racers = 12
	limits := quota.Limits{SessionsPerSubject: 2}
	node := func() *testServer {
		return newTestServer(t, Config{Secret: secret, Limits: limits, Health: newFakeHealth(tiers.L3),
			Counters: sharedCounters(t, url)})
	}
	nodes := []*testServer{node(), node()}
	clients := make([]*client, racers)
	for i := range clients {
		clients[i] = nodes[i%2].dial(t)
	}
	var wg sync.WaitGroup
	replies := make([]string, racers)
	for i, c := range clients {
		wg.Go(func() {
			c.send(tokenHello(t, secret, "racer"))
			replies[i] = c.read().str("type")
		})
	}
	wg.Wait()
	welcomes := 0
	for _, r := range replies {
		if r == "welcome" {
			welcomes++
		}
	}
	if welcomes != limits.SessionsPerSubject {
		t.Fatalf("%d racing hellos on two hubs: %d welcomes (%v), want %d", racers, welcomes, replies, limits.SessionsPerSubject)
	}
}

// TestLimitsWhileRedisAway: with Redis unreachable, limits are counted on
// the node: questions are answered, and the limit still bites.
func TestLimitsWhileRedisAway(t *testing.T) {
	counters := sharedCounters(t, "redis://127.0.0.1:1?max_retries=-1") // nothing listens on port 1
	ts := newTestServer(t, Config{Limits: quota.Limits{QuestionsPerMinute: 2}, Health: newFakeHealth(tiers.L3), Counters: counters})
	c, _ := ts.start(t, "en")
	for i := range 2 {
		if first, limits := c.ask("Why this role?"); first.str("type") != "coach" || len(limits) != 0 {
			t.Fatalf("question %d with Redis away: %v %v", i+1, first, limits)
		}
	}
	if _, limits := c.ask("Why this role?"); len(limits) != 1 {
		t.Fatalf("3rd question with Redis away: limits %v, want the local count to bite", limits)
	}
}

// TestLimitHintsMatchPage: the page words a limit's hint itself after a
// language switch; its table must say what the server says.
func TestLimitHintsMatchPage(t *testing.T) {
	page, err := os.ReadFile("../web/static/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	for lang, hints := range limitHints {
		for limit, hint := range hints {
			if !strings.Contains(string(page), hint) {
				t.Errorf("web/static/i18n.js lacks the %s hint of %s: %q", lang, limit, hint)
			}
		}
	}
}
