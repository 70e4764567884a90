package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/poise-dev/poise/session"
)

const (
	testAuthSecret = "auth-secret-for-tests-0123456789"
	testOpsToken   = "ops-token-for-tests-0123456789abcdef"
)

// authConfigFile writes a config with auth.secret and ops.token taken from
// the environment, as a deployment would.
func authConfigFile(t *testing.T) (path string, getenv func(string) string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "poise.yaml")
	cfg := "auth:\n  secret: ${POISE_AUTH_SECRET}\nops:\n  token: ${POISE_OPS_TOKEN}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"POISE_AUTH_SECRET": testAuthSecret, "POISE_OPS_TOKEN": testOpsToken}
	return path, func(k string) string { return env[k] }
}

// startAuthServer runs poise with auth.secret and ops.token set.
func startAuthServer(t *testing.T, args ...string) string {
	t.Helper()
	path, getenv := authConfigFile(t)
	return startServer(t, getenv, append([]string{"-config", path}, args...)...)
}

func issue(t *testing.T, subject string, ttl time.Duration, at time.Time) string {
	t.Helper()
	tok, err := session.IssueToken(testAuthSecret, subject, ttl, at)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// authClient is a WebSocket client of the real server.
type authClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialAuth(t *testing.T, addr string) *authClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &authClient{t: t, ws: ws}
}

func (c *authClient) send(v any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := wsjson.Write(ctx, c.ws, v); err != nil {
		c.t.Fatal(err)
	}
}

func (c *authClient) read() (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var m map[string]any
	err := wsjson.Read(ctx, c.ws, &m)
	return m, err
}

// expect reads the next message and fails unless it has type typ (and, for
// an error, code).
func (c *authClient) expect(typ, code string) map[string]any {
	c.t.Helper()
	m, err := c.read()
	if err != nil || m["type"] != typ || (code != "" && m["code"] != code) {
		c.t.Fatalf("got %v (%v), want %s %s", m, err, typ, code)
	}
	return m
}

// expectClose reads until the connection ends and fails unless with code.
func (c *authClient) expectClose(code websocket.StatusCode) {
	c.t.Helper()
	_, err := c.read()
	for err == nil {
		_, err = c.read()
	}
	if got := websocket.CloseStatus(err); got != code {
		c.t.Fatalf("closed with %v (%v), want %d", got, err, code)
	}
}

func authHello(token string) map[string]any {
	h := map[string]any{"type": "hello", "v": 1, "profile": map[string]any{"lang": "en", "seniority": "mid"}}
	if token != "" {
		h["token"] = token
	}
	return h
}

func resumeAs(token string, welcome map[string]any, resumeToken string) map[string]any {
	h := authHello(token)
	h["resume"] = map[string]any{"session_id": welcome["session_id"], "token": resumeToken, "last_seq": 0}
	return h
}

// opsGet GETs an ops endpoint with the ops token and decodes its JSON.
func opsGet(t *testing.T, addr, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+testOpsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

type opsSession struct {
	ID        string `json:"id"`
	Connected bool   `json:"connected"`
}

func liveSessions(t *testing.T, addr string) []opsSession {
	t.Helper()
	var recs []opsSession
	opsGet(t, addr, "/ops/api/sessions", &recs)
	return recs
}

// TestSessionAuthThroughServer: with auth.secret, a hello without a token,
// with a forged one or an expired one gets `unauthorized` and a 1008 close
// and creates nothing; a resume token works only for its own session and
// its own subject.
func TestSessionAuthThroughServer(t *testing.T) {
	t.Parallel()
	addr := startAuthServer(t)
	now := time.Now()
	forged, err := session.IssueToken("not-the-secret", "cand-a", time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct{ name, token, why string }{
		{"no token", "", "required"},
		{"forged token", forged, "signature"},
		{"expired token", issue(t, "cand-a", 2*time.Hour, now.Add(-3*time.Hour)), "expired"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			c := dialAuth(t, addr)
			c.send(authHello(tc.token))
			m := c.expect("error", "unauthorized")
			if msg, _ := m["message"].(string); !strings.Contains(msg, tc.why) {
				t.Errorf("message %q does not say %q", msg, tc.why)
			}
			c.expectClose(websocket.StatusPolicyViolation)
			if recs := liveSessions(t, addr); len(recs) != 0 {
				t.Fatalf("sessions after a refused hello: %v", recs)
			}
		})
	}

	a := dialAuth(t, addr)
	a.send(authHello(issue(t, "cand-a", time.Hour, now)))
	wa := a.expect("welcome", "")
	b := dialAuth(t, addr)
	b.send(authHello(issue(t, "cand-b", time.Hour, now)))
	wb := b.expect("welcome", "")
	stolen := []struct {
		name  string
		hello map[string]any
	}{
		{"A's token resumes B's session", resumeAs(issue(t, "cand-a", time.Hour, now), wb, wb["resume_token"].(string))},
		{"A's session with B's resume token", resumeAs(issue(t, "cand-a", time.Hour, now), wa, wb["resume_token"].(string))},
		{"B's session with A's resume token", resumeAs(issue(t, "cand-b", time.Hour, now), wb, wa["resume_token"].(string))},
	}
	for _, tc := range stolen {
		t.Run(tc.name, func(t *testing.T) {
			c := dialAuth(t, addr)
			c.send(tc.hello)
			c.expect("error", "bad_resume_token")
		})
	}
	for i, c := range []*authClient{a, b} {
		c.send(map[string]any{"type": "ping", "t": i})
		c.expect("pong", "") // still attached: a resume elsewhere would have closed it with 4001
	}
	// The ops view is written behind the sessions (a queue, so that a slow
	// store never holds a session up): it shows A and B, both connected,
	// once the queue has caught up.
	waitUntil(t, "the ops view shows A's and B's sessions, both connected", func() bool {
		recs := liveSessions(t, addr)
		if len(recs) != 2 {
			return false
		}
		for _, r := range recs {
			if !r.Connected || (r.ID != wa["session_id"] && r.ID != wb["session_id"]) {
				return false
			}
		}
		return true
	})
}

// startLogged runs poise like startServer and also returns its first
// lines of log, which say who may open sessions and reach ops.
func startLogged(t *testing.T, getenv func(string) string, args ...string) (string, []string) {
	t.Helper()
	sc, drain := serveLogs(t, getenv, args...)
	var lines []string
	var addr string
	ready := false
	for len(lines) < 3 && sc.Scan() {
		lines = append(lines, sc.Text())
		var l struct{ Addr, Message string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Addr != "" && addr == "" {
			addr = l.Addr
		}
		ready = ready || l.Message == "ready"
	}
	if addr == "" {
		drain()
		t.Fatalf("no address in %q", lines)
	}
	if !ready {
		if err := awaitReady(sc.Scan, sc.Text); err != nil {
			drain()
			t.Fatalf("poise on %s: %v", addr, err)
		}
	}
	drain()
	return addr, lines
}

// TestServeRefusesPublicAddressWithoutSecret: without auth.secret, a
// non-loopback listen address is refused with a message that says what to
// do; -insecure starts and warns; a secret needs no flag. The first log
// lines say which sessions are accepted.
func TestServeRefusesPublicAddressWithoutSecret(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err := run(ctx, []string{"serve", "-addr", "0.0.0.0:0"}, noEnv, io.Discard, io.Discard)
	if err == nil {
		t.Fatal("serve on 0.0.0.0 without auth.secret started")
	}
	for _, want := range []string{"auth.secret", "-insecure", "0.0.0.0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}

	t.Run("insecure", func(t *testing.T) {
		addr, lines := startLogged(t, noEnv, "-addr", "0.0.0.0:0", "-insecure")
		if !strings.Contains(lines[1], `"level":"warn"`) || !strings.Contains(lines[1], "anonymous from any address") {
			t.Errorf("second log line %q does not warn about anonymous sessions", lines[1])
		}
		_, port, _ := net.SplitHostPort(addr)
		c := dialAuth(t, net.JoinHostPort("127.0.0.1", port))
		c.send(authHello(""))
		c.expect("welcome", "")
	})
	t.Run("loopback without secret", func(t *testing.T) {
		_, lines := startLogged(t, noEnv, "-addr", "127.0.0.1:0")
		for i, what := range []string{"auth.secret is empty", "ops.token is empty"} {
			if !strings.Contains(lines[1+i], what) || !strings.Contains(lines[1+i], `"level":"warn"`) ||
				!strings.Contains(lines[1+i], "one person's laptop") {
				t.Errorf("log line %q does not warn that %s and what local trust is for", lines[1+i], what)
			}
		}
	})
	t.Run("public with secret", func(t *testing.T) {
		path, getenv := authConfigFile(t)
		_, lines := startLogged(t, getenv, "-addr", "0.0.0.0:0", "-config", path)
		if !strings.Contains(lines[1], "need a token") || !strings.Contains(lines[2], "need ops.token") {
			t.Errorf("log lines %q do not say tokens are needed", lines[1:])
		}
	})
}

// TestOpsGuardWithoutToken: without ops.token, only clients on the
// server's host reach ops endpoints, and a proxied request is not one.
func TestOpsGuardWithoutToken(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ops")) })
	h := opsAuth{}.guard(ok, nil)
	cases := []struct {
		name, remote, forwardedFor string
		want                       int
	}{
		{"loopback", "127.0.0.1:1234", "", http.StatusOK},
		{"loopback v6", "[::1]:1234", "", http.StatusOK},
		{"public address", "203.0.113.5:1234", "", http.StatusForbidden},
		{"private address", "10.1.2.3:1234", "", http.StatusForbidden},
		{"loopback proxy", "127.0.0.1:1234", "203.0.113.5", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/ops/api/sessions", nil)
			req.Host = "127.0.0.1:8080"
			req.RemoteAddr = tc.remote
			if tc.forwardedFor != "" {
				req.Header.Set("X-Forwarded-For", tc.forwardedFor)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("code %d, want %d", rec.Code, tc.want)
			}
		})
	}
}

// TestOpsGuardWithToken: with ops.token, the bearer header or a valid
// sign-in cookie is needed from any address; the cookie expires, is
// bound to the token, and does not carry a cross-origin write.
func TestOpsGuardWithToken(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	auth := opsAuth{token: testOpsToken, now: func() time.Time { return now }}
	other := opsAuth{token: "another-token", now: auth.now}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ops")) })
	h := auth.guard(ok, nil)
	cases := []struct {
		name, method, authz, cookie, origin string
		want                                int
	}{
		{"nothing", http.MethodGet, "", "", "", http.StatusUnauthorized},
		{"bearer", http.MethodGet, "Bearer " + testOpsToken, "", "", http.StatusOK},
		{"wrong bearer", http.MethodGet, "Bearer " + testOpsToken + "x", "", "", http.StatusUnauthorized},
		{"token without Bearer", http.MethodGet, testOpsToken, "", "", http.StatusUnauthorized},
		{"cookie", http.MethodGet, "", auth.cookieValue(now.Add(time.Hour)), "", http.StatusOK},
		{"expired cookie", http.MethodGet, "", auth.cookieValue(now), "", http.StatusUnauthorized},
		{"cookie of another token", http.MethodGet, "", other.cookieValue(now.Add(time.Hour)), "", http.StatusUnauthorized},
		{"cookie with a forged expiry", http.MethodGet, "", tamperExpiry(auth.cookieValue(now.Add(-time.Hour))), "", http.StatusUnauthorized},
		{"the raw token as cookie", http.MethodGet, "", testOpsToken, "", http.StatusUnauthorized},
		{"cookie, same-origin POST", http.MethodPost, "", auth.cookieValue(now.Add(time.Hour)), "http://ops.example", http.StatusOK},
		{"cookie, cross-origin POST", http.MethodPost, "", auth.cookieValue(now.Add(time.Hour)), "https://evil.example", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://ops.example/ops/api/demo/faults", nil)
			req.RemoteAddr = "203.0.113.5:1234"
			if tc.authz != "" {
				req.Header.Set("Authorization", tc.authz)
			}
			if tc.cookie != "" {
				req.AddCookie(&http.Cookie{Name: opsCookieName, Value: tc.cookie})
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("code %d, want %d", rec.Code, tc.want)
			}
			if rec.Code == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

// tamperExpiry moves a cookie's expiry a day later, keeping its MAC.
func tamperExpiry(v string) string {
	exp, mac, _ := strings.Cut(v, ".")
	n := []byte(exp)
	n[0]++ // a later time, same length
	return string(n) + "." + mac
}

// opsRequest sends a request to the server with optional bearer and cookie.
func opsRequest(t *testing.T, method, url, bearer string, cookie *http.Cookie, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func bodyOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOpsAccessThroughServer: with ops.token, every operator endpoint (the
// ops API, the -demo fault switch, /metrics, the profiler) answers 401 without a
// credential and serves it with the bearer token; /ops shows the sign-in
// page, whose POST /ops/login sets a cookie that opens the ops page and
// API and that sign-out clears.
func TestOpsAccessThroughServer(t *testing.T) {
	t.Parallel()
	addr := startAuthServer(t, "-demo")
	base := "http://" + addr
	guarded := []struct{ method, path, body string }{
		{http.MethodGet, "/ops/api/sessions", ""},
		{http.MethodGet, "/ops/api/transitions", ""},
		{http.MethodGet, "/ops/api/backends", ""},
		{http.MethodGet, "/ops/api/demo", ""},
		{http.MethodPost, "/ops/api/demo/faults", `{"fault":"l1_down","on":false}`},
		{http.MethodGet, "/metrics", ""},
		{http.MethodGet, "/ops/debug/pprof/", ""},
		{http.MethodGet, "/ops/debug/pprof/heap", ""},
	}
	for _, g := range guarded {
		if resp := opsRequest(t, g.method, base+g.path, "", nil, g.body); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %s, want 401", g.method, g.path, resp.Status)
		}
		if resp := opsRequest(t, g.method, base+g.path, "wrong", nil, g.body); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s with a wrong token: %s, want 401", g.method, g.path, resp.Status)
		}
		if resp := opsRequest(t, g.method, base+g.path, testOpsToken, nil, g.body); resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s with the token: %s, want 200", g.method, g.path, resp.Status)
		}
	}
	if resp := opsRequest(t, http.MethodGet, base+"/ops/api/nope", "", nil, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown ops path without a token: %s, want 401", resp.Status)
	}

	for _, p := range []string{"/ops", "/ops/"} {
		page := bodyOf(t, opsRequest(t, http.MethodGet, base+p, "", nil, ""))
		if !strings.Contains(page, "/static/ops-login.js") || strings.Contains(page, "/static/ops.js") {
			t.Fatalf("GET %s without a token is not the sign-in page:\n%s", p, page)
		}
	}
	if page := bodyOf(t, opsRequest(t, http.MethodGet, base+"/ops", testOpsToken, nil, "")); !strings.Contains(page, "/static/ops.js") {
		t.Fatalf("GET /ops with the token is not the ops page:\n%s", page)
	}

	wrong := opsRequest(t, http.MethodPost, base+"/ops/login", "", nil, `{"token":"nope"}`)
	if wrong.StatusCode != http.StatusUnauthorized || len(wrong.Cookies()) != 0 {
		t.Fatalf("sign-in with a wrong token: %s, cookies %v", wrong.Status, wrong.Cookies())
	}
	login := opsRequest(t, http.MethodPost, base+"/ops/login", "", nil, `{"token":"`+testOpsToken+`"}`)
	if login.StatusCode != http.StatusNoContent || len(login.Cookies()) != 1 {
		t.Fatalf("sign-in: %s, cookies %v", login.Status, login.Cookies())
	}
	cookie := login.Cookies()[0]
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/ops" || cookie.Secure ||
		cookie.MaxAge <= 0 || strings.Contains(cookie.Value, testOpsToken) {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/ops, not Secure over plain HTTP, a lifetime, no token", cookie)
	}
	if page := bodyOf(t, opsRequest(t, http.MethodGet, base+"/ops", "", cookie, "")); !strings.Contains(page, "/static/ops.js") {
		t.Fatalf("GET /ops with the cookie is not the ops page:\n%s", page)
	}
	for _, g := range guarded[:5] { // the cookie is for /ops; /metrics keeps the bearer
		if resp := opsRequest(t, g.method, base+g.path, "", cookie, g.body); resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s with the cookie: %s, want 200", g.method, g.path, resp.Status)
		}
	}
	logout := opsRequest(t, http.MethodPost, base+"/ops/logout", "", cookie, "")
	if logout.StatusCode != http.StatusNoContent || len(logout.Cookies()) != 1 || logout.Cookies()[0].MaxAge >= 0 {
		t.Fatalf("sign-out: %s, cookies %v; want the cookie deleted", logout.Status, logout.Cookies())
	}

	req, _ := http.NewRequest(http.MethodPost, base+"/ops/login", strings.NewReader(`{"token":"`+testOpsToken+`"}`))
	req.Header.Set("X-Forwarded-Proto", "https")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cs := resp.Cookies(); len(cs) != 1 || !cs[0].Secure {
		t.Fatalf("sign-in through a TLS proxy: cookies %v, want one Secure cookie", cs)
	}
	req, _ = http.NewRequest(http.MethodPost, base+"/ops/login", strings.NewReader(`{"token":"`+testOpsToken+`"}`))
	req.Header.Set("Origin", "https://evil.example")
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin sign-in: %v %v, want 403", resp.Status, err)
	}
	resp.Body.Close()
}

// TestSecurityHeaders: every response carries the security headers; pages
// keep web's CSP, everything else gets one that allows nothing.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	addr := startAuthServer(t)
	base := "http://" + addr
	const pageCSP, otherCSP = "script-src 'self'", "default-src 'none'; frame-ancestors 'none'"
	cases := []struct {
		path, bearer, csp string
		code              int
	}{
		{"/", "", pageCSP, 200},
		{"/ops", "", pageCSP, 200}, // the sign-in page
		{"/ops", testOpsToken, pageCSP, 200},
		{"/static/conn.js", "", otherCSP, 200},
		{"/static/style.css", "", otherCSP, 200},
		{"/metrics", testOpsToken, otherCSP, 200},
		{"/metrics", "", otherCSP, 401},
		{"/ops/api/sessions", testOpsToken, otherCSP, 200},
		{"/healthz", "", otherCSP, 200},
		{"/readyz", "", otherCSP, 200},
		{"/coach/scripts.json", "", otherCSP, 200},
		{"/coach/types.json", "", otherCSP, 200},
		{"/v1/models", "", otherCSP, 404}, // no gateway.chains configured
		{"/nope", "", otherCSP, 404},
	}
	for _, tc := range cases {
		resp := opsRequest(t, http.MethodGet, base+tc.path, tc.bearer, nil, "")
		h := resp.Header
		if resp.StatusCode != tc.code {
			t.Errorf("GET %s: %s, want %d", tc.path, resp.Status, tc.code)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v lack nosniff, no-referrer or DENY", tc.path, h)
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, tc.csp) || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: CSP %q, want one with %q and frame-ancestors 'none'", tc.path, csp, tc.csp)
		}
	}
	// The WebSocket upgrade still works behind the headers.
	c := dialAuth(t, addr)
	c.send(authHello(issue(t, "cand-h", time.Hour, time.Now())))
	c.expect("welcome", "")
	// HEAD and conditional GETs keep them too.
	resp := opsRequest(t, http.MethodHead, base+"/static/conn.js", "", nil, "")
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("HEAD: headers %v", resp.Header)
	}
	if !strings.Contains(resp.Header.Get("Content-Type"), "javascript") {
		t.Errorf("HEAD /static/conn.js: Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

// TestBrowserAuth drives the pages in Chromium against a poise with
// auth.secret and ops.token: a copilot page with an expired token shows the
// refusal in its status line, with no popup and no reconnect; the ops page
// signs in with the token through its sign-in page.
func TestBrowserAuth(t *testing.T) {
	t.Parallel()
	env := newBrowserEnv(t, "")
	cfg := "auth:\n  secret: " + testAuthSecret + "\nops:\n  token: " + testOpsToken + "\n"
	s := env.startPoise(t, "", "-config", writeFile(t, "auth.yaml", cfg))
	t.Run("refused token", func(t *testing.T) { testRefusedToken(t, env, s) })
	t.Run("token in the fragment", func(t *testing.T) { testFragmentToken(t, env, s) })
	t.Run("ops sign-in", func(t *testing.T) { testOpsSignIn(t, env, s) })
}

// watchSocketsJS counts the page's WebSockets and their close events, and
// any alert, confirm or prompt (there must be none).
const watchSocketsJS = `(() => {
  window.__ws = { opened: 0, closed: 0, dialogs: 0 };
  const Real = window.WebSocket;
  window.WebSocket = class extends Real {
    constructor(...args) {
      super(...args);
      window.__ws.opened++;
      this.addEventListener('close', () => window.__ws.closed++);
    }
  };
  for (const f of ['alert', 'confirm', 'prompt']) window[f] = () => { window.__ws.dialogs++; };
  return true;
})()`

func testRefusedToken(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	expired := issue(t, "cand-browser", 2*time.Hour, time.Now().Add(-3*time.Hour))
	tb.do(chromedp.Navigate(s.url("/?" + query("token", expired, "reconnect_max_ms", "200").Encode())))
	tb.waitFor("the profile form", `document.body.dataset.view === 'profile' && document.body.dataset.scripts === 'loaded'`)
	js[bool](tb, watchSocketsJS)
	tb.do(
		chromedp.Click(chromedp.CSS(`input[name=lang][value=en]`)),
		chromedp.Click(chromedp.ID("btn-start")),
	)
	// conn.js schedules a retry from inside the close handler, which would
	// turn the state to 'waiting' before the close is counted here: once the
	// socket is closed and the state is still 'refused', nothing will retry.
	tb.waitFor("the refusal and the close", `window.__ws.closed === 1 && document.body.dataset.conn === 'refused'`)
	got := js[struct {
		Opened, Dialogs int
		Notice, Status  string
	}](tb, `({opened: window.__ws.opened, dialogs: window.__ws.dialogs,
  notice: document.body.dataset.notice, status: document.getElementById('status').textContent})`)
	if got.Opened != 1 || got.Dialogs != 0 || got.Notice != "unauthorized" || got.Status == "" {
		t.Fatalf("page after the refusal: %+v; want one socket, no dialog, the unauthorized notice in the status line", got)
	}
	tb.shot("refused-token")
	tb.requireClean()
}

// testFragmentToken: a valid token in the address's fragment (which no
// server or proxy log sees) opens a session.
func testFragmentToken(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	tok := issue(t, "cand-fragment", time.Hour, time.Now())
	tb.do(chromedp.Navigate(s.url("/#" + query("token", tok).Encode())))
	tb.waitFor("the profile form", `document.body.dataset.view === 'profile' && document.body.dataset.scripts === 'loaded'`)
	tb.do(
		chromedp.Click(chromedp.CSS(`input[name=lang][value=en]`)),
		chromedp.Click(chromedp.ID("btn-start")),
	)
	tb.waitFor("the session open", `document.body.dataset.conn === 'open'`)
	tb.requireClean()
}

func testOpsSignIn(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	tb.do(chromedp.Navigate(s.url("/ops")))
	tb.waitFor("the sign-in page", `document.body.dataset.view === 'ops-login' && document.activeElement?.id === 'token'`)
	tb.do(chromedp.SendKeys(chromedp.ID("token"), "not-the-token"), chromedp.Click(chromedp.ID("submit")))
	tb.waitFor("the wrong token refused", `document.body.dataset.login === 'refused' && document.getElementById('status').textContent !== ''`)
	tb.shot("ops-sign-in-refused")
	tb.do(chromedp.SetValue(chromedp.ID("token"), testOpsToken), chromedp.Click(chromedp.ID("submit")))
	tb.do(chromedp.WaitVisible(chromedp.ID("tiles"))) // the reload into the ops page
	tb.waitFor("the ops page to poll", `document.body.dataset.view === 'ops' && Number(document.body.dataset.polls || 0) >= 2 && document.body.dataset.api === 'ok'`)
	if c := js[string](tb, `document.cookie`); c != "" {
		t.Fatalf("document.cookie = %q: the sign-in cookie must be HttpOnly", c)
	}
	tb.requireClean("401") // the refused sign-in's response
}
