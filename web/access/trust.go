package access

import (
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Trust is the rule for requests served without a credential (local
// trust: no auth.secret, ops.token or gateway.keys). Being on this host is
// not enough there: a page on any site can make the local browser send a
// request to 127.0.0.1 (cross-site request forgery), and DNS rebinding can
// give such a page a name that resolves to 127.0.0.1 and read the answers.
// So a request served on local trust must name this host in its Host
// header (a loopback name or address, or one of the operator's
// allowed_hosts), and one that changes state or spends a key must not come
// from another site. The zero Trust allows loopback names only.
type Trust struct {
	hosts []string // path.Match patterns on the host without its port
}

// NewTrust returns the rule with the operator's extra host patterns
// (allowed_hosts; case-insensitive, no port).
func NewTrust(allowedHosts []string) Trust {
	hosts := make([]string, len(allowedHosts))
	for i, h := range allowedHosts {
		hosts[i] = strings.ToLower(h)
	}
	return Trust{hosts: hosts}
}

// Refusal says why r may not be served on local trust, or "" when it may:
// its Host is not this host's, or it is a state-changing request (any
// method but GET, HEAD and OPTIONS) that a browser sent from another
// origin. It does not look at the peer address (Local does).
func (t Trust) Refusal(r *http.Request) string {
	if !t.HostAllowed(r.Host) {
		return "this server answers requests without a credential only for its own host names (allowed_hosts)"
	}
	if !safe(r.Method) && CrossSite(r) {
		return "cross-site request refused"
	}
	return ""
}

// HostAllowed reports whether host (a Host header, with or without a
// port) names this host: localhost or a name under .localhost, a loopback
// address, or a name the operator allowed.
func (t Trust) HostAllowed(host string) bool {
	h := strings.ToLower(host)
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(h, "]"), "["), ".")
	if h == "" {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true // browsers resolve these to loopback themselves (RFC 6761)
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, p := range t.hosts {
		if ok, _ := path.Match(p, h); ok {
			return true
		}
	}
	return false
}

// CrossSite reports whether a browser sent r from a page of another
// origin: Sec-Fetch-Site other than same-origin or none (none: the user
// typed the address), or an Origin whose host is not r.Host ("null"
// included). A request from curl or a script sends neither and is not
// cross-site.
func CrossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return true
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}

// Guard serves next only to requests that Refusal allows, and answers
// the others 403 with the reason before next runs.
func (t Trust) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := t.Refusal(r); why != "" {
			http.Error(w, why, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func safe(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}
