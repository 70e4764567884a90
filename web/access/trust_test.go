package access

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestTrustRefusal(t *testing.T) {
	trust := NewTrust([]string{"poise.lan", "*.box.internal"})
	tests := []struct {
		name, method, host string
		header             map[string]string
		refused            bool
	}{
		{"loopback address", "GET", "127.0.0.1:8080", nil, false},
		{"loopback v6", "GET", "[::1]:8080", nil, false},
		{"localhost", "GET", "localhost:8080", nil, false},
		{"under .localhost", "GET", "poise.localhost", nil, false},
		{"allowed name", "GET", "POISE.LAN:8080", nil, false},
		{"allowed pattern", "GET", "a.box.internal", nil, false},
		{"rebound name", "GET", "rebind.evil.example:8080", nil, true},
		{"rebound name, same origin", "POST", "rebind.evil.example:8080", map[string]string{"Origin": "http://rebind.evil.example:8080"}, true},
		{"lan address", "GET", "192.168.1.5:8080", nil, true},
		{"no host", "GET", "", nil, true},
		{"curl post", "POST", "127.0.0.1:8080", nil, false},
		{"same-origin post", "POST", "127.0.0.1:8080", map[string]string{"Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"}, false},
		{"cross-site post", "POST", "127.0.0.1:8080", map[string]string{"Origin": "https://evil.example"}, true},
		{"null origin post", "POST", "127.0.0.1:8080", map[string]string{"Origin": "null"}, true},
		{"other port post", "POST", "127.0.0.1:8080", map[string]string{"Origin": "http://127.0.0.1:9999"}, true},
		{"cross-site fetch metadata", "POST", "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "cross-site"}, true},
		{"same-site fetch metadata", "POST", "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "same-site"}, true},
		{"typed address", "POST", "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "none"}, false},
		{"cross-site get", "GET", "127.0.0.1:8080", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/v1/chat/completions", nil)
			r.Host = tc.host
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			if why := trust.Refusal(r); (why != "") != tc.refused {
				t.Fatalf("Refusal(%s %s %v) = %q, want refused %v", tc.method, tc.host, tc.header, why, tc.refused)
			}
			w := httptest.NewRecorder()
			ran := false
			trust.Guard(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true })).ServeHTTP(w, r)
			if ran == tc.refused || (tc.refused && w.Code != http.StatusForbidden) {
				t.Fatalf("Guard: handler ran %v, status %d; want refused %v with 403", ran, w.Code, tc.refused)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	now := time.Unix(1000, 0)
	type report struct{ n, addrs int }
	var reports []report
	f := &Failures{Limit: 3, Window: time.Minute, Now: func() time.Time { return now },
		Report: func(n, addrs int, _ time.Duration) { reports = append(reports, report{n, addrs}) }}
	from := func(addr string) *http.Request {
		r := httptest.NewRequest("POST", "/ops/login", nil)
		r.RemoteAddr = addr + ":5000"
		return r
	}
	for i := range 3 {
		if ok, _ := f.Allow(from("203.0.113.1")); !ok {
			t.Fatalf("attempt %d refused before the limit", i+1)
		}
		f.Fail(from("203.0.113.1"))
	}
	ok, wait := f.Allow(from("203.0.113.1"))
	if ok || wait <= 0 || wait > time.Minute {
		t.Fatalf("after 3 failures: allowed %v, wait %v; want refused for up to a minute", ok, wait)
	}
	if ok, _ := f.Allow(from("203.0.113.2")); !ok {
		t.Fatal("another address is throttled too")
	}
	f.Fail(from("203.0.113.2"))
	if len(reports) != 1 || reports[0] != (report{1, 1}) {
		t.Fatalf("reports within the first window = %v, want one of the first failure", reports)
	}
	now = now.Add(time.Minute)
	if ok, _ := f.Allow(from("203.0.113.1")); !ok {
		t.Fatal("still refused after the window")
	}
	f.Fail(from("203.0.113.1"))
	if len(reports) != 2 || reports[1] != (report{4, 2}) {
		t.Fatalf("reports = %v, want the second to count 4 failures from 2 addresses", reports)
	}
}

func TestClientAddr(t *testing.T) {
	tests := []struct {
		name, remote, xff, realIP, want string
	}{
		{"direct", "203.0.113.7:5000", "", "", "203.0.113.7"},
		{"public peer naming another", "203.0.113.7:5000", "198.51.100.1", "", "203.0.113.7"},
		{"nginx on this host", "127.0.0.1:5000", "198.51.100.1", "", "198.51.100.1"},
		{"nginx appends the last", "127.0.0.1:5000", "10.9.9.9, 198.51.100.1", "", "198.51.100.1"},
		{"compose nginx", "172.18.0.3:5000", "", "198.51.100.2", "198.51.100.2"},
		{"garbage named", "127.0.0.1:5000", "not-an-ip", "", "127.0.0.1"},
		{"local, no proxy", "[::1]:5000", "", "", "::1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/ws", nil)
			r.RemoteAddr = tc.remote
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if tc.realIP != "" {
				r.Header.Set("X-Real-Ip", tc.realIP)
			}
			if got := ClientAddr(r); got != tc.want {
				t.Fatalf("ClientAddr = %q, want %q", got, tc.want)
			}
		})
	}
}
