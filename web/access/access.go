package access

import (
	"net"
	"net/http"
)

// forwardingHeaders name the client of a request a reverse proxy passed on.
var forwardingHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Real-Ip"}

// Local reports whether r comes from this host: a loopback peer
// that is not a reverse proxy passing on someone else's request (which
// names the client in a forwarding header). Without credentials
// configured, Poise serves sessions, ops and the gateway to such
// requests only, so an nginx on the same machine does not make every
// visitor local.
func Local(r *http.Request) bool {
	for _, h := range forwardingHeaders {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
