package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/session"
	"github.com/poise-dev/poise/web/access"
)

// TestOpsThrottlesWrongTokens: 300 wrong sign-ins and bearer tokens from
// one address get 401 until its limit, then 429 (even the right token,
// so a right guess looks like a wrong one); they are logged as a rate,
// not one line each, and never with the token.
func TestOpsThrottlesWrongTokens(t *testing.T) {
	t.Parallel()
	path, getenv := authConfigFile(t)
	done := make(chan struct{})
	var logs []string
	t.Cleanup(func() { // after the server's cleanup (last in, first out): the whole log is read
		<-done
		checkRateLog(t, logs)
	})
	sc, _ := serveLogs(t, getenv, "-addr", "127.0.0.1:0", "-config", path)
	var addr string
	for addr == "" && sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), `"addr":"`); ok {
			addr, _, _ = strings.Cut(rest, `"`)
		}
	}
	if addr == "" {
		close(done)
		t.Fatal("no address in the log")
	}
	go func() {
		defer close(done)
		for sc.Scan() {
			logs = append(logs, sc.Text())
		}
	}()

	base := "http://" + addr
	codes := map[int]int{}
	for i := range 300 {
		var resp *http.Response
		if i%2 == 0 {
			resp = opsRequest(t, "POST", base+"/ops/login", "", nil, `{"token":"guess-`+strconv.Itoa(i)+`"}`)
		} else {
			resp = opsRequest(t, "GET", base+"/ops/api/sessions", "guess-"+strconv.Itoa(i), nil, "")
		}
		codes[resp.StatusCode]++
		resp.Body.Close()
	}
	if codes[http.StatusUnauthorized] != access.DefaultFailures || codes[http.StatusTooManyRequests] != 300-access.DefaultFailures {
		t.Fatalf("status counts %v, want %d × 401 then 429", codes, access.DefaultFailures)
	}
	resp := opsRequest(t, "GET", base+"/ops/api/sessions", testOpsToken, nil, "")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the right token from a throttled address: %s, want 429 with Retry-After", resp.Status)
	}
}

// checkRateLog: the guesses of TestOpsThrottlesWrongTokens, all within a
// minute, make one log line, which holds no guessed token.
func checkRateLog(t *testing.T, logs []string) {
	n := 0
	for _, l := range logs {
		if strings.Contains(l, "guess-") {
			t.Errorf("a log line holds a guessed token: %s", l)
		}
		if strings.Contains(l, "wrong ops tokens") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d log lines about wrong tokens for 300 guesses within a minute, want 1 (a rate):\n%s", n, strings.Join(logs, "\n"))
	}
}

// TestShortSecretRefused: an auth.secret under 32 bytes stops serve and
// token issue with a message that says why and how to make one; a short
// ops.token starts with a warning.
func TestShortSecretRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "poise.yaml")
	if err := os.WriteFile(path, []byte("auth:\n  secret: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"serve", "-addr", "127.0.0.1:0", "-config", path}, noEnv, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "auth.secret is 1 bytes") || !strings.Contains(err.Error(), "openssl rand") {
		t.Fatalf("serve with a 1-byte secret: %v", err)
	}
	err = run(context.Background(), []string{"token", "issue", "-subject", "s", "-config", path}, noEnv, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "auth.secret is 1 bytes") {
		t.Fatalf("token issue with a 1-byte secret: %v", err)
	}

	short := filepath.Join(t.TempDir(), "poise.yaml")
	if err := os.WriteFile(short, []byte("ops:\n  token: a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, lines := startLogged(t, noEnv, "-addr", "127.0.0.1:0", "-config", short)
	if !strings.Contains(lines[2], `"level":"warn"`) || !strings.Contains(lines[2], "ops.token is short") || strings.Contains(lines[2], `"a"`) {
		t.Fatalf("third log line %q does not warn about the short ops.token (without it)", lines[2])
	}
}

// TestTokenIssueMaxTTL: token issue refuses a -ttl over auth.max_ttl_ms,
// and the server refuses a token that lives longer than its bound even
// when correctly signed.
func TestTokenIssueMaxTTL(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "poise.yaml")
	cfg := "auth:\n  secret: " + testAuthSecret + "\n  max_ttl_ms: 3600000\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "issue", "-subject", "s", "-ttl", "2h", "-config", path}, noEnv, &out, &out); err == nil ||
		!strings.Contains(err.Error(), "auth.max_ttl_ms") {
		t.Fatalf("token issue -ttl 2h with max_ttl_ms 1h: %v", err)
	}
	if err := run(context.Background(), []string{"token", "issue", "-subject", "s", "-ttl", "1h", "-config", path}, noEnv, &out, &out); err != nil {
		t.Fatalf("token issue -ttl 1h: %v", err)
	}
	addr := startServer(t, noEnv, "-config", path)
	long, err := session.IssueToken(testAuthSecret, "cand", 2*time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := dialAuth(t, addr)
	c.send(authHello(long))
	if m := c.expect("error", "unauthorized"); !strings.Contains(m["message"].(string), "max_ttl") {
		t.Fatalf("a 2h token on a 1h server: %v", m)
	}
	c = dialAuth(t, addr)
	c.send(authHello(strings.TrimSpace(firstLine(out.String()))))
	c.expect("welcome", "")
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
