package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"go.uber.org/goleak"
)

// TestMain runs the tests, then stops what they shared (the built
// binaries, the one Chromium) and checks that no goroutine was left
// behind.
func TestMain(m *testing.M) {
	code := m.Run()
	closeShared()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

const waitLimit = 10 * time.Second

// startServer runs `poise serve args...` in-process and returns its
// address, read from the first log line as a user would, once the server
// has said it is ready (it listens before it loads its templates, and
// requests wait for that meanwhile).
func startServer(t *testing.T, getenv func(string) string, args ...string) string {
	t.Helper()
	lines, drain := serveLogs(t, getenv, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	defer drain()
	if !lines.Scan() {
		t.Fatal("no log line (serve's error follows at cleanup)")
	}
	var first struct {
		Addr, Message string
	}
	if err := json.Unmarshal(lines.Bytes(), &first); err != nil || first.Addr == "" {
		t.Fatalf("first log line %q does not give the address: %v", lines.Text(), err)
	}
	if !strings.Contains(first.Message, first.Addr) {
		t.Fatalf("first log line %q does not say where it listens", lines.Text())
	}
	if err := awaitReady(lines.Scan, lines.Text); err != nil {
		t.Fatalf("poise on %s: %v (serve's error follows at cleanup)", first.Addr, err)
	}
	return first.Addr
}

// startWait bounds a server's start-up: a -race build loading its
// templates on a busy 2-core machine takes seconds.
const startWait = 90 * time.Second

// awaitReady reads log lines with next and text until the "ready" line,
// for at most startWait. A log that ends first is an error.
func awaitReady(next func() bool, text func() string) error {
	found := make(chan bool, 1)
	go func() {
		for next() {
			var l struct{ Message string }
			if json.Unmarshal([]byte(text()), &l) == nil && l.Message == "ready" {
				found <- true
				return
			}
		}
		found <- false
	}()
	select {
	case ok := <-found:
		if !ok {
			return errors.New("the log ended before the ready line")
		}
		return nil
	case <-time.After(startWait):
		return fmt.Errorf("no ready line within %v", startWait)
	}
}

// serveLogs runs `poise serve args...` in-process until the test ends
// (then it must stop within waitLimit, without an error) and returns its
// log lines as they come; drain discards the rest once the caller stops
// reading.
func serveLogs(t *testing.T, getenv func(string) string, args ...string) (lines *bufio.Scanner, drain func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), getenv, pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(waitLimit):
			t.Error("serve did not stop")
		}
	})
	return bufio.NewScanner(pr), func() { go io.Copy(io.Discard, pr) }
}

func noEnv(string) string { return "" }

// TestRunWithNoConfig is the README's run command as a new user meets it:
// no config, a WebSocket client gets welcome, then useful content for
// "Tell me about yourself" within the 1.5 s budget.
func TestRunWithNoConfig(t *testing.T) {
	t.Parallel()
	addr := startServer(t, noEnv)
	for _, path := range []string{"/healthz", "/readyz", "/coach/scripts.json"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	wsjson.Write(ctx, ws, map[string]any{"type": "hello", "v": 1, "profile": map[string]any{"lang": "en", "seniority": "mid"}})
	var welcome map[string]any
	if err := wsjson.Read(ctx, ws, &welcome); err != nil || welcome["type"] != "welcome" {
		t.Fatalf("welcome = %v, %v", welcome, err)
	}
	asked := time.Now()
	wsjson.Write(ctx, ws, map[string]any{"type": "question", "text": "Tell me about yourself"})
	for {
		var m map[string]any
		if err := wsjson.Read(ctx, ws, &m); err != nil {
			t.Fatal(err)
		}
		if m["type"] == "error" {
			t.Fatalf("error message: %v", m)
		}
		if m["type"] == "coach" || m["type"] == "answer_start" {
			t.Logf("first useful content (%s) after %v", m["type"], time.Since(asked))
			break
		}
	}
	ws.Close(websocket.StatusNormalClosure, "")
}

// TestShutdownSendsGoingAway: on the first signal clients get 1001.
func TestShutdownSendsGoingAway(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0"}, noEnv, pw, io.Discard)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	lines.Scan()
	var first struct{ Addr string }
	json.Unmarshal(lines.Bytes(), &first)
	if err := awaitReady(lines.Scan, lines.Text); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)

	dctx, dcancel := context.WithTimeout(context.Background(), waitLimit)
	defer dcancel()
	ws, _, err := websocket.Dial(dctx, "ws://"+first.Addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	wsjson.Write(dctx, ws, map[string]any{"type": "hello", "v": 1})
	var welcome map[string]any
	wsjson.Read(dctx, ws, &welcome)
	cancel()
	_, _, err = ws.Read(dctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusGoingAway {
		t.Fatalf("close status = %v (%v), want 1001", got, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
