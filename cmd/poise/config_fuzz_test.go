package main

import (
	"bytes"
	"math"
	"net"
	"net/http"
	"os"
	"path"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/poise-dev/poise/tiers/gateway"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/rs/zerolog"
	"go.yaml.in/yaml/v3"
)

// fuzzEnv is the environment of the config fuzz targets.
func fuzzEnv(k string) string {
	switch k {
	case "OPENAI_API_KEY":
		return "sk-fuzz"
	case "PORT":
		return "8080"
	}
	return ""
}

// FuzzConfig parses arbitrary bytes as the configuration file. Properties:
// no input panics the loader; every refusal names a line of the document
// (and is readable text); an accepted config validates again, can be
// wired (its addr listens, its origin patterns compile, its numbers are
// finite, the L3 threshold is one the template store takes, the gateway
// builds beside the engine's backends) and survives a round trip through
// YAML unchanged.
func FuzzConfig(f *testing.F) {
	for _, seed := range configSeeds(f) {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := parseConfig(raw, fuzzEnv)
		if err != nil {
			checkConfigError(t, raw, err)
			return
		}
		checkWirable(t, c)
		checkRoundTrip(t, c)
	})
}

// configSeeds are the documents of config_test.go and the full example of
// docs/config.md.
func configSeeds(f *testing.F) []string {
	f.Helper()
	seeds := []string{
		"addr: 127.0.0.1:1\nsla_mss: 5\n",
		"l1:\n  mode: hedge\n  vendors:\n    - name: a\n      base_url: http://x/v1\n      modle: m\n",
		"sla_ms: fast\n", "l1:\n  mode: sometimes\n", "asr:\n  silence_ms: -5\n",
		"limits:\n  questions_per_minute: -1\n", "addr: [\n", "", "---\n", "# only a comment\n",
		"sla_ms: 900\nl1:\n  vendors:\n    - {name: primary, base_url: \"http://127.0.0.1:1/v1\", api_key: \"${VENDOR_KEY}\", model: m}\nlimits:\n  sessions_per_subject: 5\n",
		"addr: 127.0.0.1:${PORT}\n",
		"a: &x {b: *x}\n", "redis_url: redis://127.0.0.1:6379/0\nallowed_origins: [\"app.example.com:*\"]\n",
	}
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		f.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Keys\n\n```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		f.Fatal("docs/config.md: no yaml block under ## Keys")
	}
	return append(seeds, example)
}

var errLineRE = regexp.MustCompile(`line (\d+)`)

// checkConfigError: a refusal is readable and names a line that exists.
func checkConfigError(t *testing.T, raw []byte, err error) {
	t.Helper()
	msg := err.Error()
	if !utf8.ValidString(msg) {
		t.Fatalf("error is not UTF-8 text: %q", msg)
	}
	m := errLineRE.FindAllStringSubmatch(msg, -1)
	if m == nil {
		t.Fatalf("error names no line: %q\ninput: %q", msg, raw)
	}
	last := yamlLines(raw)
	for _, sm := range m {
		if n, _ := strconv.Atoi(sm[1]); n < 1 || n > last {
			t.Fatalf("error names line %d of a %d-line document: %q", n, last, msg)
		}
	}
}

// yamlLines counts the lines of doc as YAML does: in UTF-8, or UTF-16
// after a byte order mark; CR LF, CR, LF, NEL, LS and PS each end one.
func yamlLines(doc []byte) int {
	s := strings.ReplaceAll(string(fromUTF16(doc)), "\r\n", "\n")
	n := 1
	for _, r := range s {
		switch r {
		case '\r', '\n', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

// fromUTF16 decodes a document that starts with a UTF-16 byte order mark.
func fromUTF16(doc []byte) []byte {
	if len(doc) < 2 || !(doc[0] == 0xFE && doc[1] == 0xFF || doc[0] == 0xFF && doc[1] == 0xFE) {
		return doc
	}
	var b strings.Builder
	for i := 2; i+1 < len(doc); i += 2 {
		u := uint16(doc[i])<<8 | uint16(doc[i+1])
		if doc[0] == 0xFF {
			u = uint16(doc[i+1])<<8 | uint16(doc[i])
		}
		b.WriteRune(rune(u)) // surrogates count as one rune each; no line break is one
	}
	return []byte(b.String())
}

// checkWirable: what serve does with an accepted config cannot fail on
// the config itself.
func checkWirable(t *testing.T, c config) {
	t.Helper()
	if err := c.validate(nil); err != nil {
		t.Fatalf("accepted config does not validate: %v", err)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		t.Fatalf("accepted addr %q: %v", c.Addr, err)
	}
	for _, p := range c.AllowedOrigins {
		if _, err := path.Match(p, "example.com"); err != nil {
			t.Fatalf("accepted origin pattern %q: %v", p, err)
		}
	}
	if f, ok := nonFinite(reflect.ValueOf(c), "config"); ok {
		t.Fatalf("accepted a number that is not finite: %s", f)
	}
	// recall.NewStore's precondition; building a store per input is too
	// slow for a fuzz target.
	if th := c.L3.Threshold; th != 0 && !(th > 0 && th <= 1) {
		t.Fatalf("accepted l3.threshold %v", th)
	}
	nop := zerolog.Nop()
	if err := checkSharedNames(c.Engine, c.Gateway); err != nil {
		t.Fatalf("accepted a gateway endpoint named like an engine backend elsewhere: %v", err)
	}
	h := health.New(healthConfig(c.Engine), healthProbes(c, health.Probe{}, http.DefaultClient), nop, nil)
	gw, err := gateway.New(c.Gateway, gateway.HealthCircuits(h), nop, nil)
	if err != nil {
		t.Fatalf("accepted config whose gateway does not build: %v", err)
	}
	gw.Close()
}

// checkRoundTrip: the config, written as YAML and read again, is the same.
// A value that reads as ${VAR} once written is expanded on the second read
// by design, so such configs are skipped.
func checkRoundTrip(t *testing.T, c config) {
	t.Helper()
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatalf("accepted config does not marshal: %v", err)
	}
	if envRE.Match(out) {
		return
	}
	c2, err := parseConfig(out, fuzzEnv)
	if err != nil {
		t.Fatalf("accepted config, written out, is refused: %v\n%s", err, out)
	}
	out2, err := yaml.Marshal(c2)
	if err != nil {
		t.Fatalf("re-read config does not marshal: %v", err)
	}
	if !bytes.Equal(out, out2) {
		t.Fatalf("round trip changed the config:\n%s\n----\n%s", out, out2)
	}
}

// nonFinite finds a float field of v that is NaN or infinite and returns
// its Go path.
func nonFinite(v reflect.Value, at string) (string, bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return at, true
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return nonFinite(v.Elem(), at)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if p, ok := nonFinite(v.Field(i), at+"."+v.Type().Field(i).Name); ok {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p, ok := nonFinite(v.Index(i), at+"["+strconv.Itoa(i)+"]"); ok {
				return p, true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if p, ok := nonFinite(it.Value(), at+"["+it.Key().String()+"]"); ok {
				return p, true
			}
		}
	}
	return "", false
}

// envDoc references FUZZ_VALUE from string fields in every YAML context:
// plain, double and single quoted, a flow mapping and a folded block; and
// from a number field.
const envDoc = `auth:
  secret: ${FUZZ_VALUE}
ops:
  token: "${FUZZ_VALUE}"
node: '${FUZZ_VALUE}'
gateway:
  chains:
    "*":
      - {name: a, base_url: http://a.invalid/v1, api_key: ${FUZZ_VALUE}, model: m}
l1:
  vendors:
    - name: v
      base_url: http://v.invalid/v1
      model: m
      api_key: >-
        ${FUZZ_VALUE}
`

// FuzzConfigEnv: the value of an environment variable is taken as it is,
// in any YAML context — never read as YAML (a comment, a quote, an alias, a
// second key) — and a number field takes a number from one, or the error
// names the line.
func FuzzConfigEnv(f *testing.F) {
	for _, seed := range []string{"s3cret", "", "abc #not a comment", "*alias", "&anchor x", "'", `"`, `\n`,
		"null", "~", "true", "x\ny: 1", "key: value", "{a: b}", "[1]", "- item", "| block", "% directive",
		"@reserved", "`tick", " padded ", "${NESTED}", "\t", "密钥", "\uE000\uE0010\uE001"} {
		f.Add(seed, "900")
	}
	f.Add("k", "0x10")
	f.Add("k", "fast")
	f.Fuzz(func(t *testing.T, value, sla string) {
		if strings.ContainsRune(value, 0) || strings.ContainsRune(sla, 0) {
			return // no environment variable holds a NUL
		}
		env := func(k string) string {
			switch k {
			case "FUZZ_VALUE":
				return value
			case "FUZZ_SLA":
				return sla
			}
			return ""
		}
		c, err := parseConfig([]byte(envDoc), env)
		if err != nil {
			t.Fatalf("env value %q: %v", value, err)
		}
		for key, got := range map[string]string{"auth.secret": c.Auth.Secret, "ops.token": c.Ops.Token, "node": c.Node,
			"gateway api_key": c.Gateway.Chains["*"][0].APIKey, "l1 api_key": c.Engine.L1.Vendors[0].APIKey} {
			if got != value {
				t.Fatalf("%s = %q, want the env value %q", key, got, value)
			}
		}
		doc := []byte("health:\n  interval_ms: 1000\nsla_ms: ${FUZZ_SLA}\n")
		c, err = parseConfig(doc, env)
		if err != nil {
			checkConfigError(t, doc, err)
			if !strings.Contains(err.Error(), "line 3") {
				t.Fatalf("sla_ms error names another line: %v", err)
			}
			return
		}
		var want int
		if err := yaml.Unmarshal([]byte("n: "+sla), &struct {
			N *int `yaml:"n"`
		}{&want}); err != nil {
			t.Fatalf("sla_ms %q accepted, but YAML reads no number from it", sla)
		}
		if c.Engine.SLAms != want {
			t.Fatalf("sla_ms %q read as %d, want %d", sla, c.Engine.SLAms, want)
		}
	})
}

// TestParseConfigUTF16: a config saved as UTF-16 (with a byte order mark,
// as Windows editors do) reads like its UTF-8 text, ${VAR} included.
func TestParseConfigUTF16(t *testing.T) {
	t.Parallel()
	text := "auth:\n  secret: ${FUZZ_VALUE}\nnode: 节点\n"
	for _, bigEndian := range []bool{false, true} {
		doc := []byte{0xFF, 0xFE}
		if bigEndian {
			doc = []byte{0xFE, 0xFF}
		}
		for _, r := range text {
			hi, lo := byte(r>>8), byte(r)
			if bigEndian {
				doc = append(doc, hi, lo)
			} else {
				doc = append(doc, lo, hi)
			}
		}
		c, err := parseConfig(doc, func(k string) string { return map[string]string{"FUZZ_VALUE": "s #1"}[k] })
		if err != nil {
			t.Fatalf("big endian %v: %v", bigEndian, err)
		}
		if c.Auth.Secret != "s #1" || c.Node != "节点" {
			t.Fatalf("big endian %v: secret %q, node %q", bigEndian, c.Auth.Secret, c.Node)
		}
	}
}
