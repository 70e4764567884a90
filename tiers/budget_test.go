package tiers

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/upstream"
)

// allowance is a Budget over a fixed number of tokens per backend
// (backends not named have no room). It records every reservation and
// settlement and fails the test on a settlement made twice.
type allowance struct {
	t        *testing.T
	mu       sync.Mutex
	left     map[string]int // backend → tokens not yet reserved or spent
	spent    map[string]int // backend → tokens settled
	reserved map[string]int // backend → reservations granted
	refused  map[string]int // backend → reservations refused
	open     int            // reservations not settled yet
}

func newAllowance(t *testing.T, left map[string]int) *allowance {
	return &allowance{t: t, left: left, spent: map[string]int{}, reserved: map[string]int{}, refused: map[string]int{}}
}

func (b *allowance) Reserve(_ context.Context, backend string, tokens int) (func(int), bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if tokens > b.left[backend] {
		b.refused[backend]++
		return nil, false
	}
	b.left[backend] -= tokens
	b.reserved[backend]++
	b.open++
	var once sync.Once
	settled := false
	return func(actual int) {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.left[backend] += tokens - actual
			b.spent[backend] += actual
			b.open--
			settled = true
		})
		if !settled {
			b.t.Errorf("a reservation on %s was settled twice", backend)
		}
	}, true
}

// snapshot returns copies of the counts, under the lock.
func (b *allowance) snapshot() (spent, reserved, refused map[string]int, open int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cp := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return cp(b.spent), cp(b.reserved), cp(b.refused), b.open
}

const budgetQuestion = "Tell me about a time you fixed a production outage."

// TestBudgetSkipsBackendsOverBudget: a backend whose budget fits one
// answer answers once; the next question skips it without a request (no
// health failure) and falls to the next source, then the next level.
func TestBudgetSkipsBackendsOverBudget(t *testing.T) {
	req := Request{Question: budgetQuestion}
	full, short := AttemptTokens(req, L1), AttemptTokens(req, L2)
	plenty := 100 * full
	cases := []struct {
		name       string
		left       map[string]int
		wantLevel  Level
		wantSource string
		wantSkip   []string
	}{
		{"primary over budget: the backup answers", map[string]int{"a": full + 1, "b": plenty, "local": plenty}, L1, "b", []string{"a"}},
		{"every vendor over budget: the local model answers", map[string]int{"a": full + 1, "b": 0, "local": plenty}, L2, "local", []string{"a", "b"}},
		{"every model over budget: templates", map[string]int{"a": full + 1, "b": 0, "local": short - 1}, L3, tplID, []string{"a", "b", "local"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			b := newAllowance(t, tc.left)
			req := Request{Question: budgetQuestion, Budget: b}
			first := r.ask(t, req)
			if first.out.Source != "a" || len(first.out.OverBudget) != 0 {
				t.Fatalf("first answer %+v, want vendor a within its budget", first.out)
			}
			second := r.ask(t, req)
			if second.out.Level != tc.wantLevel || second.out.Source != tc.wantSource || !slices.Equal(second.out.OverBudget, tc.wantSkip) {
				t.Fatalf("second answer %+v, want %s from %s with %v skipped", second.out, tc.wantLevel, tc.wantSource, tc.wantSkip)
			}
			if n := r.a.Sim.Counters(modelA).Requests; n != 1 {
				t.Fatalf("vendor a got %d requests, want 1: the second question must not reach it", n)
			}
			for _, name := range tc.wantSkip {
				if got := r.requests(t, name, "ok"); got > 1 {
					t.Fatalf("%s counted %v requests", name, got)
				}
				for _, class := range []upstream.Class{upstream.ClassServer, upstream.ClassTimeout, upstream.ClassUnavailable, upstream.ClassRateLimited, upstream.ClassCanceled} {
					if got := r.requests(t, name, string(class)); got != 0 {
						t.Fatalf("the skipped %s counted a %s request", name, class)
					}
				}
				if !r.health.BackendUp(name) {
					t.Fatalf("%s was marked down for being over budget", name)
				}
			}
			if _, _, _, open := b.snapshot(); open != 0 {
				t.Fatalf("%d reservations left unsettled", open)
			}
		})
	}
}

// TestBudgetSettlesReportedUsage: the engine asks for the usage chunk and
// settles what the backend reported, not its own estimate. The reported
// figure is read independently: the same prompt asked without streaming.
func TestBudgetSettlesReportedUsage(t *testing.T) {
	r := newRig(t, nil)
	b := newAllowance(t, map[string]int{"a": 100000})
	req := Request{Question: budgetQuestion, Budget: b}
	a := r.ask(t, req)
	if a.out.Source != "a" || a.end().Reason != ReasonDone {
		t.Fatalf("outcome %+v", a.out)
	}
	client := openai.NewClient(option.WithBaseURL(r.a.URL), option.WithAPIKey("sk-a"), option.WithMaxRetries(0))
	resp, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model: modelA, Messages: BuildPrompt(req, false), MaxTokens: openai.Int(maxTokensFull)})
	if err != nil {
		t.Fatal(err)
	}
	reported := int(resp.Usage.TotalTokens)
	estimated := promptTokens(BuildPrompt(req, false), "") + upstream.EstimateTokens(a.text())
	if reported == estimated {
		t.Fatalf("the reported usage (%d) equals the estimate: this test cannot tell them apart", reported)
	}
	spent, reserved, _, open := b.snapshot()
	if spent["a"] != reported || reserved["a"] != 1 || open != 0 {
		t.Fatalf("spent %v reserved %v open %d; want the reported %d (estimate %d) in one settled reservation", spent, reserved, open, reported, estimated)
	}
}

// TestBudgetCountsBothHedgedAttempts: when the backup is fired, both
// attempts reserve and settle: the winner what it reported, the cancelled
// loser at least its prompt.
func TestBudgetCountsBothHedgedAttempts(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.L1.HedgeAfterMS = 100
		c.L1.FirstTokenTimeoutMS = 5000
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{FirstTokenDelayMS: 3000})
	b := newAllowance(t, map[string]int{"a": 100000, "b": 100000})
	a := r.ask(t, Request{Question: budgetQuestion, Budget: b})
	if a.out.Source != "b" {
		t.Fatalf("outcome %+v, want the backup's answer", a.out)
	}
	spent, reserved, _, open := b.snapshot()
	prompt := promptTokens(BuildPrompt(Request{Question: budgetQuestion}, false), "")
	if reserved["a"] != 1 || reserved["b"] != 1 || open != 0 {
		t.Fatalf("reserved %v, %d open; want one settled reservation per attempt", reserved, open)
	}
	if spent["a"] < prompt || spent["b"] <= prompt {
		t.Fatalf("spent %v; want the loser's prompt (%d) and the winner's prompt and answer", spent, prompt)
	}
	if r.a.WaitCounters(t, modelA, func(c vendorsim.Counters) bool { return c.InFlight == 0 }).Cancelled != 1 {
		t.Fatal("the slow primary was not cancelled")
	}
}

// TestBudgetOnContinuations: a cut answer is continued only on a source
// the Budget allows; without room the answer ends cut.
func TestBudgetOnContinuations(t *testing.T) {
	r := newRig(t, func(c *Config) { c.L1.Vendors[1].Prefill = true })
	r.a.Sim.SetFault(modelA, vendorsim.Fault{CutAfter: 3})
	b := newAllowance(t, map[string]int{"a": 100000, "b": 10})
	a := r.ask(t, Request{Question: budgetQuestion, Budget: b})
	if a.end().Reason != ReasonCut || !slices.Contains(a.out.OverBudget, "b") {
		t.Fatalf("end %+v, outcome %+v; want a cut answer with b skipped", a.end(), a.out)
	}
	if n := r.b.Sim.Counters(modelB).Requests; n != 0 {
		t.Fatalf("vendor b got %d requests over its budget", n)
	}
}
