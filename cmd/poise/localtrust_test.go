package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// trustRequest sends method path to addr with the given Host (empty: the
// address) and headers, and returns the status and body.
func trustRequest(t *testing.T, method, addr, path, host, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLocalTrustRefusesRebindingAndCrossSite runs poise -demo with no
// credential at all (no auth.secret, ops.token or gateway.keys) and a
// gateway chain to a counting vendor, as a candidate's laptop would. A
// page of another site (Origin evil.example, Content-Type text/plain,
// Sec-Fetch-Site cross-site) cannot switch a fault or spend the gateway's
// key, and a DNS-rebound name (Host rebind.evil.example) gets 403 on every
// endpoint served on local trust, before anything is done: the fault stays
// off and the vendor sees no request. Same-origin requests, curl-like
// requests and a name in allowed_hosts still work.
func TestLocalTrustRefusesRebindingAndCrossSite(t *testing.T) {
	t.Parallel()
	sim := vendorsim.New(vendorsim.Options{TokenDelay: time.Millisecond})
	var upstream atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "from the test") { // not a health probe
			upstream.Add(1)
		}
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { sim.Close(); srv.Close() })
	cfg := fmt.Sprintf("allowed_hosts: [poise.test]\ngateway:\n  chains:\n    \"*\":\n      - {name: gw, base_url: %s/v1, api_key: sk-upstream, model: m}\n", srv.URL)
	path := filepath.Join(t.TempDir(), "poise.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, noEnv, "-demo", "-config", path)
	_, port, _ := strings.Cut(addr, ":")
	rebound := "rebind.evil.example:" + port
	fault := `{"fault":"l1_down","on":true}`
	chat := `{"model":"m","messages":[{"role":"user","content":"hi from the test"}]}`
	evil := map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"}

	refused := []struct {
		name, method, path, host, body string
		header                         map[string]string
	}{
		{"cross-site fault switch", "POST", "/ops/api/demo/faults", "", fault, evil},
		{"cross-site gateway", "POST", "/v1/chat/completions", "", chat, evil},
		{"cross-site by fetch metadata only", "POST", "/v1/chat/completions", "", chat, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"rebound sessions", "GET", "/ops/api/sessions", rebound, "", nil},
		{"rebound metrics", "GET", "/metrics", rebound, "", nil},
		{"rebound ops page", "GET", "/ops", rebound, "", nil},
		{"rebound fault switch", "POST", "/ops/api/demo/faults", rebound, fault, map[string]string{"Origin": "http://" + rebound}},
		{"rebound gateway", "POST", "/v1/chat/completions", rebound, chat, map[string]string{"Origin": "http://" + rebound}},
		{"rebound models", "GET", "/v1/models", rebound, "", nil},
	}
	for _, tc := range refused {
		if code, body := trustRequest(t, tc.method, addr, tc.path, tc.host, tc.body, tc.header); code != http.StatusForbidden {
			t.Errorf("%s: %d %q, want 403", tc.name, code, body)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{Host: rebound,
		HTTPHeader: http.Header{"Origin": {"http://" + rebound}}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("rebound /ws: %v %v, want 403", resp, err)
	}
	if _, state := trustRequest(t, "GET", addr, "/ops/api/demo", "", "", nil); strings.Contains(state, `"l1_down":true`) {
		t.Errorf("a refused request switched the fault: %s", state)
	}
	if n := upstream.Load(); n != 0 {
		t.Errorf("refused gateway requests reached the upstream %d times", n)
	}

	// What the operator's own browser and tools send still works.
	same := map[string]string{"Origin": "http://" + addr, "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"}
	if code, body := trustRequest(t, "POST", addr, "/ops/api/demo/faults", "", `{"fault":"l1_down","on":false}`, same); code != http.StatusOK {
		t.Errorf("same-origin fault switch: %d %q", code, body)
	}
	if code, body := trustRequest(t, "POST", addr, "/v1/chat/completions", "", chat, map[string]string{"Content-Type": "application/json"}); code != http.StatusOK {
		t.Errorf("curl-like gateway request: %d %q", code, body)
	}
	for _, host := range []string{"localhost:" + port, "poise.test:" + port} {
		if code, _ := trustRequest(t, "GET", addr, "/ops/api/sessions", host, "", nil); code != http.StatusOK {
			t.Errorf("Host %s: %d, want 200", host, code)
		}
	}
	c := dialAuth(t, addr)
	c.send(authHello(""))
	c.expect("welcome", "")
}
