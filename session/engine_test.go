package session

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/recall"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// These tests run real sessions on the real answer engine and health
// center, against one vendorsim per backend, through a real WebSocket.

var bankStore = sync.OnceValues(func() (*recall.Store, error) {
	b, err := recall.Load()
	if err != nil {
		return nil, err
	}
	return recall.NewStore(b, recall.Config{}, nil)
})

// switchableTemplates is the real template store with a switch that makes
// it fail, as a broken vector store would.
type switchableTemplates struct {
	store  *recall.Store
	broken atomic.Bool
}

func (s *switchableTemplates) Match(ctx context.Context, text, lang, seniority string) (tiers.TemplateMatch, error) {
	if s.broken.Load() {
		return tiers.TemplateMatch{}, errors.New("vector store unavailable")
	}
	m, err := s.store.Match(ctx, text, lang, seniority)
	return tiers.TemplateMatch{Hit: m.Hit, Similarity: m.Similarity, ID: m.TemplateID, Question: m.Question,
		Answer: m.Answer, Outline: m.Outline, Note: recall.Note(lang)}, err
}

func (s *switchableTemplates) probe(ctx context.Context) error {
	_, err := s.Match(ctx, "Tell me about yourself", "en", "mid")
	return err
}

// stack is a hub on a real engine with its simulated backends.
type stack struct {
	*testServer
	a, b, local *vendorsim.Server
	aURL        string // vendor-a's base URL
	tpl         *switchableTemplates
	health      *health.Center
	prompts     *promptLog // the chat requests every simulated backend received
}

type stackOptions struct {
	probeEvery time.Duration // health.interval_ms; default an hour (live traffic only)
	prefillB   bool
	largerA    string
	// inMemory runs the backends, the engine's and the probes' HTTP and
	// the WebSocket on one in-memory network (vendorsim.MemNet), so that
	// the stack works in a synctest bubble, which the test must then be
	// in. Else everything goes over loopback HTTP in real time.
	inMemory bool
}

func newStack(t testing.TB, o stackOptions) *stack {
	t.Helper()
	store, err := bankStore()
	if err != nil {
		t.Fatal(err)
	}
	prompts := &promptLog{}
	var n *vendorsim.MemNet
	hc := upstream.NewHTTPClient()
	if o.inMemory {
		n = vendorsim.NewMemNet()
		hc = n.Client()
	}
	sim := func(host string) (*vendorsim.Server, string) {
		s := vendorsim.New(vendorsim.Options{TokenDelay: time.Millisecond, FirstTokenDelay: 10 * time.Millisecond})
		if n != nil {
			n.Serve(host+":80", prompts.wrap(s))
			t.Cleanup(s.Close)
			return s, "http://" + host + ":80/v1"
		}
		srv := httptest.NewServer(prompts.wrap(s))
		t.Cleanup(func() { s.Close(); srv.Close() })
		return s, srv.URL + "/v1"
	}
	st := &stack{tpl: &switchableTemplates{store: store}, prompts: prompts}
	var aURL, bURL, localURL string
	st.a, aURL = sim("vendor-a")
	st.aURL = aURL
	st.b, bURL = sim("vendor-b")
	st.local, localURL = sim("local")
	if o.probeEvery == 0 {
		o.probeEvery = time.Hour
	}
	cfg := tiers.Config{
		SLAms:  1500,
		Health: tiers.HealthConfig{IntervalMS: int(o.probeEvery / time.Millisecond), RecoverAfter: 3},
		L1: tiers.L1Config{HedgeAfterMS: 100, FirstTokenTimeoutMS: 300, DownAfter: 3, DownWindowMS: 60000, Vendors: []upstream.Endpoint{
			{Name: "vendor-a", BaseURL: aURL, APIKey: "k", Model: "model-a", LargerModel: o.largerA},
			{Name: "vendor-b", BaseURL: bURL, APIKey: "k", Model: "model-b", Prefill: o.prefillB},
		}},
		L2:         tiers.L2Config{Name: "local", BaseURL: localURL, Model: "local-model", TimeoutMS: 300, FailAfter: 5, FailWindowMS: 60000},
		HTTPClient: hc,
	}
	log := zerolog.Nop()
	t.Cleanup(hc.CloseIdleConnections)
	st.health = health.New(health.Config{IntervalMS: cfg.Health.IntervalMS, RecoverAfter: 3, L1DownAfter: 3, L1DownWindowMS: 60000,
		L2FailAfter: 5, L2FailWindowMS: 60000}, []health.Probe{
		// List probes: the tests count the vendors' model requests.
		health.ListProbe("vendor-a", tiers.L1, aURL, "k", hc),
		health.ListProbe("vendor-b", tiers.L1, bURL, "k", hc),
		health.CompletionProbe("local", tiers.L2, cfg.L2.Endpoint(), 300*time.Millisecond, hc),
		{Name: tiers.TemplatesBackend, Level: tiers.L3, Check: st.tpl.probe},
	}, log, nil)
	engine := tiers.NewEngine(cfg, st.health, st.tpl, log, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { st.health.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait(); engine.Close() })
	hubCfg := Config{Answerer: engine, Health: st.health, SLA: 1500 * time.Millisecond}
	if n != nil {
		st.testServer = serveMem(t, n, hubCfg)
	} else {
		st.testServer = newTestServer(t, hubCfg)
	}
	return st
}

// serveMem runs the Hub of cfg on n at memAddr; its clients dial over n.
// The cleanup shuts the hub down, then closes n.
func serveMem(t testing.TB, n *vendorsim.MemNet, cfg Config) *testServer {
	t.Helper()
	cfg.AnonymousAnywhere = true // in-memory connections have no loopback address
	if cfg.Log.GetLevel() == zerolog.TraceLevel {
		cfg.Log = zerolog.Nop()
	}
	hub := NewHub(cfg)
	n.Serve(memAddr, hub)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := hub.Shutdown(ctx); err != nil {
			t.Errorf("hub shutdown: %v", err)
		}
		n.Close()
	})
	return &testServer{hub: hub, url: "ws://" + memAddr + "/ws", hc: n.Client()}
}

// answer asks a question and returns the first useful content message
// (answer_start or coach) and, for an answer, its text and end reason.
// It fails the test on any error message.
func (c *client) answer(q string) (first msg, text, end string) {
	c.t.Helper()
	var level msg // level messages may come and go; answer does not look at them
	return c.answerOrLevel(q, &level)
}

// bankQuestion is a question the template bank answers at L3.
const bankQuestion = "So, could you tell me a little about yourself?"

// engineFaultCase is a fault of vendor-a's primary model and the answer
// the client must see.
type engineFaultCase struct {
	name       string
	opts       stackOptions
	faultA     vendorsim.Fault
	wantType   string // answer_start or coach
	wantLevel  string
	wantSource string // a prefix of the answer's source; empty at L3: the template the bank matches
	wantEnd    string
}

// TestEngineFaults: each fault of vendor-a's model ends in the answer its
// class calls for (the backup, the larger model, a continuation, the
// templates or the coach). The stack runs in fake time.
func TestEngineFaults(t *testing.T) {
	cases := []engineFaultCase{
		{"healthy", stackOptions{}, vendorsim.Fault{}, "answer_start", "L1", "vendor-a", endDone},
		{"rate_limited 429", stackOptions{}, vendorsim.Fault{Status: 429}, "answer_start", "L1", "vendor-b", endDone},
		{"rate_limited 429 with a long Retry-After", stackOptions{}, vendorsim.Fault{Status: 429, RetryAfter: "30"}, "answer_start", "L1", "vendor-b", endDone},
		{"server 500", stackOptions{}, vendorsim.Fault{Status: 500}, "answer_start", "L1", "vendor-b", endDone},
		{"server 503", stackOptions{}, vendorsim.Fault{Status: 503}, "answer_start", "L1", "vendor-b", endDone},
		{"server connection reset", stackOptions{}, vendorsim.Fault{ResetBeforeHeaders: true}, "answer_start", "L1", "vendor-b", endDone},
		{"timeout no answer", stackOptions{}, vendorsim.Fault{NoAnswer: true}, "answer_start", "L1", "vendor-b", endDone},
		{"timeout slow first token", stackOptions{}, vendorsim.Fault{FirstTokenDelayMS: 3000}, "answer_start", "L1", "vendor-b", endDone},
		{"unavailable 402 quota", stackOptions{}, vendorsim.Fault{Status: 402}, "answer_start", "L1", "vendor-b", endDone},
		{"unavailable 404 model", stackOptions{}, vendorsim.Fault{Status: 404}, "answer_start", "L1", "vendor-b", endDone},
		// The backup is fired at once on the primary's error, so either the
		// larger model or the backup answers; the model that overflowed is
		// never asked again (checked below).
		{"context_length to the larger model", stackOptions{largerA: "model-a-128k"}, vendorsim.Fault{Status: 400, Code: "context_length_exceeded"}, "answer_start", "L1", "vendor-", endDone},
		{"context_length without a larger model", stackOptions{}, vendorsim.Fault{Status: 400, Code: "context_length_exceeded"}, "answer_start", "L1", "vendor-b", endDone},
		{"cut continued by prefill", stackOptions{prefillB: true}, vendorsim.Fault{CutAfter: 3}, "answer_start", "L1", "vendor-a", endDone},
		{"cut without prefill", stackOptions{}, vendorsim.Fault{CutAfter: 3}, "answer_start", "L1", "vendor-a", endCut},
		{"stall after the first token", stackOptions{}, vendorsim.Fault{StallAfter: 2}, "answer_start", "L1", "vendor-a", endCut},
		{"refused content_filter", stackOptions{}, vendorsim.Fault{Status: 400, Code: "content_filter"}, "coach", "", "", ""},
		{"refused finish_reason", stackOptions{}, vendorsim.Fault{FilterFinish: true}, "answer_start", "L1", "vendor-a", endCut},
		{"bad_request falls to templates", stackOptions{}, vendorsim.Fault{Status: 400, Code: "invalid_value"}, "answer_start", "L3", "intro-", endDone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { engineFault(t, tc) }) })
	}
}

// engineFault is one case of TestEngineFaults, in a synctest bubble.
func engineFault(t *testing.T, tc engineFaultCase) {
	tc.opts.inMemory = true
	st := newStack(t, tc.opts)
	st.a.SetFault("model-a", tc.faultA)
	c, w := st.start(t, "en")
	if w.str("level") != "L1" {
		t.Fatalf("welcome level %v, want L1", w["level"])
	}
	first, text, end := c.answer(bankQuestion)
	if first.str("type") != tc.wantType {
		t.Fatalf("first content = %v, want %s", first, tc.wantType)
	}
	if tc.wantType == "coach" {
		return
	}
	if tc.wantLevel == "L3" {
		m, err := st.tpl.store.Match(t.Context(), bankQuestion, "en", "mid")
		if err != nil || !m.Hit {
			t.Fatalf("the bank matches no template for %q: %+v, %v", bankQuestion, m, err)
		}
		tc.wantSource = m.TemplateID
	}
	if first.str("level") != tc.wantLevel || !strings.HasPrefix(first.str("source"), tc.wantSource) {
		t.Fatalf("answer from %s %s, want %s %s", first.str("level"), first.str("source"), tc.wantLevel, tc.wantSource)
	}
	if end != tc.wantEnd || text == "" {
		t.Fatalf("answer ended %q with %d bytes, want %q with text", end, len(text), tc.wantEnd)
	}
	if tc.faultA.Code == "context_length_exceeded" {
		if n := st.a.Counters("model-a").Requests; n != 1 {
			t.Fatalf("the overflowing model was asked %d times, want once", n)
		}
		if tc.opts.largerA != "" && st.a.Counters(tc.opts.largerA).Requests != 1 {
			t.Fatalf("the larger model was not tried")
		}
	}
}

// TestEngineLevelsThroughOutages: every L1 vendor down three times → L2
// answers and vendor_all_down; five local timeouts → local_failing and
// templates; a broken template store → templates_failing and the coach;
// then 3 passing probes per level climb back one level at a time.
// The stack runs in fake time.
func TestEngineLevelsThroughOutages(t *testing.T) { synctest.Test(t, levelsThroughOutages) }

func levelsThroughOutages(t *testing.T) {
	st := newStack(t, stackOptions{probeEvery: 400 * time.Millisecond, inMemory: true})
	c, _ := st.start(t, "en")
	down := vendorsim.Fault{Status: 503, HealthDown: true}
	st.a.SetFault(vendorsim.AnyModel, down)
	st.b.SetFault(vendorsim.AnyModel, down)
	var level msg
	for i := 0; level == nil; i++ {
		first, _, _ := c.answerOrLevel(bankQuestion, &level)
		if first != nil && first.str("type") == "answer_start" && first.str("level") != "L2" {
			t.Fatalf("question %d answered at %s, want L2 while L1 is down", i, first.str("level"))
		}
	}
	checkLevel(t, level, "L1", "L2", evVendorAllDown, chipFor(tiers.L2, "en"))

	st.local.SetFault(vendorsim.AnyModel, vendorsim.Fault{FirstTokenDelayMS: 2000, HealthDown: true})
	level = nil
	for level == nil {
		first, _, _ := c.answerOrLevel(bankQuestion, &level)
		if first != nil && first.str("type") == "answer_start" && first.str("level") == "L1" {
			t.Fatalf("answered at L1 while it is down: %v", first)
		}
	}
	checkLevel(t, level, "L2", "L3", evLocalFailing, chipFor(tiers.L3, "en"))
	if first, _, _ := c.answer(bankQuestion); first.str("level") != "L3" {
		t.Fatalf("at L3 the answer came from %v (templates down: %v)", first, st.health.Down(tiers.L3))
	}

	st.tpl.broken.Store(true)
	checkLevel(t, c.readType("level"), "L3", "L4", evTemplatesFailing, chipFor(tiers.L4, "en"))
	if first, _, _ := c.answer(bankQuestion); first.str("type") != "coach" {
		t.Fatalf("at L4 got %v, want the coach", first)
	}

	st.tpl.broken.Store(false)
	checkLevel(t, c.readType("level"), "L4", "L3", evRecovered, chipFor(tiers.L3, "en"))
	st.local.SetFault(vendorsim.AnyModel, vendorsim.Fault{})
	checkLevel(t, c.readType("level"), "L3", "L2", evRecovered, chipFor(tiers.L2, "en"))
	st.a.SetFault(vendorsim.AnyModel, vendorsim.Fault{})
	st.b.SetFault(vendorsim.AnyModel, vendorsim.Fault{})
	checkLevel(t, c.readType("level"), "L2", "L1", evRecovered, nil)
}

// answerOrLevel asks q and reads until its first useful content, storing a
// level message met on the way in *level.
func (c *client) answerOrLevel(q string, level *msg) (first msg, text, end string) {
	c.t.Helper()
	return c.askSeeing(q, func(m msg) {
		if m.str("type") == "level" && *level == nil {
			*level = m
		}
	})
}

// askSeeing asks q and reads until its first useful content: the answer
// (through answer_end: its text and end reason) or the coach. Any other
// message met on the way goes to other; an error message fails the test.
func (c *client) askSeeing(q string, other func(msg)) (first msg, text, end string) {
	c.t.Helper()
	c.send(map[string]any{"type": "question", "text": q})
	for {
		m := c.read()
		switch m.str("type") {
		case "error":
			c.t.Fatalf("error message reached the client: %v", m)
		case "coach":
			if first == nil {
				return m, "", ""
			}
		case "answer_start":
			first = m
		case "answer_end":
			return first, text, m.str("reason")
		case "answer_delta":
			text += m.str("text")
		default:
			other(m)
		}
	}
}

// TestTemplatesAtL3: with every model down, paraphrased questions get
// template answers in zh and en with the honest note, and utterances that
// match no template get the coach.
func TestTemplatesAtL3(t *testing.T) {
	st := newStack(t, stackOptions{})
	down := vendorsim.Fault{Status: 503, HealthDown: true}
	for _, s := range []*vendorsim.Server{st.a, st.b, st.local} {
		s.SetFault(vendorsim.AnyModel, down)
	}
	cases := []struct {
		lang, text string
		template   bool
	}{
		{"en", "Okay, so, what would you say is your biggest weakness?", true},
		{"en", "Why are you looking to leave your current job?", true},
		{"zh", "嗯，那你觉得自己最大的缺点是什么？", true},
		{"zh", "你为什么想离开现在的公司？", true},
		{"en", "Let me tell you a bit about how our office is laid out.", false},
		{"en", "How does Paxos handle a dueling-proposers livelock?", false},
		{"zh", "我们公司食堂中午十二点开饭。", false},
	}
	for _, lang := range []string{"en", "zh"} {
		c, _ := st.start(t, lang)
		for _, tc := range cases {
			if tc.lang != lang {
				continue
			}
			var level msg
			first, text, _ := c.answerOrLevel(tc.text, &level)
			switch {
			case tc.template && (first.str("type") != "answer_start" || first.str("level") != "L3" || first.str("note") != recall.Note(lang) || text == ""):
				t.Errorf("%q: got %v with %d bytes, want an L3 template with its note", tc.text, first, len(text))
			case !tc.template && first.str("type") != "coach":
				t.Errorf("%q: got %v, want the coach", tc.text, first)
			}
		}
	}
}

// TestResetAIRetriesModels: after the candidate presses Reset AI, the next
// question tries L1 again even while the health center still marks it
// down, so vendors that are back answer at once.
// TestResetAIShowsTheTruth: Reset AI with L1 still failing sends the
// session to L1, and its next question, answered from L2 after L1's
// attempt fails, takes the session (and its chip) back to L2 before the
// answer shows: the chip never says L1 while L2 answers.
func TestResetAIShowsTheTruth(t *testing.T) {
	st := newStack(t, stackOptions{})
	c, _ := st.start(t, "en")
	st.a.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: 503})
	st.b.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: 503})
	var level msg
	for level == nil {
		c.answerOrLevel(bankQuestion, &level)
	}
	c.send(map[string]any{"type": "reset_ai"})
	checkLevel(t, c.readType("level"), "L2", "L1", evReset, nil)
	level = nil
	first, _, _ := c.answerOrLevel(bankQuestion, &level)
	if first.str("level") != "L2" {
		t.Fatalf("with L1 failing the answer came from %v, want L2", first)
	}
	if level == nil {
		t.Fatal("the answer came from L2 with the session left at L1")
	}
	checkLevel(t, level, "L1", "L2", evVendorAllDown, chipFor(tiers.L2, "en"))
}

func TestResetAIRetriesModels(t *testing.T) {
	st := newStack(t, stackOptions{})
	c, _ := st.start(t, "en")
	st.a.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: 503})
	st.b.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: 503})
	var level msg
	for level == nil {
		c.answerOrLevel(bankQuestion, &level)
	}
	checkLevel(t, level, "L1", "L2", evVendorAllDown, chipFor(tiers.L2, "en"))
	st.a.SetFault(vendorsim.AnyModel, vendorsim.Fault{})
	st.b.SetFault(vendorsim.AnyModel, vendorsim.Fault{})
	if first, _, _ := c.answer(bankQuestion); first.str("level") != "L2" {
		t.Fatalf("before the reset the answer came from %v, want L2 (L1 is still marked down)", first)
	}
	c.send(map[string]any{"type": "reset_ai"})
	checkLevel(t, c.readType("level"), "L2", "L1", evReset, nil)
	if first, _, _ := c.answer(bankQuestion); first.str("level") != "L1" {
		t.Fatalf("after Reset AI the answer came from %v, want L1", first)
	}
}
