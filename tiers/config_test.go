package tiers

import (
	"strings"
	"testing"

	"github.com/poise-dev/poise/tiers/upstream"
)

func TestConfigDefaults(t *testing.T) {
	c := Config{L1: L1Config{Vendors: []upstream.Endpoint{{Name: "a", BaseURL: "http://a/v1", Model: "m"}}}}.WithDefaults()
	checks := []struct {
		name      string
		got, want int
	}{
		{"sla_ms", c.SLAms, 1500},
		{"health.interval_ms", c.Health.IntervalMS, 30000},
		{"health.recover_after", c.Health.RecoverAfter, 3},
		{"l1.hedge_after_ms", c.L1.HedgeAfterMS, 800},
		{"l1.first_token_timeout_ms", c.L1.FirstTokenTimeoutMS, 1200},
		{"l1.down_after", c.L1.DownAfter, 3},
		{"l1.down_window_ms", c.L1.DownWindowMS, 60000},
		{"l1.vendors[0].stall_ms", c.L1.Vendors[0].StallMS, 2000},
		{"l2.timeout_ms", c.L2.TimeoutMS, 2000},
		{"l2.fail_after", c.L2.FailAfter, 5},
		{"l2.fail_window_ms", c.L2.FailWindowMS, 60000},
		{"l2.max_in_flight", c.L2.MaxInFlight, 50},
		{"l2.stall_ms", c.L2.StallMS, 2000},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %d, want %d", ch.name, ch.got, ch.want)
		}
	}
	if c.L1.Mode != ModeHedge || c.L2.Name != "local" {
		t.Errorf("mode %q, l2 name %q; want hedge, local", c.L1.Mode, c.L2.Name)
	}
	// A set value is kept.
	if got := (Config{SLAms: 50}).WithDefaults().SLAms; got != 50 {
		t.Errorf("sla_ms 50 became %d", got)
	}
}

func TestConfigValidate(t *testing.T) {
	good := upstream.Endpoint{Name: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"}
	tests := []struct {
		name    string
		cfg     Config
		wantKey string // "" means valid
	}{
		{"zero is valid", Config{}, ""},
		{"full", Config{L1: L1Config{Mode: ModeRace, Vendors: []upstream.Endpoint{good}},
			L2: L2Config{BaseURL: "http://127.0.0.1:8000/v1", Model: "qwen"}}, ""},
		{"bad mode", Config{L1: L1Config{Mode: "fastest"}}, "l1.mode"},
		{"negative sla", Config{SLAms: -1}, "sla_ms"},
		{"negative window", Config{L1: L1Config{DownWindowMS: -5}}, "l1.down_window_ms"},
		{"vendor without url", Config{L1: L1Config{Vendors: []upstream.Endpoint{good, {Name: "b", Model: "m"}}}}, "l1.vendors[1].base_url"},
		{"vendor without model", Config{L1: L1Config{Vendors: []upstream.Endpoint{{Name: "b", BaseURL: "http://b"}}}}, "l1.vendors[0].model"},
		{"duplicate names", Config{L1: L1Config{Vendors: []upstream.Endpoint{good, good}}}, "l1.vendors[1].name"},
		{"l2 named like a vendor", Config{L1: L1Config{Vendors: []upstream.Endpoint{good}},
			L2: L2Config{Name: "openai", BaseURL: "http://x", Model: "m"}}, "l2.name"},
		{"l2 without model", Config{L2: L2Config{BaseURL: "http://x"}}, "l2.model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantKey+":") {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.wantKey)
			}
		})
	}
}
