package access

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Failure throttle defaults.
const (
	DefaultFailures   = 10          // failed attempts per address per window
	DefaultFailWindow = time.Minute // the window, and the period of the rate log
	maxFailAddrs      = 10000       // addresses tracked; past it the table starts afresh
)

// Failures throttles credential guesses (ops sign-in, bearer tokens) per
// client address: an address with Limit failures within the current
// window is refused until the window ends, before its credential is even
// looked at, so a right guess cannot be told from a wrong one. Failures
// are reported as a rate (Report at most once per window), never one log
// line each. Safe for concurrent use; nothing blocks on I/O under its lock.
type Failures struct {
	Limit  int                                              // failures per window; default DefaultFailures
	Window time.Duration                                    // default DefaultFailWindow
	Now    func() time.Time                                 // default time.Now
	Report func(failures, addresses int, per time.Duration) // called outside the lock; nil: no report

	mu       sync.Mutex
	addrs    map[string]*failCount
	since    time.Time           // start of the report period
	reported int                 // failures in the report period
	seen     map[string]struct{} // addresses in the report period (bounded like addrs)
}

type failCount struct {
	start time.Time
	n     int
}

// Allow reports whether r's address may try a credential now, and if not,
// how long until it may.
func (f *Failures) Allow(r *http.Request) (bool, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now, window := f.clock(), f.window()
	c := f.addrs[ClientAddr(r)]
	if c == nil || now.Sub(c.start) >= window || c.n < f.limit() {
		return true, 0
	}
	return false, c.start.Add(window).Sub(now)
}

// Fail records a failed attempt from r's address.
func (f *Failures) Fail(r *http.Request) {
	addr := ClientAddr(r)
	f.mu.Lock()
	now, window := f.clock(), f.window()
	if f.addrs == nil || len(f.addrs) >= maxFailAddrs {
		f.prune(now, window)
	}
	c := f.addrs[addr]
	if c == nil || now.Sub(c.start) >= window {
		c = &failCount{start: now}
		f.addrs[addr] = c
	}
	c.n++
	f.reported++
	if len(f.seen) < maxFailAddrs {
		f.seen[addr] = struct{}{}
	}
	var n, addrs int
	var per time.Duration
	if f.since.IsZero() || now.Sub(f.since) >= window {
		n, addrs, per = f.reported, len(f.seen), now.Sub(f.since)
		if f.since.IsZero() {
			per = 0
		}
		f.since, f.reported, f.seen = now, 0, map[string]struct{}{}
	}
	f.mu.Unlock()
	if n > 0 && f.Report != nil {
		f.Report(n, addrs, per)
	}
}

// prune drops ended windows; a table still full starts afresh.
func (f *Failures) prune(now time.Time, window time.Duration) {
	if f.seen == nil {
		f.seen = map[string]struct{}{}
	}
	for a, c := range f.addrs {
		if now.Sub(c.start) >= window {
			delete(f.addrs, a)
		}
	}
	if f.addrs == nil || len(f.addrs) >= maxFailAddrs {
		f.addrs = map[string]*failCount{}
	}
}

func (f *Failures) limit() int {
	if f.Limit > 0 {
		return f.Limit
	}
	return DefaultFailures
}

func (f *Failures) window() time.Duration {
	if f.Window > 0 {
		return f.Window
	}
	return DefaultFailWindow
}

func (f *Failures) clock() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// ClientAddr is the address a request is counted under (Failures, the
// hub's pre-hello cap): the peer's IP, or, when the peer is a proxy on
// this host or a private network (loopback, 10/8, 172.16/12, 192.168/16,
// fc00::/7) and names the client, the client it names (the last entry of
// X-Forwarded-For, which the nearest proxy appended, else X-Real-Ip). So
// the visitors behind one nginx are not all one address. A client on a
// private network could name any address this way; the global bounds
// still hold for it.
func ClientAddr(r *http.Request) string {
	peer := r.RemoteAddr
	if host, _, err := net.SplitHostPort(peer); err == nil {
		peer = host
	}
	ip := net.ParseIP(peer)
	if ip == nil || !(ip.IsLoopback() || ip.IsPrivate()) {
		return peer
	}
	named := r.Header.Get("X-Real-Ip")
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		last := xff[len(xff)-1]
		named = strings.TrimSpace(last[strings.LastIndexByte(last, ',')+1:])
	}
	if c := net.ParseIP(named); c != nil {
		return c.String()
	}
	return peer
}
