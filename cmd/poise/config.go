package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"reflect"
	"regexp"
	"time"

	"github.com/poise-dev/poise/asr"
	"github.com/poise-dev/poise/session"
	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/gateway"
	"github.com/poise-dev/poise/tiers/ocr"
	"github.com/poise-dev/poise/tiers/recall"
	"github.com/poise-dev/poise/tiers/upstream"
	"go.yaml.in/yaml/v3"
)

// config is the YAML configuration file of docs/config.md. Every field's zero
// value means its default, stated beside it.
type config struct {
	Addr           string   `yaml:"addr"`            // default 127.0.0.1:8080
	AllowedOrigins []string `yaml:"allowed_origins"` // default none (same origin only)
	// AllowedHosts are extra Host names (path.Match patterns, no port) that
	// requests served without a credential may carry besides loopback
	// names and addresses (web/access.Trust). Default none.
	AllowedHosts []string `yaml:"allowed_hosts"`
	RedisURL     string   `yaml:"redis_url"` // default "": in-memory store
	Node         string   `yaml:"node"`      // default the host name: this node in the ops view
	Auth         struct {
		Secret   string `yaml:"secret"`     // default "": anonymous, loopback clients only; else at least minSecretBytes
		MaxTTLms int    `yaml:"max_ttl_ms"` // default 86400000 (24h): the longest token lifetime accepted
	} `yaml:"auth"`
	Ops struct {
		Token string `yaml:"token"` // default "": ops pages from loopback only
	} `yaml:"ops"`
	Limits             quota.Limits `yaml:"limits"`                // defaults in quota.DefaultLimits
	HeartbeatTimeoutMS int          `yaml:"heartbeat_timeout_ms"`  // default 60000
	ResumeWindowMS     int          `yaml:"resume_window_ms"`      // default 120000
	DeadPeerTimeoutMS  int          `yaml:"dead_peer_timeout_ms"`  // default 45000: no pong this long, the connection is lost
	PreHelloMax        int          `yaml:"pre_hello_max"`         // default 1024: sockets waiting for hello, oldest shed
	PreHelloPerAddress int          `yaml:"pre_hello_per_address"` // default 32: the same, per client address
	Stream             struct {
		// CoalesceMS gathers the answer deltas that follow a sent one
		// within this many ms into one answer_delta, and the engine reads
		// a model's stream at most once per this many ms after its first
		// content; the first delta of an answer is never delayed. Default
		// (absent) 50; 0 sends every delta alone, read as it comes.
		CoalesceMS *int `yaml:"coalesce_ms"`
	} `yaml:"stream"`
	Engine tiers.Config  `yaml:",inline"` // sla_ms, health, l1, l2
	L3     recall.Config `yaml:"l3"`      // threshold: absent, the calibrated verifier decides
	ASR    asr.Config    `yaml:"asr"`
	OCR    ocr.Config    `yaml:"ocr"` // screenshot questions' Tier O: tesseract on PATH

	// Gateway configures /v1/chat/completions: chains, keys, retry policy
	// (gateway.Config); without chains /v1 answers 404.
	Gateway gateway.Config `yaml:"gateway"`
}

const defaultAddr = "127.0.0.1:8080"

// defaultConfig is the embedded configuration: loopback, in-memory store,
// templates and coach; L1 uses OpenAI only when OPENAI_API_KEY is set.
func defaultConfig(getenv func(string) string) config {
	c := config{Addr: defaultAddr, Limits: quota.DefaultLimits()}
	if key := getenv("OPENAI_API_KEY"); key != "" {
		c.Engine.L1.Vendors = []upstream.Endpoint{{Name: "openai", BaseURL: "https://api.openai.com/v1", APIKey: key, Model: "gpt-4o-mini"}}
	}
	return c
}

var envRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// loadConfig reads path over the defaults. ${VAR} in a value is replaced
// by the environment variable VAR, taken as it is (markEnv). An unknown key or a bad value is an error that
// names the key and its line.
func loadConfig(path string, getenv func(string) string) (config, error) {
	c := defaultConfig(getenv)
	if path == "" {
		return c, c.validate(nil)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	c, err = parseConfig(raw, getenv)
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

func parseConfig(raw []byte, getenv func(string) string) (config, error) {
	c := defaultConfig(getenv)
	doc, env, err := markEnv(utf8Doc(raw), getenv)
	if err != nil {
		return c, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return c, locateSyntaxError(err, doc)
	}
	lines := keyLines{}
	if err := checkKeys(&root, reflect.TypeFor[config](), "", lines, env.expand(&root)); err != nil {
		return c, err
	}
	if len(bytes.TrimSpace(doc)) > 0 {
		if err := root.Decode(&c); err != nil {
			return c, describeDecodeError(err, lines)
		}
	}
	return c, c.validate(lines)
}

// validate checks values that decode but make no sense.
func (c config) validate(lines keyLines) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, locate(err, lines))
		}
	}
	if c.HeartbeatTimeoutMS < 0 {
		add(errors.New("heartbeat_timeout_ms: must not be negative"))
	}
	if c.ResumeWindowMS < 0 {
		add(errors.New("resume_window_ms: must not be negative"))
	}
	if c.Stream.CoalesceMS != nil && *c.Stream.CoalesceMS < 0 {
		add(errors.New("stream.coalesce_ms: must not be negative (0 sends every answer delta alone)"))
	}
	if c.DeadPeerTimeoutMS < 0 || c.PreHelloMax < 0 || c.PreHelloPerAddress < 0 || c.Auth.MaxTTLms < 0 {
		add(errors.New("dead_peer_timeout_ms, pre_hello_max, pre_hello_per_address, auth.max_ttl_ms: must not be negative"))
	}
	for i, p := range c.AllowedHosts {
		if _, err := path.Match(p, ""); err != nil {
			add(fmt.Errorf("allowed_hosts[%d]: %q: %w", i, p, err))
		}
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		add(fmt.Errorf("addr: %w", err))
	}
	for i, p := range c.AllowedOrigins {
		if _, err := path.Match(p, ""); err != nil {
			add(fmt.Errorf("allowed_origins[%d]: %q: %w", i, p, err))
		}
	}
	add(finiteNumbers(reflect.ValueOf(c), ""))
	if err := c.L3.Embeddings.Validate(); err != nil {
		add(err)
	}
	if th := c.L3.Threshold; th < 0 || th > 1 {
		add(fmt.Errorf("l3.threshold: must be within (0, 1] (absent means the calibrated per-language thresholds), got %g", th))
	}
	if c.Limits.QuestionsPerMinute < 0 || c.Limits.SessionsPerSubject < 0 || c.Limits.AudioSecondsPerHour < 0 || c.Limits.DailyTokensPerVendor < 0 {
		add(errors.New("limits: values must not be negative (0 means no limit)"))
	}
	add(c.Engine.Validate())
	add(c.Gateway.Validate())
	add(c.gatewayBuilds())
	add(c.ASR.Validate())
	add(c.OCR.Validate())
	if c.RedisURL != "" {
		_, err := redisOptions(c.RedisURL) // redis.go
		add(err)
	}
	return errors.Join(errs...)
}

// gatewayBuilds checks what only the gateway's constructor knows: its
// endpoints against the engine's backends of the same name.
func (c config) gatewayBuilds() error {
	if c.Gateway.Validate() != nil {
		return nil // reported already
	}
	return checkSharedNames(c.Engine, c.Gateway)
}

func (c config) sessionConfig() session.Config {
	return session.Config{
		AllowedOrigins:   c.AllowedOrigins,
		SLA:              time.Duration(c.Engine.SLAms) * time.Millisecond,
		HeartbeatTimeout: time.Duration(c.HeartbeatTimeoutMS) * time.Millisecond,
		ResumeWindow:     time.Duration(c.ResumeWindowMS) * time.Millisecond,
		Limits:           c.Limits,
		Secret:           c.Auth.Secret,
		MaxTokenTTL:      time.Duration(c.Auth.MaxTTLms) * time.Millisecond,
		DeadPeerTimeout:  time.Duration(c.DeadPeerTimeoutMS) * time.Millisecond,
		PreHelloMax:      c.PreHelloMax,
		PreHelloPerAddr:  c.PreHelloPerAddress,
		Coalesce:         c.coalesce(),
	}
}

// coalesce is stream.coalesce_ms as session.Config.Coalesce: absent is
// its default, 0 is off (negative there).
func (c config) coalesce() time.Duration {
	if w := c.window(); w > 0 {
		return w
	}
	return -1
}

// window is stream.coalesce_ms as a duration: absent is
// session.DefaultCoalesce, 0 is off. The session gathers answer deltas
// over it, and the engine reads a model stream at most once per window
// after its first content (upstream.Pacer).
func (c config) window() time.Duration {
	if c.Stream.CoalesceMS == nil {
		return session.DefaultCoalesce
	}
	return time.Duration(*c.Stream.CoalesceMS) * time.Millisecond
}
