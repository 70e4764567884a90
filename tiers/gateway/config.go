package gateway

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
)

// Defaults of Config; a zero field means the default.
const (
	defaultGatewayTimeoutMS    = 10000 // no response headers this long: fail over
	defaultGatewayFirstTokenMS = 10000 // no first token this long after the headers: fail over
	defaultGatewayStallMS      = 10000 // silence after the first token that counts as a stall
	defaultGatewayRetries      = 1     // retries of one endpoint per client request
	defaultRetryAfterMaxMS     = 2000  // longest Retry-After waited out on the same endpoint
	defaultBackoffMS           = 200   // base of the jittered backoff after a 429 without Retry-After
	maxRequestFallbacks        = 8     // model names a client may list in "fallbacks"
)

// AnyModelChain is the chain key that serves every model without a chain
// of its own.
const AnyModelChain = "*"

// modelPlaceholder in an endpoint's model stands for the requested model.
const modelPlaceholder = "{model}"

// Config configures the OpenAI-compatible gateway (key "gateway").
// No chains means the gateway is not configured: its routes answer 404.
type Config struct {
	// Keys are the API keys clients send as "Authorization: Bearer KEY".
	// Empty (the default): only loopback clients are served.
	Keys []string `yaml:"keys"`
	// Endpoints are named endpoints that chain entries may name alone
	// ({name: openai, model: gpt-4o}) instead of repeating base_url and
	// api_key (default none).
	Endpoints []Endpoint `yaml:"endpoints"`
	// Chains maps a model name, or "*" for any other name, to the
	// endpoints that serve it, in order. "{model}" in an entry's model
	// stands for the requested name.
	Chains map[string][]Endpoint `yaml:"chains"`
	// Fallbacks maps a model name to the models whose chains are tried, in
	// order, after its own chain is exhausted (default none). A request's
	// own "fallbacks" list comes after these. Cycles are rejected.
	Fallbacks map[string][]string `yaml:"fallbacks"`
	// Retries bounds the retries of one endpoint for one client request
	// (default 1): a 429, a 5xx or a reset before the first byte is retried
	// on the same endpoint, after a backoff, only when no other endpoint is
	// left to try; a stream cut after its first content is continued on
	// the same endpoint first while retries remain. An entry's retries
	// overrides it. Say 0 for none.
	Retries *int `yaml:"retries"`
	// MaxAttempts is the older spelling of Retries: requests to one
	// endpoint, so max_attempts: 2 is retries: 1 (default: not set). Set
	// one of the two.
	MaxAttempts int `yaml:"max_attempts"`
	// RetryAfterMaxMS is the longest Retry-After the gateway waits out
	// before retrying the same endpoint (default 2000). A longer one fails
	// over at once, and the endpoint's model gets no new request until the
	// Retry-After has passed.
	RetryAfterMaxMS int `yaml:"retry_after_max_ms"`
	// BackoffMS is the base of the wait before retrying a 429 without
	// Retry-After or a 500: the n-th retry waits a random time in
	// [base·2ⁿ⁻¹, base·2ⁿ) (default 200).
	BackoffMS int `yaml:"backoff_ms"`
	// TimeoutMS is the default of the entries' timeout_ms (default 10000).
	TimeoutMS int `yaml:"timeout_ms"`
	// FirstTokenTimeoutMS is the default of the entries'
	// first_token_timeout_ms (default 10000).
	FirstTokenTimeoutMS int `yaml:"first_token_timeout_ms"`
	// StallMS is the default of the entries' stall_ms: silence after the
	// first token that cuts a stream (default 10000).
	StallMS int `yaml:"stall_ms"`
	// MaxInflightMB bounds the memory of the chat requests the gateway
	// holds at once, counted as bodyCopies times each body (default 128:
	// two requests of the largest body, 16 MiB, at once): a request that
	// would pass it waits for room, up to its own deadline, or gets 503
	// after maxBodyWait.
	MaxInflightMB int `yaml:"max_inflight_mb"`
	// MaxResponseMB bounds the answer the gateway holds (default 16): the
	// whole of it for a non-streaming client, whose longer answer is a
	// 502 response_too_large; the text so far of a stream, kept for a
	// continuation after a cut, whose longer stream ends with that error
	// in-band (no [DONE]).
	MaxResponseMB int `yaml:"max_response_mb"`
}

// Endpoint is one entry of a chain, or a named endpoint of
// gateway.endpoints. An entry without base_url names an endpoint of
// gateway.endpoints and takes its base_url and api_key (and any field it
// leaves zero). Entries that share a name share the endpoint's health
// (its circuit), which is also shared with an L1 vendor or the local model
// of the same name.
type Endpoint struct {
	// Endpoint holds name, base_url, api_key, model, prefill, larger_model
	// and stall_ms. name defaults to base_url's host, and "{model}" in it
	// stands for the requested model; stall_ms defaults to
	// gateway.stall_ms.
	upstream.Endpoint `yaml:",inline"`
	// TimeoutMS bounds the wait for the response headers: an endpoint that
	// does not answer at all is left at once, never retried (default
	// gateway.timeout_ms).
	TimeoutMS int `yaml:"timeout_ms"`
	// FirstTokenTimeoutMS bounds the wait for the first token, counted
	// from the response headers; a slower endpoint is left for the next
	// one (default gateway.first_token_timeout_ms).
	FirstTokenTimeoutMS int `yaml:"first_token_timeout_ms"`
	// Retries overrides gateway.retries for this entry.
	Retries *int `yaml:"retries"`
	// MaxAttempts is the older spelling of retries + 1.
	MaxAttempts int `yaml:"max_attempts"`
	// OCRFallback lets this entry answer a request with images when the
	// entries before it failed: the images reach it as their OCR text
	// (response header X-Poise-Ocr-Fallback). Default false: a request
	// with images reaches it as it is.
	OCRFallback bool `yaml:"ocr_fallback"`
	// attempts is the resolved retries + 1: requests to this endpoint per
	// client request.
	attempts int
}

// Enabled reports whether any chain is configured.
func (c Config) Enabled() bool { return len(c.Chains) > 0 }

// routes is a validated Config with defaults applied: chain
// entries resolved against gateway.endpoints.
type routes struct {
	cfg    Config
	chains map[string][]Endpoint // every entry complete: name, base_url, model, timeouts
}

// Validate reports every bad key, each named by its YAML path
// ("tiers: config gateway.chains.gpt-4o[1].name: ..."), joined with
// errors.Join: unknown endpoints, bad URLs, two endpoints under one name,
// fallbacks that name no chain, fallback cycles, negative numbers.
func (c Config) Validate() error {
	_, err := c.plan()
	return err
}

// plan validates c and resolves its chains.
func (c Config) plan() (routes, error) {
	v := &validator{c: c, byName: map[string]Endpoint{}, nameKey: map[string]string{}}
	v.numbers()
	for i, k := range c.Keys {
		if strings.TrimSpace(k) == "" {
			v.bad(fmt.Sprintf("gateway.keys[%d]", i), "must not be empty")
		}
	}
	named := v.namedEndpoints()
	p := routes{cfg: c.withDefaults(), chains: map[string][]Endpoint{}}
	for _, model := range slices.Sorted(maps.Keys(c.Chains)) {
		key := "gateway.chains." + model
		if strings.TrimSpace(model) == "" {
			v.bad(key, "the model name must not be empty")
		}
		if len(c.Chains[model]) == 0 {
			v.bad(key, "must list at least one endpoint")
		}
		for i, e := range c.Chains[model] {
			if r, ok := v.entry(fmt.Sprintf("%s[%d]", key, i), e, named); ok {
				p.chains[model] = append(p.chains[model], p.cfg.entryDefaults(r))
			}
		}
	}
	v.fallbacks()
	return p, errors.Join(v.errs...)
}

// validator collects the errors of one Validate.
type validator struct {
	c       Config
	errs    []error
	byName  map[string]Endpoint // the first definition of each endpoint name
	nameKey map[string]string   // where it was defined
}

func (v *validator) bad(key, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("tiers: config %s: %s", key, fmt.Sprintf(format, args...)))
}

// numbers checks that no count or duration is negative.
func (v *validator) numbers() {
	check := func(key string, n int) {
		if n < 0 {
			v.bad(key, "must not be negative, got %d", n)
		}
	}
	check("gateway.max_attempts", v.c.MaxAttempts)
	if v.c.Retries != nil {
		check("gateway.retries", *v.c.Retries)
		if v.c.MaxAttempts != 0 {
			v.bad("gateway.max_attempts", "set retries or max_attempts (its older spelling: retries + 1), not both")
		}
	}
	check("gateway.stall_ms", v.c.StallMS)
	check("gateway.max_inflight_mb", v.c.MaxInflightMB)
	check("gateway.max_response_mb", v.c.MaxResponseMB)
	check("gateway.retry_after_max_ms", v.c.RetryAfterMaxMS)
	check("gateway.backoff_ms", v.c.BackoffMS)
	check("gateway.timeout_ms", v.c.TimeoutMS)
	check("gateway.first_token_timeout_ms", v.c.FirstTokenTimeoutMS)
}

// namedEndpoints checks gateway.endpoints and indexes them by name.
func (v *validator) namedEndpoints() map[string]Endpoint {
	named := map[string]Endpoint{}
	for i, e := range v.c.Endpoints {
		key := fmt.Sprintf("gateway.endpoints[%d]", i)
		if strings.TrimSpace(e.Name) == "" {
			v.bad(key+".name", "must not be empty")
			continue
		}
		if _, dup := named[e.Name]; dup {
			v.bad(key+".name", "%q is defined twice", e.Name)
			continue
		}
		v.checkURL(key, e.BaseURL)
		v.entryNumbers(key, e)
		named[e.Name] = e
		v.define(key, e)
	}
	return named
}

// entry checks one chain entry and returns it resolved against named.
func (v *validator) entry(key string, e Endpoint, named map[string]Endpoint) (Endpoint, bool) {
	v.entryNumbers(key, e)
	if e.BaseURL == "" {
		base, ok := named[e.Name]
		if !ok {
			if e.Name == "" {
				v.bad(key+".base_url", "must be set, or name must name an endpoint of gateway.endpoints")
			} else {
				v.bad(key+".name", "unknown endpoint %q: not in gateway.endpoints, and the entry has no base_url", e.Name)
			}
			return e, false
		}
		e = overlay(base, e)
	} else if !v.checkURL(key, e.BaseURL) {
		return e, false
	}
	if e.Name == "" {
		u, _ := url.Parse(e.BaseURL)
		e.Name = u.Host
	}
	if strings.TrimSpace(e.Model) == "" {
		v.bad(key+".model", "must not be empty (use %q for the requested name)", modelPlaceholder)
		return e, false
	}
	return e, v.define(key, e)
}

// define records e under its name; another definition of the name must
// agree on base_url and api_key, since the name is the endpoint's identity
// in health and metrics.
func (v *validator) define(key string, e Endpoint) bool {
	prev, ok := v.byName[e.Name]
	if !ok {
		v.byName[e.Name], v.nameKey[e.Name] = e, key
		return true
	}
	if prev.BaseURL != e.BaseURL || prev.APIKey != e.APIKey {
		v.bad(key+".name", "endpoint %q is also defined by %s with another base_url or api_key; give them different names", e.Name, v.nameKey[e.Name])
		return false
	}
	return true
}

func (v *validator) checkURL(key, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.bad(key+".base_url", "must be an http(s) URL, got %q", raw)
		return false
	}
	return true
}

func (v *validator) entryNumbers(key string, e Endpoint) {
	for name, n := range map[string]int{"stall_ms": e.StallMS, "timeout_ms": e.TimeoutMS,
		"first_token_timeout_ms": e.FirstTokenTimeoutMS, "max_attempts": e.MaxAttempts} {
		if n < 0 {
			v.bad(key+"."+name, "must not be negative, got %d", n)
		}
	}
	if e.Retries != nil {
		if *e.Retries < 0 {
			v.bad(key+".retries", "must not be negative, got %d", *e.Retries)
		}
		if e.MaxAttempts != 0 {
			v.bad(key+".max_attempts", "set retries or max_attempts (its older spelling: retries + 1), not both")
		}
	}
}

// fallbacks checks that every fallback names a model some chain serves,
// and that following fallbacks never comes back to a model.
func (v *validator) fallbacks() {
	for _, model := range slices.Sorted(maps.Keys(v.c.Fallbacks)) {
		key := "gateway.fallbacks." + model
		if !v.c.serves(model) {
			v.bad(key, "no chain serves model %q (and there is no %q chain)", model, AnyModelChain)
		}
		for i, f := range v.c.Fallbacks[model] {
			if !v.c.serves(f) {
				v.bad(fmt.Sprintf("%s[%d]", key, i), "no chain serves model %q (and there is no %q chain)", f, AnyModelChain)
			}
		}
	}
	if cycle := fallbackCycle(v.c.Fallbacks); cycle != nil {
		v.bad("gateway.fallbacks."+cycle[0], "cycle: %s", strings.Join(cycle, " → "))
	}
}

// serves reports whether a chain serves model.
func (c Config) serves(model string) bool {
	_, exact := c.Chains[model]
	_, wildcard := c.Chains[AnyModelChain]
	return exact || wildcard
}

// fallbackCycle returns a cycle of the fallback graph (first model
// repeated at the end), or nil. Models are visited in sorted order so the
// error names the same cycle every time.
func fallbackCycle(fb map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(m string) []string
	visit = func(m string) []string {
		switch state[m] {
		case onPath:
			i := slices.Index(path, m)
			return append(slices.Clone(path[i:]), m)
		case done:
			return nil
		}
		state[m] = onPath
		path = append(path, m)
		for _, next := range fb[m] {
			if c := visit(next); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[m] = done
		return nil
	}
	for _, m := range slices.Sorted(maps.Keys(fb)) {
		if c := visit(m); c != nil {
			return c
		}
	}
	return nil
}

// overlay returns base with the fields e sets.
func overlay(base, e Endpoint) Endpoint {
	out := base
	if e.Model != "" {
		out.Model = e.Model
	}
	if e.LargerModel != "" {
		out.LargerModel = e.LargerModel
	}
	out.Prefill = base.Prefill || e.Prefill
	if e.Retries != nil || e.MaxAttempts != 0 {
		out.Retries, out.MaxAttempts = e.Retries, e.MaxAttempts
	}
	for _, f := range []struct{ dst, src *int }{
		{&out.StallMS, &e.StallMS}, {&out.TimeoutMS, &e.TimeoutMS},
		{&out.FirstTokenTimeoutMS, &e.FirstTokenTimeoutMS},
	} {
		if *f.src != 0 {
			*f.dst = *f.src
		}
	}
	return out
}

// withDefaults returns c with every zero gateway-wide field set.
func (c Config) withDefaults() Config {
	retries := attemptsOf(c.Retries, c.MaxAttempts, defaultGatewayRetries+1) - 1
	c.Retries, c.MaxAttempts = &retries, 0
	c.RetryAfterMaxMS = orDefault(c.RetryAfterMaxMS, defaultRetryAfterMaxMS)
	c.BackoffMS = orDefault(c.BackoffMS, defaultBackoffMS)
	c.TimeoutMS = orDefault(c.TimeoutMS, defaultGatewayTimeoutMS)
	c.FirstTokenTimeoutMS = orDefault(c.FirstTokenTimeoutMS, defaultGatewayFirstTokenMS)
	c.StallMS = orDefault(c.StallMS, defaultGatewayStallMS)
	c.MaxInflightMB = orDefault(c.MaxInflightMB, defaultMaxInflightMB)
	c.MaxResponseMB = orDefault(c.MaxResponseMB, defaultMaxResponseMB)
	return c
}

// attemptsOf is the requests to one endpoint that retries or its older
// spelling max_attempts ask for, else def.
func attemptsOf(retries *int, maxAttempts, def int) int {
	switch {
	case retries != nil:
		return *retries + 1
	case maxAttempts > 0:
		return maxAttempts
	}
	return def
}

// entryDefaults fills e's zero per-entry fields from c (already
// defaulted).
func (c Config) entryDefaults(e Endpoint) Endpoint {
	e.StallMS = orDefault(e.StallMS, c.StallMS)
	e.TimeoutMS = orDefault(e.TimeoutMS, c.TimeoutMS)
	e.FirstTokenTimeoutMS = orDefault(e.FirstTokenTimeoutMS, c.FirstTokenTimeoutMS)
	e.attempts = attemptsOf(e.Retries, e.MaxAttempts, *c.Retries+1)
	return e
}

// chain returns the entries that serve model, and the chain's key: its
// own chain, else "*".
func (p routes) chain(model string) ([]Endpoint, string) {
	if ch, ok := p.chains[model]; ok {
		return ch, model
	}
	return p.chains[AnyModelChain], AnyModelChain
}

// Resolved returns every endpoint of c's chains, resolved against
// gateway.endpoints and defaulted, one per name, sorted by name: what the
// health center should probe (GET {base_url}/models) so that an open
// circuit closes again. It fails when c is not valid.
func (c Config) Resolved() ([]Endpoint, error) {
	p, err := c.plan()
	if err != nil {
		return nil, err
	}
	byName := map[string]Endpoint{}
	for _, chain := range p.chains {
		for _, e := range chain {
			byName[e.Name] = e
		}
	}
	out := make([]Endpoint, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// ms converts a millisecond config value to a duration.
func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
