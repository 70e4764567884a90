package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// resumeState is what a session needs to resume after a lost connection.
type resumeState struct {
	sessionID, token string
	lastSeq          uint64
}

// open dials server's /ws, says hello (resuming when rs is not nil) and
// reads the welcome, all within timeout. The caller owns the returned
// connection.
func open(ctx context.Context, server string, p Profile, rs *resumeState, headers map[string]string, timeout time.Duration) (*websocket.Conn, message, error) {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	url := "ws" + strings.TrimPrefix(strings.TrimRight(server, "/"), "http") + "/ws"
	ws, _, err := websocket.Dial(dctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, message{}, fmt.Errorf("load: dial %s: %w", url, err)
	}
	ws.SetReadLimit(readLimit)
	hello := map[string]any{"type": "hello", "v": 1, "auto_answer": p.AutoAnswer,
		"profile": map[string]any{"lang": p.Lang, "seniority": p.Seniority}}
	if rs != nil {
		hello["resume"] = map[string]any{"session_id": rs.sessionID, "token": rs.token, "last_seq": rs.lastSeq}
	}
	if err := wsjson.Write(dctx, ws, hello); err != nil {
		ws.CloseNow()
		return nil, message{}, fmt.Errorf("load: hello: %w", err)
	}
	for {
		var m message
		if err := wsjson.Read(dctx, ws, &m); err != nil {
			ws.CloseNow()
			return nil, message{}, fmt.Errorf("load: welcome: %w", err)
		}
		switch m.Type {
		case "welcome":
			return ws, m, nil
		case "error":
			ws.CloseNow()
			return nil, m, &refusedError{code: m.Code, message: m.Message}
		}
	}
}

// refusedError is the server's error answer to a hello.
type refusedError struct{ code, message string }

func (e *refusedError) Error() string { return "load: hello refused: " + e.code + ": " + e.message }

// isRefused reports whether err is a refused hello with one of codes.
func isRefused(err error, codes ...string) bool {
	var r *refusedError
	if !errors.As(err, &r) {
		return false
	}
	for _, c := range codes {
		if r.code == c {
			return true
		}
	}
	return false
}

// send writes one JSON message; ctx bounds the write (a pacer's
// writeCtx).
func send(ctx context.Context, ws *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return ws.Write(ctx, websocket.MessageText, b)
}

// sendAudio writes one binary PCM frame (prebuilt by LoadClip); ctx
// bounds the write.
func sendAudio(ctx context.Context, ws *websocket.Conn, frame []byte) error {
	return ws.Write(ctx, websocket.MessageBinary, frame)
}
