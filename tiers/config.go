package tiers

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
)

// Defaults for Config; a zero field means the default (see each field).
const (
	defaultSLAms               = 1500  // first useful content per question
	defaultHealthIntervalMS    = 30000 // between probes of one backend
	defaultRecoverAfter        = 3     // consecutive passing probes to climb back
	defaultHedgeAfterMS        = 800   // primary's head start in hedge mode
	defaultFirstTokenTimeoutMS = 1200  // L1 vendor first-token timeout
	defaultDownAfter           = 3     // all-down events before L1 is down
	defaultDownWindowMS        = 60000 // window for those events
	defaultStallMS             = 2000  // silence after the first token that counts as a stall
	defaultL2Name              = "local"
	defaultVisionName          = "vision"
	defaultVisionFirstTokenMS  = 2000  // Tier V's first-token budget
	defaultL2TimeoutMS         = 2000  // L2 first-token timeout
	defaultL2FailAfter         = 5     // live L2 failures before L2 is down
	defaultL2FailWindowMS      = 60000 // window for those failures
	defaultL2MaxInFlight       = 50    // concurrent L2 requests per process
)

// Hedging modes of L1.
const (
	ModeHedge = "hedge" // primary first, backup after hedge_after_ms or on a fallbackable error
	ModeRace  = "race"  // every vendor at once
)

// Config is the engine's and the health center's configuration. The lead's
// file struct embeds its parts under the top-level keys sla_ms, health, l1
// and l2. Zero values mean the documented defaults; see withDefaults.
type Config struct {
	// SLAms is the budget for the first useful content of a question
	// (default 1500). The engine uses it to decide whether a Retry-After
	// fits; the session shows the coach when it passes.
	SLAms  int          `yaml:"sla_ms"`
	Health HealthConfig `yaml:"health"`
	L1     L1Config     `yaml:"l1"`
	L2     L2Config     `yaml:"l2"`

	// HTTPClient carries every request of the engine to L1 and L2. Not
	// from YAML. Default: upstream.NewHTTPClient(), the engine's own; tests
	// put an in-memory network's client here. Engine.Close drops its idle
	// connections either way.
	HTTPClient *http.Client `yaml:"-"`
}

// HealthConfig tunes the health center (key "health").
type HealthConfig struct {
	// IntervalMS is the time between two probes of a backend (default
	// 30000); up to a tenth of it is added as jitter.
	IntervalMS int `yaml:"interval_ms"`
	// RecoverAfter is how many consecutive passing probes a down level (or
	// backend) needs to be up again (default 3). A failure in between
	// restarts the count.
	RecoverAfter int `yaml:"recover_after"`
}

// L1Config configures the hedged vendors (key "l1").
type L1Config struct {
	// Mode is "hedge" (default) or "race".
	Mode string `yaml:"mode"`
	// HedgeAfterMS is how long the primary runs alone before the backup is
	// fired in hedge mode (default 800).
	HedgeAfterMS int `yaml:"hedge_after_ms"`
	// FirstTokenTimeoutMS bounds the wait for a vendor's first token
	// (default 1200).
	FirstTokenTimeoutMS int `yaml:"first_token_timeout_ms"`
	// DownAfter is how many "all vendors down" events within DownWindowMS
	// take L1 down (default 3).
	DownAfter int `yaml:"down_after"`
	// DownWindowMS is the window for DownAfter (default 60000).
	DownWindowMS int `yaml:"down_window_ms"`
	// Vendors are the L1 endpoints in priority order; none means L1 is not
	// configured.
	Vendors []upstream.Endpoint `yaml:"vendors"`
	// Vision is the model that reads screenshot questions (Tier V); an
	// empty base_url means none: screenshots are read by OCR (Tier O).
	Vision VisionConfig `yaml:"vision"`
}

// VisionConfig configures the vision model of screenshot questions (key
// "l1.vision"): an OpenAI-compatible chat endpoint that takes image_url
// content parts (gpt-4o-mini, for example).
type VisionConfig struct {
	upstream.Endpoint `yaml:",inline"` // name defaults to "vision"
	// FirstTokenMS bounds the wait for its first token (default 2000);
	// past it the OCR text, read meanwhile, is answered instead.
	FirstTokenMS int `yaml:"first_token_ms"`
}

// L2Config configures the local model (key "l2"). An empty BaseURL means L2
// is not configured.
type L2Config struct {
	// Name names the backend in logs, metrics and health (default "local").
	Name    string `yaml:"name"`
	BaseURL string `yaml:"base_url"`
	Model   string `yaml:"model"`
	APIKey  string `yaml:"api_key"` // usually empty for a local server
	// TimeoutMS is the first-token timeout of the local model (default
	// 2000); a timeout counts towards FailAfter.
	TimeoutMS int `yaml:"timeout_ms"`
	// FailAfter is how many live failures (timeouts first of all) within
	// FailWindowMS take L2 down (default 5).
	FailAfter int `yaml:"fail_after"`
	// FailWindowMS is the window for FailAfter (default 60000).
	FailWindowMS int `yaml:"fail_window_ms"`
	// MaxInFlight bounds concurrent requests to the local model (default
	// 50); when it is full a question falls through at once, it never
	// queues.
	MaxInFlight int `yaml:"max_in_flight"`
	// StallMS is the silence after the first token that counts as a stall
	// (default 2000).
	StallMS int `yaml:"stall_ms"`
	// Prefill says the server continues a trailing assistant message (vLLM,
	// llama.cpp), so it can finish an answer cut elsewhere (default false).
	Prefill bool `yaml:"prefill"`
	// LargerModel is used once when Model reports context_length (default
	// none).
	LargerModel string `yaml:"larger_model"`
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	c.SLAms = orDefault(c.SLAms, defaultSLAms)
	c.Health.IntervalMS = orDefault(c.Health.IntervalMS, defaultHealthIntervalMS)
	c.Health.RecoverAfter = orDefault(c.Health.RecoverAfter, defaultRecoverAfter)
	if c.L1.Mode == "" {
		c.L1.Mode = ModeHedge
	}
	c.L1.HedgeAfterMS = orDefault(c.L1.HedgeAfterMS, defaultHedgeAfterMS)
	c.L1.FirstTokenTimeoutMS = orDefault(c.L1.FirstTokenTimeoutMS, defaultFirstTokenTimeoutMS)
	c.L1.DownAfter = orDefault(c.L1.DownAfter, defaultDownAfter)
	c.L1.DownWindowMS = orDefault(c.L1.DownWindowMS, defaultDownWindowMS)
	vendors := make([]upstream.Endpoint, len(c.L1.Vendors))
	for i, v := range c.L1.Vendors {
		v.StallMS = orDefault(v.StallMS, defaultStallMS)
		vendors[i] = v
	}
	c.L1.Vendors = vendors
	if c.L1.Vision.Name == "" {
		c.L1.Vision.Name = defaultVisionName
	}
	c.L1.Vision.FirstTokenMS = orDefault(c.L1.Vision.FirstTokenMS, defaultVisionFirstTokenMS)
	c.L1.Vision.StallMS = orDefault(c.L1.Vision.StallMS, defaultStallMS)
	if c.L2.Name == "" {
		c.L2.Name = defaultL2Name
	}
	c.L2.TimeoutMS = orDefault(c.L2.TimeoutMS, defaultL2TimeoutMS)
	c.L2.FailAfter = orDefault(c.L2.FailAfter, defaultL2FailAfter)
	c.L2.FailWindowMS = orDefault(c.L2.FailWindowMS, defaultL2FailWindowMS)
	c.L2.MaxInFlight = orDefault(c.L2.MaxInFlight, defaultL2MaxInFlight)
	c.L2.StallMS = orDefault(c.L2.StallMS, defaultStallMS)
	return c
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Validate reports every bad key, each named by its YAML path
// ("tiers: config l1.vendors[1].base_url: ..."), joined with errors.Join. Zero values are valid (they mean the
// default); negative durations and counts are not.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("tiers: config %s: %s", key, fmt.Sprintf(format, args...)))
	}
	nonNegative := map[string]int{
		"sla_ms": c.SLAms, "health.interval_ms": c.Health.IntervalMS,
		"health.recover_after": c.Health.RecoverAfter, "l1.hedge_after_ms": c.L1.HedgeAfterMS,
		"l1.first_token_timeout_ms": c.L1.FirstTokenTimeoutMS, "l1.down_after": c.L1.DownAfter,
		"l1.down_window_ms": c.L1.DownWindowMS, "l2.timeout_ms": c.L2.TimeoutMS,
		"l2.fail_after": c.L2.FailAfter, "l2.fail_window_ms": c.L2.FailWindowMS,
		"l2.max_in_flight": c.L2.MaxInFlight, "l2.stall_ms": c.L2.StallMS,
		"l1.vision.first_token_ms": c.L1.Vision.FirstTokenMS,
	}
	for _, key := range slices.Sorted(maps.Keys(nonNegative)) {
		if nonNegative[key] < 0 {
			bad(key, "must not be negative, got %d", nonNegative[key])
		}
	}
	if m := c.L1.Mode; m != "" && m != ModeHedge && m != ModeRace {
		bad("l1.mode", "must be %q or %q, got %q", ModeHedge, ModeRace, m)
	}
	names := map[string]string{}
	for i, v := range c.L1.Vendors {
		key := fmt.Sprintf("l1.vendors[%d]", i)
		validateEndpoint(key, v.Name, v.BaseURL, v.Model, v.StallMS, bad)
		validateProbe(key, v.Probe, bad)
		if prev, dup := names[v.Name]; dup && v.Name != "" {
			bad(key+".name", "%q is also the name of %s", v.Name, prev)
		}
		names[v.Name] = key
	}
	if v := c.WithDefaults().L1.Vision; v.BaseURL != "" {
		validateEndpoint("l1.vision", v.Name, v.BaseURL, v.Model, v.StallMS, bad)
		if prev, dup := names[v.Name]; dup {
			bad("l1.vision.name", "%q is also the name of %s", v.Name, prev)
		}
		names[v.Name] = "l1.vision"
	}
	if c.L2.BaseURL != "" {
		l2 := c.WithDefaults().L2
		validateEndpoint("l2", l2.Name, l2.BaseURL, l2.Model, l2.StallMS, bad)
		if prev, dup := names[l2.Name]; dup {
			bad("l2.name", "%q is also the name of %s", l2.Name, prev)
		}
	}
	return errors.Join(errs...)
}

func validateProbe(key, probe string, bad func(string, string, ...any)) {
	if probe != "" && probe != upstream.ProbeCompletion && probe != upstream.ProbeList {
		bad(key+".probe", "must be %q or %q, got %q", upstream.ProbeCompletion, upstream.ProbeList, probe)
	}
}

func validateEndpoint(key, name, baseURL, model string, stallMS int, bad func(string, string, ...any)) {
	if strings.TrimSpace(name) == "" {
		bad(key+".name", "must not be empty")
	}
	if u, err := url.Parse(baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(key+".base_url", "must be an http(s) URL, got %q", baseURL)
	}
	if strings.TrimSpace(model) == "" {
		bad(key+".model", "must not be empty")
	}
	if stallMS < 0 {
		bad(key+".stall_ms", "must not be negative, got %d", stallMS)
	}
}

// ms converts a millisecond config value to a duration.
func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }

// endpoint returns L2 as an upstream.Endpoint so it shares the source code of L1.
func (c L2Config) Endpoint() upstream.Endpoint {
	return upstream.Endpoint{Name: c.Name, BaseURL: c.BaseURL, APIKey: c.APIKey, Model: c.Model,
		Prefill: c.Prefill, LargerModel: c.LargerModel, StallMS: c.StallMS}
}
