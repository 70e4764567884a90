package gateway

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/health/healthtest"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/poise-dev/poise/web/access"
	"github.com/rs/zerolog"
)

// TestGatewayWrongKeysAreThrottled: through the real HTTP endpoint, an
// address that sent Limit wrong keys gets 429 with Retry-After for the
// rest of its window, for a right key too; another address with the right
// key is served meanwhile; when the window ends the first is served
// again. The failures are logged as a rate, and no key is logged.
func TestGatewayWrongKeysAreThrottled(t *testing.T) {
	clock := healthtest.NewClock()
	logs := &syncBuffer{}
	log := zerolog.New(logs)
	failures := newFailures(log)
	failures.Now = clock.Now
	cfg := Config{Keys: []string{clientKey}, Chains: map[string][]Endpoint{gwModel: {{Endpoint: upstream.Endpoint{
		Name: "up", BaseURL: "http://vendor.invalid/v1", Model: "m"}}}}}
	gw, err := New(cfg, nil, log, nil, WithFailures(failures))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	defer func() { srv.Close(); gw.Close() }()

	const guesser, other = "203.0.113.5", "198.51.100.7" // named by X-Forwarded-For: the test's peer is loopback
	guess := func(i int) string { return "sk-guess-" + strconv.Itoa(1000+i) }
	for i := range access.DefaultFailures {
		if resp := modelsAs(t, srv.URL, guesser, guess(i)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: status %d, want 401", i, resp.StatusCode)
		}
	}
	clock.Advance(20 * time.Second)
	for _, key := range []string{guess(99), clientKey} {
		resp := modelsAs(t, srv.URL, guesser, key)
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("after %d wrong keys, key %q: status %d, want 429", access.DefaultFailures, key, resp.StatusCode)
		}
		if got := resp.Header.Get("Retry-After"); got != "40" {
			t.Errorf("Retry-After %q, want 40 (the rest of the minute)", got)
		}
	}
	if resp := modelsAs(t, srv.URL, other, clientKey); resp.StatusCode != http.StatusOK {
		t.Fatalf("another address with the right key: status %d, want 200", resp.StatusCode)
	}
	if resp := modelsAs(t, srv.URL, "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key from the test's own address: status %d, want 401", resp.StatusCode)
	}
	clock.Advance(40 * time.Second)
	if resp := modelsAs(t, srv.URL, guesser, clientKey); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the window, the right key: status %d, want 200", resp.StatusCode)
	}

	text := logs.String()
	if n := strings.Count(text, "wrong API keys"); n == 0 || n > 2 {
		t.Errorf("%d log lines of wrong keys for %d failures, want a rate (1 or 2): %s", n, access.DefaultFailures, text)
	}
	if strings.Contains(text, "sk-guess") || strings.Contains(text, clientKey) {
		t.Errorf("a key is in the log: %s", text)
	}
}

// modelsAs sends GET /v1/models with key (none when empty) as the client
// at addr (X-Forwarded-For; none when empty).
func modelsAs(t *testing.T, url, addr, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/v1/models", nil)
	if err != nil {
		t.Fatal(err)
	}
	if addr != "" {
		req.Header.Set("X-Forwarded-For", addr)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
