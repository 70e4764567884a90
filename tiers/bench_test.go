package tiers

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// BenchmarkFallthrough measures the per-question decision when the health
// center has L1 and L2 down: both are skipped without a request and the
// template answers. This is the cost a session pays per question during a
// known outage.
func BenchmarkFallthrough(b *testing.B) {
	cfg := Config{
		L1: L1Config{Vendors: []upstream.Endpoint{
			{Name: "a", BaseURL: "http://127.0.0.1:9/v1", Model: "m"},
			{Name: "b", BaseURL: "http://127.0.0.1:9/v1", Model: "m"},
		}},
		L2: L2Config{BaseURL: "http://127.0.0.1:9/v1", Model: "m"},
	}
	h := health.New(health.Config{}, healthProbes(cfg)[:3], zerolog.Nop(), nil) // no templates probe: L3 is not judged
	for range 3 {
		h.ReportResult(L1, "a", upstream.ClassServer)
		h.ReportResult(L1, "b", upstream.ClassServer)
	}
	for range 5 {
		h.ReportResult(L2, "local", upstream.ClassTimeout)
	}
	if h.Supported() != L4 || !h.Down(L1) || !h.Down(L2) {
		b.Fatalf("setup: L1 down %v, L2 down %v", h.Down(L1), h.Down(L2))
	}
	e := NewEngine(cfg, h, &fakeTemplates{}, zerolog.Nop(), nil)
	defer e.Close()
	req := Request{ID: "q", Question: "Tell me about a conflict.", Level: L1}
	var start Event
	emit := func(ev Event) {
		if ev.Kind == EventStart {
			start = ev
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if e.Answer(ctx, req, emit); start.Level != L3 {
			b.Fatalf("start %+v", start)
		}
	}
}

// BenchmarkAnswerL1 measures a whole short L1 answer over real HTTP and
// SSE against vendorsim with no token delay: the engine's own overhead
// per question (prompt, request, stream parsing, events).
func BenchmarkAnswerL1(b *testing.B) {
	sim := vendorsim.New(vendorsim.Options{TokenDelay: time.Nanosecond})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	defer sim.Close()
	sim.SetReply("m", "Situation, task, action and a measurable result in twelve short words.")
	cfg := Config{L1: L1Config{Vendors: []upstream.Endpoint{{Name: "a", BaseURL: srv.URL + "/v1", Model: "m"}}}}
	e := NewEngine(cfg, nil, nil, zerolog.Nop(), nil)
	defer e.Close()
	req := Request{ID: "q", Question: "Tell me about a conflict."}
	var start, end Event
	emit := func(ev Event) {
		switch ev.Kind {
		case EventStart:
			start = ev
		case EventEnd:
			end = ev
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if e.Answer(ctx, req, emit); start.Level != L1 || end.Reason != ReasonDone {
			b.Fatalf("start %+v, end %+v", start, end)
		}
	}
}
