package main

import (
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/session"
)

func TestParseConfigErrorsNameKeyAndLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown top-level key", "addr: 127.0.0.1:1\nsla_mss: 5\n", []string{"line 2", `"sla_mss"`}},
		{"unknown nested key", "l1:\n  mode: hedge\n  vendors:\n    - name: a\n      base_url: http://x/v1\n      modle: m\n", []string{"line 6", "l1.vendors[0].modle"}},
		{"bad type", "sla_ms: fast\n", []string{"line 1", `"sla_ms"`}},
		{"bad value", "l1:\n  mode: sometimes\n", []string{"line 2", "l1.mode"}},
		{"bad asr value", "asr:\n  silence_ms: -5\n", []string{"line 2", "silence_ms"}},
		{"negative limit", "limits:\n  questions_per_minute: -1\n", []string{"line 1", "limits"}},
		{"not yaml", "addr: [\n", []string{"line"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tc.yaml), func(string) string { return "" })
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
}

func TestParseConfigDefaultsAndEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"VENDOR_KEY": "sk-test"}
	c, err := parseConfig([]byte(`
sla_ms: 900
l1:
  vendors:
    - {name: primary, base_url: "http://127.0.0.1:1/v1", api_key: "${VENDOR_KEY}", model: m}
limits:
  sessions_per_subject: 5
`), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Engine.SLAms != 900 || c.Engine.L1.Vendors[0].APIKey != "sk-test" {
		t.Fatalf("config = %+v", c.Engine)
	}
	if c.Addr != defaultAddr || c.Limits.QuestionsPerMinute != 20 || c.Limits.SessionsPerSubject != 5 {
		t.Fatalf("defaults lost: addr %q limits %+v", c.Addr, c.Limits)
	}
}

func TestDefaultConfigUsesOpenAIKey(t *testing.T) {
	t.Parallel()
	if c := defaultConfig(func(string) string { return "" }); len(c.Engine.L1.Vendors) != 0 {
		t.Fatalf("L1 configured without a key: %+v", c.Engine.L1.Vendors)
	}
	c := defaultConfig(func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-x"
		}
		return ""
	})
	if len(c.Engine.L1.Vendors) != 1 || c.Engine.L1.Vendors[0].Name != "openai" {
		t.Fatalf("vendors = %+v", c.Engine.L1.Vendors)
	}
}

// TestConfigSecurityKeys: the keys of docs/security.md reach the session
// config, and their defaults apply when left out.
func TestConfigSecurityKeys(t *testing.T) {
	t.Parallel()
	c, err := parseConfig([]byte("allowed_hosts: [poise.lan]\nauth:\n  max_ttl_ms: 3600000\ndead_peer_timeout_ms: 300\npre_hello_max: 10\npre_hello_per_address: 2\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	sc := c.sessionConfig()
	if sc.MaxTokenTTL != time.Hour || sc.DeadPeerTimeout != 300*time.Millisecond || sc.PreHelloMax != 10 || sc.PreHelloPerAddr != 2 ||
		len(c.AllowedHosts) != 1 || maxTokenTTL(c) != time.Hour {
		t.Fatalf("session config %+v, allowed_hosts %v", sc, c.AllowedHosts)
	}
	d, err := parseConfig(nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if maxTokenTTL(d) != 24*time.Hour {
		t.Fatalf("default max ttl %v, want 24h", maxTokenTTL(d))
	}
	if _, err := parseConfig([]byte("dead_peer_timeout_ms: -1\n"), noEnv); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("negative dead_peer_timeout_ms: %v", err)
	}
}

// TestConfigCoalesce: stream.coalesce_ms absent is the session's default,
// 0 turns coalescing off, a negative value is refused; the engine's
// streams are paced over the same window.
func TestConfigCoalesce(t *testing.T) {
	for _, tc := range []struct {
		yaml       string
		want, pace time.Duration
	}{
		{"", session.DefaultCoalesce, session.DefaultCoalesce},
		{"stream:\n  coalesce_ms: 0\n", -1, 0},
		{"stream:\n  coalesce_ms: 25\n", 25 * time.Millisecond, 25 * time.Millisecond},
	} {
		c, err := parseConfig([]byte(tc.yaml), noEnv)
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if got := c.sessionConfig().Coalesce; got != tc.want {
			t.Errorf("%q: Coalesce = %v, want %v", tc.yaml, got, tc.want)
		}
		if p := pacer(c); p.Every != tc.pace {
			t.Errorf("%q: pacer every %v, want %v", tc.yaml, p.Every, tc.pace)
		}
	}
	if _, err := parseConfig([]byte("stream:\n  coalesce_ms: -1\n"), noEnv); err == nil || !strings.Contains(err.Error(), "stream.coalesce_ms") {
		t.Fatalf("negative coalesce_ms: %v", err)
	}
}
