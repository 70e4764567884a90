package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// The partial outage of TestGatewayPartialOutageAtDefaults, in seconds of
// the bubble's clock: one request a second for runFor; the primary fails
// every completion from failFrom to healAt.
const (
	outageRunFor   = 30
	outageFailFrom = 2
	outageHealAt   = 12
	outageBackIn   = 10 // the primary answers again within this many seconds of healing
)

// outageResult is one request of the run.
type outageResult struct {
	at       time.Duration // since the run started
	text     string
	finish   string
	provider string
	err      error
}

// TestGatewayPartialOutageAtDefaults: the gateway with the default health
// settings and a "*" chain of a primary ({model}) and a fallback, one
// streamed request a second for 30 s from the real openai-go client, the
// primary failing every completion with 503 (its model list still
// answering) from 2 s to 12 s. Every request is answered completely; the
// primary gets fewer requests than were sent while it failed (its circuit
// opens, and while open it sees only half-open trials); it answers again
// within 10 s of healing. Inside a synctest bubble over vendorsim's MemNet,
// with the health center running, so 30 s of clock take a moment.
func TestGatewayPartialOutageAtDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := vendorsim.NewMemNet()
		primary := vendorsim.New(vendorsim.Options{TokenDelay: 20 * time.Millisecond})
		fallback := vendorsim.New(vendorsim.Options{TokenDelay: 20 * time.Millisecond})
		net.Serve("primary:80", primary)
		net.Serve("fallback:80", fallback)
		cfg := Config{Keys: []string{clientKey}, Chains: map[string][]Endpoint{AnyModelChain: {
			{Endpoint: upstream.Endpoint{Name: "primary", BaseURL: "http://primary:80/v1", Model: modelPlaceholder}},
			{Endpoint: upstream.Endpoint{Name: "fallback", BaseURL: "http://fallback:80/v1", Model: "fallback-model"}},
		}}}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewPedanticRegistry()
		// The probes cmd/poise gives these endpoints: the model list for
		// the primary (its model is the client's), a one-token completion
		// for the fallback.
		probes := []health.Probe{
			health.ListProbe("primary", level.None, "http://primary:80/v1", "", net.Client()),
			health.CompletionProbe("fallback", level.None, cfg.Chains[AnyModelChain][1].Endpoint,
				time.Duration(defaultGatewayFirstTokenMS)*time.Millisecond, net.Client()),
		}
		center := health.New(health.Config{}, probes, zerolog.Nop(), health.NewMetrics(reg))
		ctx, cancel := context.WithCancel(context.Background())
		var running sync.WaitGroup
		running.Go(func() { center.Run(ctx) })
		gw, err := New(cfg, HealthCircuits(center), zerolog.Nop(), NewMetrics(reg, upstream.NewMetrics(reg)), WithHTTPClient(net.Client()))
		if err != nil {
			t.Fatal(err)
		}
		net.Serve("gw:80", gw)
		client := openai.NewClient(option.WithBaseURL("http://gw:80/v1"), option.WithAPIKey(clientKey),
			option.WithMaxRetries(0), option.WithHTTPClient(net.Client()))

		results := make([]outageResult, outageRunFor)
		var requests sync.WaitGroup
		start := time.Now()
		var atFail, atHeal int64 // the primary's requests when it starts failing and when it heals
		for i := range outageRunFor {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second)))
			switch i {
			case outageFailFrom:
				atFail = primary.Counters(vendorsim.AnyModel).Requests
				primary.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: http.StatusServiceUnavailable})
			case outageHealAt:
				atHeal = primary.Counters(vendorsim.AnyModel).Requests
				primary.ClearFaults()
			}
			requests.Go(func() { results[i] = outageRequest(ctx, client, time.Since(start)) })
		}
		requests.Wait()
		cancel()
		running.Wait()
		gw.Close()
		primary.Close()
		fallback.Close()
		net.Close()

		backAt := time.Duration(-1)
		for i, r := range results {
			if r.err != nil || r.finish != "stop" || !strings.Contains(r.text, "[simulated ") {
				t.Errorf("request %d at %v: %q (finish %q), err %v; want a complete answer", i, r.at, r.text, r.finish, r.err)
			}
			if i >= outageHealAt && r.provider == "primary" && backAt < 0 {
				backAt = r.at
			}
		}
		sent := outageHealAt - outageFailFrom
		if got := atHeal - atFail; got >= int64(sent) {
			t.Errorf("the primary got %d requests while it failed, of %d sent; want fewer", got, sent)
		}
		heal := time.Duration(outageHealAt) * time.Second
		if backAt < 0 || backAt-heal > outageBackIn*time.Second {
			t.Errorf("the primary answered again at %v, healed at %v; want within %ds%s", backAt, heal, outageBackIn, outageLog(results))
		}
		t.Logf("the primary got %d of %d requests while failing and answered again %v after healing%s",
			atHeal-atFail, sent, backAt-heal, outageLog(results))
	})
}

// outageRequest sends one streamed request and reads it to its end.
func outageRequest(ctx context.Context, client openai.Client, at time.Duration) outageResult {
	ctx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	r := outageResult{at: at}
	var text strings.Builder
	st := client.Chat.Completions.NewStreaming(ctx, chatParams("gpt-4o-mini"))
	defer st.Close()
	for st.Next() {
		ch := st.Current()
		if f, ok := ch.JSON.ExtraFields["provider"]; ok {
			r.provider = strings.Trim(f.Raw(), `"`)
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				r.finish = c.FinishReason
			}
		}
	}
	r.text, r.err = text.String(), st.Err()
	return r
}

// outageLog lists who answered each request, for the test's log.
func outageLog(results []outageResult) string {
	var b strings.Builder
	for i, r := range results {
		if i%10 == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%2d:%-8s ", i, r.provider)
	}
	return b.String()
}
