package session

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/rs/zerolog"
)

const testSecret = "test-secret-0123456789"

// authNow is the injected clock of the auth tests.
var authNow = time.Unix(1_700_000_000, 0)

func authConfig() Config {
	return Config{Health: newFakeHealth(tiers.L3), Secret: testSecret, Now: func() time.Time { return authNow }}
}

// mint returns a token for subject, valid for an hour from authNow.
func mint(t testing.TB, subject string) string {
	t.Helper()
	tok, err := IssueToken(testSecret, subject, time.Hour, authNow)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func helloAs(token string) map[string]any {
	h := hello("en")
	if token != "" {
		h["token"] = token
	}
	return h
}

// startAs starts a session with a token for subject.
func (ts *testServer) startAs(t testing.TB, subject string) (*client, msg) {
	t.Helper()
	c := ts.dial(t)
	c.send(helloAs(mint(t, subject)))
	return c, c.readType("welcome")
}

// expectUnauthorized reads one `unauthorized` error whose message contains
// want, then the 1008 close.
func expectUnauthorized(t *testing.T, c *client, want string) {
	t.Helper()
	m := c.read()
	if m.str("type") != "error" || m.str("code") != codeUnauthorized || !strings.Contains(m.str("message"), want) {
		t.Fatalf("got %v, want error %s saying %q", m, codeUnauthorized, want)
	}
	expectClosed(t, c, websocket.StatusPolicyViolation)
}

// expectNoSessions fails if the hub or its store holds any session.
func expectNoSessions(t *testing.T, ts *testServer) {
	t.Helper()
	if n := ts.hub.Len(); n != 0 {
		t.Fatalf("hub has %d sessions, want 0", n)
	}
	recs, err := ts.hub.cfg.Store.Sessions(context.Background())
	if err != nil || len(recs) != 0 {
		t.Fatalf("store sessions = %v, %v; want none", recs, err)
	}
}

// TestHelloNeedsValidToken: with a secret, a hello without a valid token
// gets one `unauthorized` error saying why, the connection closes with
// 1008, and nothing is created (no session, no store record, and the
// subject's session count is untouched: with one session allowed per
// subject, a valid hello after an expired one still gets in).
func TestHelloNeedsValidToken(t *testing.T) {
	cfg := authConfig()
	cfg.Limits.SessionsPerSubject = 1
	ts := newTestServer(t, cfg)
	good := mint(t, "cand-1")
	body, mac, _ := strings.Cut(strings.TrimPrefix(good, tokenPrefix), ".")
	forged, _ := IssueToken("another-secret", "cand-1", time.Hour, authNow)
	expired, _ := IssueToken(testSecret, "cand-1", 2*time.Hour, authNow.Add(-3*time.Hour))
	other, _ := IssueToken(testSecret, "cand-2", time.Hour, authNow)
	_, otherMAC, _ := strings.Cut(strings.TrimPrefix(other, tokenPrefix), ".")
	forever := signed(fmt.Sprintf(`{"sub":"cand-1","exp":%d}`, int64(1)<<62))
	tooLong, _ := IssueToken(testSecret, "cand-1", DefaultMaxTTL+time.Minute, authNow)
	cases := []struct {
		name, token, want string
	}{
		{"exp 2^62", forever, ErrTokenTooLong.Error()},
		{"lifetime over max_ttl", tooLong, ErrTokenTooLong.Error()},
		{"non-canonical signature", respell(good), ErrTokenMalformed.Error()},
		{"missing", "", ErrTokenMissing.Error()},
		{"forged with another secret", forged, ErrTokenForged.Error()},
		{"payload of one, signature of another", tokenPrefix + body + "." + otherMAC, ErrTokenForged.Error()},
		{"malformed", "not-a-token", ErrTokenMalformed.Error()},
		{"malformed signature", tokenPrefix + body + ".!!", ErrTokenMalformed.Error()},
		{"wrong version", "v2." + body + "." + mac, ErrTokenMalformed.Error()},
		{"expired", expired, ErrTokenExpired.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ts.dial(t)
			c.send(helloAs(tc.token))
			expectUnauthorized(t, c, tc.want)
			expectNoSessions(t, ts)
		})
	}
	c, _ := ts.startAs(t, "cand-1")
	c.send(map[string]any{"type": "ping", "t": 1})
	c.readType("pong")
}

// TestResumeNeedsToken: a resume hello without a valid token is refused
// like any hello, and the session is not touched.
func TestResumeNeedsToken(t *testing.T) {
	ts := newTestServer(t, authConfig())
	owner, w := ts.startAs(t, "cand-1")
	c := ts.dial(t)
	c.send(resumeHello(w, 0))
	expectUnauthorized(t, c, ErrTokenMissing.Error())
	owner.send(map[string]any{"type": "ping", "t": 1})
	owner.readType("pong")
}

// TestResumeBoundToSession: a resume token works only for its own session
// and, with a secret, only for its own subject. Each refusal is
// bad_resume_token, and the sessions keep their connections.
func TestResumeBoundToSession(t *testing.T) {
	ts := newTestServer(t, authConfig())
	ca, wa := ts.startAs(t, "cand-a")
	cb, wb := ts.startAs(t, "cand-b")
	cases := []struct {
		name, token, id, resumeToken string
	}{
		{"A's token resumes B with B's resume token", mint(t, "cand-a"), wb.str("session_id"), wb.str("resume_token")},
		{"A's session with B's resume token", mint(t, "cand-a"), wa.str("session_id"), wb.str("resume_token")},
		{"B's session with A's resume token", mint(t, "cand-b"), wb.str("session_id"), wa.str("resume_token")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ts.dial(t)
			h := helloAs(tc.token)
			h["resume"] = map[string]any{"session_id": tc.id, "token": tc.resumeToken, "last_seq": 0}
			c.send(h)
			if m := c.read(); m.str("type") != "error" || m.str("code") != codeBadResumeToken {
				t.Fatalf("got %v, want error %s", m, codeBadResumeToken)
			}
		})
	}
	for i, c := range []*client{ca, cb} {
		c.send(map[string]any{"type": "ping", "t": i})
		c.readType("pong") // still attached: a stolen resume would have closed it with 4001
	}
	if n := ts.hub.Len(); n != 2 {
		t.Fatalf("hub has %d sessions, want 2", n)
	}
	// The owner, with its own token, resumes.
	c := ts.dial(t)
	h := helloAs(mint(t, "cand-b"))
	h["resume"] = map[string]any{"session_id": wb.str("session_id"), "token": wb.str("resume_token"), "last_seq": 0}
	c.send(h)
	if m := c.readType("welcome"); m["resumed"] != true || m.str("session_id") != wb.str("session_id") {
		t.Fatalf("owner's resume: %v", m)
	}
}

// TestResumeRemoteBoundToSubject: across nodes, the store checks the
// subject before it moves the session, and keeps only a hash of the
// resume token.
func TestResumeRemoteBoundToSubject(t *testing.T) {
	url := testRedisURL(t)
	rdb := redistest.Dial(t, url)
	a := newTestServer(t, sharedNode(t, authConfig(), url, "a"))
	b := newTestServer(t, sharedNode(t, authConfig(), url, "b"))
	ca, w := a.startAs(t, "cand-b")
	id, rtok := w.str("session_id"), w.str("resume_token")
	var saved map[string]string
	eventually(t, "a's resume header in Redis", func() bool {
		saved = rdb.HGetAll(t.Context(), "poise:resume:{"+id+"}").Val()
		return saved["subject"] == "cand-b"
	})
	for k, v := range saved {
		if strings.Contains(v, rtok) {
			t.Fatalf("Redis keeps the resume token in clear (field %s)", k)
		}
	}

	thief := b.dial(t)
	h := helloAs(mint(t, "cand-a"))
	h["resume"] = map[string]any{"session_id": id, "token": rtok, "last_seq": 0}
	thief.send(h)
	if m := thief.read(); m.str("type") != "error" || m.str("code") != codeBadResumeToken {
		t.Fatalf("got %v, want error %s", m, codeBadResumeToken)
	}
	if owns, err := a.hub.cfg.Resume.Owns(t.Context(), id); err != nil || !owns {
		t.Fatalf("a owns %s = %v, %v; the refused resume moved it", id, owns, err)
	}
	ca.send(map[string]any{"type": "ping", "t": 1})
	ca.readType("pong")
	if b.hub.Len() != 0 {
		t.Fatalf("b has %d sessions, want 0", b.hub.Len())
	}

	owner := b.dial(t)
	h["token"] = mint(t, "cand-b")
	owner.send(h)
	if m := owner.readType("welcome"); m["resumed"] != true {
		t.Fatalf("owner's resume on b: %v", m)
	}
}

// newForwardedServer runs a hub whose requests look as if they came from
// remote (an address, and forwarding headers when hdr is set).
func newForwardedServer(t *testing.T, cfg Config, remote string, hdr http.Header) *testServer {
	t.Helper()
	cfg.Log = zerolog.Nop()
	return serveHub(t, cfg, func(hub *Hub) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if remote != "" {
				r.RemoteAddr = remote
			}
			for k, v := range hdr {
				r.Header[k] = v
			}
			hub.ServeHTTP(w, r)
		})
	})
}

// TestAnonymousOnlyFromThisHost: without a secret, a client that is not on
// the server's host (another address, or loopback through a reverse proxy
// that names the real client) is refused, unless AnonymousAnywhere.
func TestAnonymousOnlyFromThisHost(t *testing.T) {
	cases := []struct {
		name     string
		remote   string
		hdr      http.Header
		anywhere bool
		allowed  bool
	}{
		{"loopback", "", nil, false, true},
		{"public address", "203.0.113.5:1234", nil, false, false},
		{"through a proxy", "", http.Header{"X-Forwarded-For": {"203.0.113.5"}}, false, false},
		{"RFC 7239 proxy", "", http.Header{"Forwarded": {"for=203.0.113.5"}}, false, false},
		{"public address, anonymous anywhere", "203.0.113.5:1234", nil, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newForwardedServer(t, Config{Health: newFakeHealth(tiers.L3), AnonymousAnywhere: tc.anywhere}, tc.remote, tc.hdr)
			c := ts.dial(t)
			c.send(hello("en"))
			if !tc.allowed {
				expectUnauthorized(t, c, "auth.secret")
				expectNoSessions(t, ts)
				return
			}
			if m := c.read(); m.str("type") != "welcome" {
				t.Fatalf("got %v, want welcome", m)
			}
		})
	}
}

// signed is a token of payload signed with testSecret, whatever it holds.
func signed(payload string) string {
	return signedBody(tokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(payload)))
}

// signedBody is body with a valid signature, however body is spelled.
func signedBody(body string) string {
	return body + "." + base64.RawURLEncoding.EncodeToString(sign(testSecret, body))
}

// respell changes the unused low bits of tok's last character: a lenient
// base64 decoder reads the same signature, a strict one refuses it.
func respell(tok string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, tok[len(tok)-1])
	return tok[:len(tok)-1] + string(alphabet[i^1])
}

func TestVerifyToken(t *testing.T) {
	tok := mint(t, "cand-1")
	body := tok[:strings.LastIndexByte(tok, '.')]
	day, _ := IssueToken(testSecret, "cand-1", DefaultMaxTTL, authNow)
	cases := []struct {
		name   string
		secret string
		token  string
		at     time.Time
		want   error
	}{
		{"valid", testSecret, tok, authNow, nil},
		{"a second before expiry", testSecret, tok, authNow.Add(time.Hour - time.Second), nil},
		{"at expiry", testSecret, tok, authNow.Add(time.Hour), ErrTokenExpired},
		{"other secret", "other", tok, authNow, ErrTokenForged},
		{"no secret", "", tok, authNow, ErrTokenMalformed},
		{"empty", testSecret, "", authNow, ErrTokenMissing},
		{"prefix only", testSecret, "v1.", authNow, ErrTokenMalformed},
		{"truncated signature", testSecret, tok[:len(tok)-2], authNow, ErrTokenMalformed},
		{"exactly max ttl", testSecret, day, authNow, nil},
		{"a second over max ttl", testSecret, day, authNow.Add(-time.Second), ErrTokenTooLong},
		{"exp 2^62", testSecret, signed(fmt.Sprintf(`{"sub":"cand-1","exp":%d}`, int64(1)<<62)), authNow, ErrTokenTooLong},
		{"non-canonical signature", testSecret, respell(tok), authNow, ErrTokenMalformed},
		{"newline in signature", testSecret, tok[:len(tok)-4] + "\n" + tok[len(tok)-4:], authNow, ErrTokenMalformed},
		{"padded signature", testSecret, tok + "=", authNow, ErrTokenMalformed},
		{"newline in signed payload", testSecret, signedBody(body[:6] + "\r\n" + body[6:]), authNow, ErrTokenMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := VerifyToken(tc.secret, tc.token, tc.at, 0)
			if err != tc.want || (err == nil && sub != "cand-1") {
				t.Fatalf("VerifyToken = %q, %v; want cand-1, %v", sub, err, tc.want)
			}
		})
	}
}
