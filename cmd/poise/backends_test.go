package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/gateway"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
)

func gwChain(name, baseURL, model string) gateway.Config {
	return gateway.Config{Chains: map[string][]gateway.Endpoint{"m": {{Endpoint: upstream.Endpoint{Name: name, BaseURL: baseURL, Model: model}}}}}
}

func TestGatewayRejectsNameOfOtherEngineBackend(t *testing.T) {
	t.Parallel()
	engine := tiers.Config{L1: tiers.L1Config{Vendors: []upstream.Endpoint{{Name: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"}}}}
	if err := checkSharedNames(engine, gwChain("openai", "https://api.openai.com/v1/", "gpt-4o")); err != nil {
		t.Fatalf("sharing the vendor's endpoint: %v", err)
	}
	if err := checkSharedNames(engine, gwChain("openai", "http://127.0.0.1:9/v1", "gpt-4o")); err == nil || !strings.Contains(err.Error(), `"openai"`) {
		t.Fatalf("error %v", err)
	}
}

// TestHealthProbes: one probe per backend, the gateway's endpoints as
// backends of no level unless an engine backend has their name.
func TestHealthProbes(t *testing.T) {
	t.Parallel()
	c := config{Engine: tiers.Config{
		L1: tiers.L1Config{Vendors: []upstream.Endpoint{{Name: "openai", BaseURL: "https://api.openai.com/v1", Model: "m"}}},
		L2: tiers.L2Config{BaseURL: "http://127.0.0.1:8000/v1", Model: "m"},
	}}
	c.Gateway = gateway.Config{Chains: map[string][]gateway.Endpoint{"m": {
		{Endpoint: upstream.Endpoint{Name: "openai", BaseURL: "https://api.openai.com/v1", Model: "m"}},
		{Endpoint: upstream.Endpoint{Name: "backup", BaseURL: "https://backup.example/v1", Model: "m"}},
	}}}
	probes := healthProbes(c, health.Probe{Name: tiers.TemplatesBackend, Level: level.L3, Check: nopCheck}, http.DefaultClient)
	got := map[string]level.Level{}
	for _, p := range probes {
		if _, dup := got[p.Name]; dup {
			t.Fatalf("%s probed twice", p.Name)
		}
		got[p.Name] = p.Level
	}
	want := map[string]level.Level{"openai": level.L1, "local": level.L2, tiers.TemplatesBackend: level.L3, "backup": level.None}
	if len(got) != len(want) {
		t.Fatalf("probes %v, want %v", got, want)
	}
	for name, l := range want {
		if got[name] != l {
			t.Fatalf("probes %v, want %v", got, want)
		}
	}
}

func nopCheck(context.Context) error { return nil }
