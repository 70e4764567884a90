package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/coder/websocket"
)

// TestWebSocketOriginThroughServer: with allowed_origins in the config, a
// cross-origin WebSocket upgrade is refused with 403 before any session
// exists; an allowed pattern, the server's own origin and a client that
// sends no Origin (not a browser) get a session. "app.example.com:*"
// allows any port, the scheme's default (no port in the Origin) included.
func TestWebSocketOriginThroughServer(t *testing.T) {
	t.Parallel()
	addr := startServer(t, noEnv, "-config", writeConfig(t, "allowed_origins: [\"app.example.com:*\", \"*.corp.example\"]\n"))
	cases := []struct {
		origin string
		ok     bool
	}{
		{"https://evil.example.com", false},
		{"https://app.example.com.evil.net", false},
		{"https://evil.net/app.example.com", false},
		{"null", false},
		{"http://localhost:8080", false},
		{"https://app.example.com:8443", true},
		{"https://app.example.com", true},
		{"https://hr.corp.example", true},
		{"http://" + addr, true}, // same origin
		{"", true},               // no Origin header: not a browser, nothing to forge
	}
	for _, tc := range cases {
		t.Run(tc.origin, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			hdr := http.Header{}
			if tc.origin != "" {
				hdr.Set("Origin", tc.origin)
			}
			ws, resp, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: hdr})
			if !tc.ok {
				if err == nil {
					ws.CloseNow()
					t.Fatal("cross-origin upgrade accepted")
				}
				if resp == nil || resp.StatusCode != http.StatusForbidden {
					t.Fatalf("response %v (%v), want 403", resp, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("upgrade refused: %v", err)
			}
			c := &wsClient{t: t, ws: ws, raw: map[uint64][]byte{}}
			defer ws.CloseNow()
			c.hello(nil)
			ws.Close(websocket.StatusNormalClosure, "")
		})
	}
}
