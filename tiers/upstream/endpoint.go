package upstream

// Endpoint is one OpenAI-compatible model server: an L1 vendor, the local
// model, or a gateway endpoint.
type Endpoint struct {
	Name    string `yaml:"name"` // unique; names the backend in logs, metrics and health
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key"` // never logged
	Model   string `yaml:"model"`
	// Prefill says the endpoint accepts the partial answer as a trailing
	// assistant message and continues it, so it can finish a stream cut on
	// another source (default false).
	Prefill bool `yaml:"prefill"`
	// LargerModel is the context_length fallback: a larger-window model of
	// the same level on this endpoint, tried once instead of Model (default
	// none: the next source is tried).
	LargerModel string `yaml:"larger_model"`
	// StallMS is the silence after the first token that counts as a stall
	// (default 2000 for the engine's backends; a gateway entry's default is
	// gateway.stall_ms, 10000).
	StallMS int `yaml:"stall_ms"`
	// Probe is how the health center checks the endpoint: ProbeCompletion
	// (the default: a one-token streamed completion, which fails when
	// completions fail) or ProbeList (GET /models: no tokens, but blind to
	// an outage that keeps the model list up).
	Probe string `yaml:"probe"`
}

// The values of Endpoint.Probe.
const (
	ProbeCompletion = "completion"
	ProbeList       = "list"
)
