package access

import (
	"net/http/httptest"
	"testing"
)

func TestLocal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		remote string
		header string
		want   bool
	}{
		{"loopback v4", "127.0.0.1:5000", "", true},
		{"loopback v6", "[::1]:5000", "", true},
		{"remote peer", "203.0.113.7:5000", "", false},
		{"proxy on this host", "127.0.0.1:5000", "X-Forwarded-For", false},
		{"forwarded", "127.0.0.1:5000", "Forwarded", false},
		{"real ip", "127.0.0.1:5000", "X-Real-Ip", false},
		{"no port", "127.0.0.1", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			if tc.header != "" {
				r.Header.Set(tc.header, "198.51.100.1")
			}
			if got := Local(r); got != tc.want {
				t.Fatalf("Local(%s, %s) = %v, want %v", tc.remote, tc.header, got, tc.want)
			}
		})
	}
}
