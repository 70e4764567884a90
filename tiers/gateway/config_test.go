package gateway

import (
	"strings"
	"testing"

	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

func gwEntry(name, url, model string) Endpoint {
	return Endpoint{Endpoint: upstream.Endpoint{Name: name, BaseURL: url, Model: model}}
}

func TestGatewayConfigValidate(t *testing.T) {
	const u1, u2 = "http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"
	valid := func() Config {
		return Config{
			Endpoints: []Endpoint{gwEntry("openai", u1, "")},
			Chains: map[string][]Endpoint{
				"gpt-4o": {{Endpoint: upstream.Endpoint{Name: "openai", Model: "gpt-4o"}}, gwEntry("local", u2, "qwen")},
				"*":      {{Endpoint: upstream.Endpoint{Name: "openai", Model: "{model}"}}},
			},
			Fallbacks: map[string][]string{"gpt-4o": {"gpt-4o-mini"}},
		}
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // every part must be in the error
	}{
		{"unknown endpoint", func(c *Config) {
			c.Chains["gpt-4o"][0].Name = "opneai"
		}, `gateway.chains.gpt-4o[0].name: unknown endpoint "opneai"`},
		{"entry without base_url or name", func(c *Config) {
			c.Chains["gpt-4o"] = append(c.Chains["gpt-4o"], Endpoint{Endpoint: upstream.Endpoint{Model: "m"}})
		}, "gateway.chains.gpt-4o[2].base_url: must be set"},
		{"bad base_url", func(c *Config) {
			c.Chains["gpt-4o"][1].BaseURL = "127.0.0.1:8002"
		}, "gateway.chains.gpt-4o[1].base_url: must be an http(s) URL"},
		{"no model", func(c *Config) {
			c.Chains["gpt-4o"][1].Model = ""
		}, "gateway.chains.gpt-4o[1].model: must not be empty"},
		{"empty chain", func(c *Config) {
			c.Chains["empty"] = nil
		}, "gateway.chains.empty: must list at least one endpoint"},
		{"one name, two endpoints", func(c *Config) {
			c.Chains["other"] = []Endpoint{gwEntry("local", u1, "qwen")}
		}, `gateway.chains.other[0].name: endpoint "local" is also defined by gateway.chains.gpt-4o[1]`},
		{"negative timeout", func(c *Config) {
			c.Chains["gpt-4o"][1].TimeoutMS = -1
		}, "gateway.chains.gpt-4o[1].timeout_ms: must not be negative"},
		{"negative max_attempts", func(c *Config) { c.MaxAttempts = -2 }, "gateway.max_attempts: must not be negative"},
		{"empty key", func(c *Config) { c.Keys = []string{"k", " "} }, "gateway.keys[1]: must not be empty"},
		{"fallback to nowhere", func(c *Config) {
			delete(c.Chains, "*")
		}, `gateway.fallbacks.gpt-4o[0]: no chain serves model "gpt-4o-mini"`},
		{"fallback cycle", func(c *Config) {
			c.Fallbacks["gpt-4o-mini"] = []string{"o3"}
			c.Fallbacks["o3"] = []string{"gpt-4o"}
		}, "gateway.fallbacks.gpt-4o: cycle: gpt-4o → gpt-4o-mini → o3 → gpt-4o"},
		{"fallback to itself", func(c *Config) {
			c.Fallbacks["gpt-4o"] = []string{"gpt-4o"}
		}, "cycle: gpt-4o → gpt-4o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, tc.want)
			}
			if _, gerr := New(c, nil, zerolog.Nop(), nil); gerr == nil {
				t.Fatal("New accepted an invalid config")
			}
		})
	}
}

func TestGatewayConfigResolvesNamedEndpointsAndDefaults(t *testing.T) {
	c := Config{
		TimeoutMS: 500,
		Endpoints: []Endpoint{{Endpoint: upstream.Endpoint{Name: "openai", BaseURL: "https://api.openai.com/v1", APIKey: "sk"},
			FirstTokenTimeoutMS: 700}},
		Chains: map[string][]Endpoint{"m": {
			{Endpoint: upstream.Endpoint{Name: "openai", Model: "gpt-4o", Prefill: true}, MaxAttempts: 3},
			{Endpoint: upstream.Endpoint{BaseURL: "http://127.0.0.1:8000/v1", Model: "qwen"}},
		}},
	}
	p, err := c.plan()
	if err != nil {
		t.Fatal(err)
	}
	got := p.chains["m"]
	want0 := Endpoint{Endpoint: upstream.Endpoint{Name: "openai", BaseURL: "https://api.openai.com/v1", APIKey: "sk", Model: "gpt-4o",
		Prefill: true, StallMS: defaultGatewayStallMS}, TimeoutMS: 500, FirstTokenTimeoutMS: 700, MaxAttempts: 3, attempts: 3}
	if got[0] != want0 {
		t.Fatalf("entry 0 %+v\nwant %+v", got[0], want0)
	}
	// An unnamed endpoint is named after its host.
	if got[1].Name != "127.0.0.1:8000" || got[1].FirstTokenTimeoutMS != defaultGatewayFirstTokenMS || got[1].attempts != defaultGatewayRetries+1 {
		t.Fatalf("entry 1 %+v", got[1])
	}
}
