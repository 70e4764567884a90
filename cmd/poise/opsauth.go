package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/poise-dev/poise/web/access"
)

// Ops access. The operator endpoints (/ops, /ops/api/*, the -demo faults,
// /metrics) need ops.token when one is configured: as a bearer header
// (Prometheus, scripts, `poise ops -server`) or as the cookie the sign-in
// page gets from POST /ops/login. Without ops.token they are for clients
// on the server's host only.
//
// The cookie holds "<expiry unix s>.<base64url HMAC-SHA256(ops.token,
// "poise-ops-cookie:" + expiry)>": derived from the token, never the token,
// checked in constant time, and void once it expires or the token changes.
// Signing out clears it in the browser; a copy made before stays valid
// until its expiry (the server keeps no sign-in state, so that any node
// accepts it).
const (
	opsCookieName  = "poise_ops"
	opsCookiePath  = "/ops"
	opsCookieTTL   = 12 * time.Hour
	opsCookieLabel = "poise-ops-cookie:"
	maxLoginBody   = 4 << 10 // bytes of a POST /ops/login body
)

// opsAccess is what a request may do with the operator endpoints.
type opsAccess int

const (
	opsAllowed   opsAccess = iota
	opsNeedToken           // ops.token is set and the request has no valid credential
	opsNotLocal            // no ops.token and the client is not on this host
	opsUntrusted           // no ops.token, and a foreign Host or a cross-site write (access.Trust)
	opsThrottled           // too many wrong tokens from this address lately (access.Failures)
)

// opsAuth checks operator credentials. The zero now means time.Now; a nil
// failures does not throttle.
type opsAuth struct {
	token    string           // ops.token; empty: loopback only
	now      func() time.Time // for cookie expiry
	trust    access.Trust     // what local trust also needs
	failures *access.Failures // wrong bearer tokens and sign-ins, per address
}

func (a *app) opsAuth() opsAuth {
	return opsAuth{token: a.cfg.Ops.Token, now: time.Now, trust: a.trust, failures: a.failures}
}

// access decides r's access and whether it came by cookie. A wrong bearer
// token counts as a failed attempt of r's address; an address over its
// limit is refused before its credential is looked at.
func (o opsAuth) access(r *http.Request) (opsAccess, bool) {
	if o.token == "" {
		switch {
		case !access.Local(r):
			return opsNotLocal, false
		case o.trust.Refusal(r) != "":
			return opsUntrusted, false
		}
		return opsAllowed, false
	}
	bearer := r.Header.Get("Authorization")
	if bearer != "" && !o.allow(r) {
		return opsThrottled, false
	}
	if subtle.ConstantTimeCompare([]byte(bearer), []byte("Bearer "+o.token)) == 1 {
		return opsAllowed, false
	}
	if bearer != "" {
		o.fail(r)
	}
	if c, err := r.Cookie(opsCookieName); err == nil && o.validCookie(c.Value) {
		return opsAllowed, true
	}
	return opsNeedToken, false
}

func (o opsAuth) allow(r *http.Request) bool {
	if o.failures == nil {
		return true
	}
	ok, _ := o.failures.Allow(r)
	return ok
}

func (o opsAuth) fail(r *http.Request) {
	if o.failures != nil {
		o.failures.Fail(r)
	}
}

// throttled answers a request from an address over its failure limit.
func throttled(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(access.DefaultFailWindow/time.Second)))
	http.Error(w, "too many wrong ops tokens from this address; try again later", http.StatusTooManyRequests)
}

// cookieValue returns a sign-in cookie value that expires at exp.
func (o opsAuth) cookieValue(exp time.Time) string {
	e := strconv.FormatInt(exp.Unix(), 10)
	return e + "." + base64.RawURLEncoding.EncodeToString(o.mac(e))
}

func (o opsAuth) validCookie(v string) bool {
	e, macText, ok := strings.Cut(v, ".")
	exp, err := strconv.ParseInt(e, 10, 64)
	if !ok || err != nil {
		return false
	}
	mac, err := base64.RawURLEncoding.DecodeString(macText)
	if err != nil || !hmac.Equal(mac, o.mac(e)) {
		return false
	}
	return o.clock().Unix() < exp
}

func (o opsAuth) mac(exp string) []byte {
	m := hmac.New(sha256.New, []byte(o.token))
	m.Write([]byte(opsCookieLabel + exp))
	return m.Sum(nil)
}

func (o opsAuth) clock() time.Time {
	if o.now == nil {
		return time.Now()
	}
	return o.now()
}

// opsOnly guards an operator endpoint: 401 without a valid credential
// while ops.token is set, 403 for a client off this host without one, and
// 403 for a cross-origin write that rides on the cookie.
func (a *app) opsOnly(next http.Handler) http.Handler {
	return a.opsAuth().guard(next, nil)
}

// opsPage guards the ops page like opsOnly, but a browser without a
// credential gets the sign-in page (web's /ops/login) instead of a 401.
func (a *app) opsPage(pages http.Handler) http.Handler {
	return a.opsAuth().guard(pages, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/ops/login"
		r2.URL.RawPath = ""
		pages.ServeHTTP(w, r2)
	}))
}

// guard serves next to an allowed request; signIn (nil for a 401) answers
// one that needs the token.
func (o opsAuth) guard(next, signIn http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		access, byCookie := o.access(r)
		switch {
		case access == opsNotLocal:
			http.Error(w, "ops endpoints are for clients on the server's host unless ops.token is set", http.StatusForbidden)
		case access == opsUntrusted:
			http.Error(w, o.trust.Refusal(r), http.StatusForbidden)
		case access == opsThrottled:
			throttled(w)
		case access == opsNeedToken && signIn != nil:
			signIn.ServeHTTP(w, r)
		case access == opsNeedToken:
			w.Header().Set("WWW-Authenticate", `Bearer realm="poise-ops"`)
			http.Error(w, "ops token required (Authorization: Bearer, or sign in at /ops)", http.StatusUnauthorized)
		case byCookie && !safeMethod(r.Method) && !sameOrigin(r):
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
		default:
			w.Header().Set("Cache-Control", "no-store")
			next.ServeHTTP(w, r)
		}
	})
}

// opsLogin serves POST /ops/login: a JSON body {"token": ops.token} gets
// the sign-in cookie (204); a wrong token 401; no ops.token configured 404.
func (a *app) opsLogin() http.Handler {
	o := a.opsAuth()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.token == "" {
			http.Error(w, "no ops.token is configured: the ops page is open to clients on the server's host", http.StatusNotFound)
			return
		}
		if !sameOrigin(r) {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		if !o.allow(r) {
			throttled(w)
			return
		}
		var req struct {
			Token string `json:"token"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLoginBody)).Decode(&req); err != nil {
			http.Error(w, `body must be {"token": "…"}`, http.StatusBadRequest)
			return
		}
		if subtle.ConstantTimeCompare([]byte(req.Token), []byte(o.token)) != 1 {
			o.fail(r) // logged as a rate (app.failures)
			http.Error(w, "wrong ops token", http.StatusUnauthorized)
			return
		}
		exp := o.clock().Add(opsCookieTTL)
		http.SetCookie(w, opsCookie(r, o.cookieValue(exp), int(opsCookieTTL/time.Second)))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	})
}

// opsLogout serves POST /ops/logout: it clears the sign-in cookie (204).
func (a *app) opsLogout() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		http.SetCookie(w, opsCookie(r, "", -1))
		w.WriteHeader(http.StatusNoContent)
	})
}

// opsCookie is the sign-in cookie: HttpOnly, SameSite=Strict, for /ops
// only, and Secure when the browser reached the server over TLS (directly
// or through a proxy that says so). maxAge < 0 deletes it.
func opsCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: opsCookieName, Value: value, Path: opsCookiePath, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")}
}

func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

// sameOrigin reports whether r's Origin, if it has one, is the host r was
// sent to. Browsers send Origin on every cross-origin request and on
// same-origin POSTs.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

func isLoopbackAddr(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}
