package tiers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/coach"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/health/healthtest"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// promptRecorder passes requests to the simulator and keeps the system
// prompt of every chat completion it received, by model.
type promptRecorder struct {
	sim *vendorsim.Server
	mu  sync.Mutex
	got map[string][]string
}

func (p *promptRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(body, &req) == nil && len(req.Messages) > 0 && req.Messages[0].Role == "system" {
			p.mu.Lock()
			p.got[req.Model] = append(p.got[req.Model], req.Messages[0].Content)
			p.mu.Unlock()
		}
	}
	p.sim.ServeHTTP(w, r)
}

// last returns the last system prompt model received.
func (p *promptRecorder) last(model string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.got[model]; len(l) > 0 {
		return l[len(l)-1]
	}
	return ""
}

// TestPromptPerTypeOverTheWire asks questions of every type at L1 and at
// L2 and checks the system prompt the simulated vendor and local model
// received: the shape of the question's type (of its coach frame where it
// has one of its own: a comparison, troubleshooting, pros and cons, a
// failure, a self-introduction, why leaving, why this job, strengths, a
// career plan), full at L1, short at L2.
func TestPromptPerTypeOverTheWire(t *testing.T) {
	sim := vendorsim.New(vendorsim.Options{TokenDelay: -1})
	rec := &promptRecorder{sim: sim, got: map[string][]string{}}
	srv := httptest.NewServer(rec)
	t.Cleanup(func() { sim.Close(); srv.Close() })
	for _, m := range []string{modelA, modelLocal} {
		sim.SetReply(m, "A reply.")
	}
	cfg := Config{
		SLAms:  3000,
		Health: HealthConfig{IntervalMS: 1000, RecoverAfter: 3},
		L1: L1Config{Mode: ModeHedge, HedgeAfterMS: 5000, FirstTokenTimeoutMS: 2000, DownAfter: 3, DownWindowMS: 60000,
			Vendors: []upstream.Endpoint{{Name: "a", BaseURL: srv.URL + "/v1", APIKey: "sk-a", Model: modelA}}},
		L2: L2Config{Name: "local", BaseURL: srv.URL + "/v1", Model: modelLocal, TimeoutMS: 2000, FailAfter: 5},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	hc := health.New(healthConfig(cfg), healthProbes(cfg), zerolog.Nop(), health.NewMetrics(reg), health.WithClock(healthtest.NewClock().Now))
	e := NewEngine(cfg, hc, &fakeTemplates{miss: true}, zerolog.Nop(), NewMetrics(reg, upstream.NewMetrics(reg)))
	t.Cleanup(e.Close)

	profile := Profile{Lang: "en", Seniority: "senior", Role: "backend engineer", Resume: "Acme Pay, 2019–2024: led the ledger rewrite."}
	tests := []struct {
		question    string
		typ         coach.Type
		full, short string // in the L1 and in the L2 system prompt
	}{
		{"Tell me about a time you disagreed with your manager.", coach.Behavioural, "STAR", "STAR"},
		{"讲一次你和同事意见不合的经历。", coach.Behavioural, "STAR", "STAR"},
		{"讲一个你失败的经历", coach.Behavioural, "CARL", "CARL"},
		{"Tell me about yourself.", coach.Behavioural, "introduce themselves", "self-introduction"},
		{"你为什么离职？", coach.Behavioural, "moving towards", "moving towards"},
		{"Why do you want to work here?", coach.Behavioural, "wants this job", "Why this job"},
		{"Where do you see yourself in five years?", coach.Behavioural, "career plan", "Career plan"},
		{"你最大的优点是什么？", coach.Behavioural, "strengths", "Strengths"},
		{"What's the difference between TCP and UDP?", coach.Concept, "when to pick which", "when to pick which"},
		{"Redis 的持久化是怎么实现的？", coach.Concept, "one trade-off", "one trade-off"},
		{"线上 CPU 飙高怎么排查？", coach.Concept, "find the root cause", "find the root cause"},
		{"What are the pros and cons of microservices?", coach.Concept, "two or three advantages", "two or three pros"},
		{"How would you design a rate limiter?", coach.Design, "the hard part", "the hard part"},
		{"设计一个短链系统，你会怎么做？", coach.Design, "the hard part", "the hard part"},
		{"How would you detect a cycle in a linked list?", coach.Coding, "edge cases", "edge cases"},
		{"Can you hear me okay?", coach.Smalltalk, "one short, natural", "one short natural line"},
		{"你那边能听清楚吗？", coach.Smalltalk, "one short, natural", "one short natural line"},
		{"Why did you choose Kafka for that pipeline?", coach.Project, "from the resume", "from the resume"},
		{"What are your salary expectations?", coach.Logistics, "clarifying question", "clarifying question"},
	}
	for _, tt := range tests {
		lang := questionLang(tt.question, profile.Lang)
		typ := coach.Classify(tt.question, lang)
		if typ != tt.typ {
			t.Errorf("%q is %s, want %s", tt.question, typ, tt.typ)
			continue
		}
		for _, c := range []struct {
			level Level
			model string
			want  string
		}{{L1, modelA, tt.full}, {L2, modelLocal, tt.short}} {
			var started bool
			e.Answer(t.Context(), Request{ID: "q", Question: tt.question, Type: typ, Profile: profile, Level: c.level},
				func(ev Event) { started = started || ev.Kind == EventStart })
			sys := rec.last(c.model)
			if !started || !strings.Contains(sys, c.want) {
				t.Errorf("%s %q at %s: answered %v, system prompt lacks %q:\n%s", typ, tt.question, c.level, started, c.want, sys)
			}
			wantLang := map[string]string{"zh": "Answer in Chinese.", "en": "Answer in English."}[lang]
			if !strings.Contains(sys, wantLang) {
				t.Errorf("%q at %s: system prompt lacks %q", tt.question, c.level, wantLang)
			}
			if typ != coach.Behavioural && strings.Contains(sys, "STAR") {
				t.Errorf("%s %q at %s: a STAR prompt:\n%s", typ, tt.question, c.level, sys)
			}
			if !strings.Contains(sys, "Acme Pay") {
				t.Errorf("%q at %s: the resume is missing", tt.question, c.level)
			}
		}
	}
}
