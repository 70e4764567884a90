package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// mixClient is one of many concurrent sessions: a reader records its
// level, a pinger keeps its heartbeat until it is told to go silent.
type mixClient struct {
	ws     *websocket.Conn
	level  atomic.Value // string
	silent atomic.Bool
	bad    atomic.Int64 // error messages and seq gaps
}

func dialMix(ctx context.Context, addr string) (*mixClient, error) {
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", nil)
	if err != nil {
		return nil, err
	}
	if err := wsjson.Write(ctx, ws, map[string]any{"type": "hello", "v": 1}); err != nil {
		ws.CloseNow()
		return nil, err
	}
	var w wsMsg
	if err := wsjson.Read(ctx, ws, &w); err != nil || w.Type != "welcome" {
		ws.CloseNow()
		return nil, fmt.Errorf("no welcome: %v", err)
	}
	c := &mixClient{ws: ws}
	c.level.Store(w.Level)
	return c, nil
}

// run reads and pings until ctx is done or the connection ends.
func (c *mixClient) run(ctx context.Context, ping time.Duration) {
	var wg sync.WaitGroup
	wg.Go(func() {
		var last uint64
		for {
			var m wsMsg
			if err := wsjson.Read(ctx, c.ws, &m); err != nil {
				return
			}
			if m.Type == "error" || m.Seq != last+1 {
				c.bad.Add(1)
			}
			last = m.Seq
			if m.Type == "level" {
				c.level.Store(m.Level)
			}
		}
	})
	t := time.NewTicker(ping)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.ws.Close(websocket.StatusNormalClosure, "")
			wg.Wait()
			return
		case now := <-t.C:
			if !c.silent.Load() {
				wctx, cancel := context.WithTimeout(ctx, waitLimit)
				wsjson.Write(wctx, c.ws, map[string]any{"type": "ping", "t": now.UnixMilli()})
				cancel()
			}
		}
	}
}

func (c *mixClient) send(v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	return wsjson.Write(ctx, c.ws, v)
}

// TestOpsLevelsMixed: 200 live sessions at mixed levels (L1 down shared by
// all; a quarter pressed Reset AI and are at L1; a quarter stopped their
// heartbeat and are at L4; the rest at L2), and `poise ops levels -redis`
// counts them right, as the clients see them.
func TestOpsLevelsMixed(t *testing.T) {
	t.Parallel()
	const sessions = 200
	const heartbeat = 3 * time.Second // a loaded CI machine (-race) delays pings: keep misses out
	url := poiseDBURL(t)
	addr := startServer(t, noEnv, "-demo", "-config", writeConfig(t, fmt.Sprintf(
		"redis_url: %s\nnode: mixed\nheartbeat_timeout_ms: %d\nhealth: {interval_ms: 300}\n", url, heartbeat.Milliseconds())))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	clients := make([]*mixClient, sessions)
	for i := range clients {
		dctx, dcancel := context.WithTimeout(ctx, waitLimit)
		c, err := dialMix(dctx, addr)
		dcancel()
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		clients[i] = c
		wg.Go(func() { c.run(ctx, heartbeat/3) })
	}
	counts := func() map[string]int {
		m := map[string]int{}
		for _, c := range clients {
			m[c.level.Load().(string)]++
		}
		return m
	}
	opsLevels := func() string { return opsOutput(t, "levels", "-redis", url) }
	expect := func(want map[string]int) {
		t.Helper()
		for deadline := time.Now().Add(waitLimit); fmt.Sprint(counts()) != fmt.Sprint(want); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("clients at %v after %v, want %v", counts(), waitLimit, want)
			}
		}
		var out string
		shows := func() bool {
			out = opsLevels()
			ok := strings.Contains(out, fmt.Sprintf("%d live sessions\n", sessions))
			for _, l := range []string{"L1", "L2", "L3", "L4"} {
				ok = ok && strings.Contains(out, fmt.Sprintf("%s  %d\n", l, want[l]))
			}
			return ok
		}
		// Each look runs the command; on a loaded machine that alone takes
		// seconds, so the bound is on looks as well as on time.
		for looks, deadline := 1, time.Now().Add(waitLimit); !shows(); looks++ {
			if looks >= 3 && time.Now().After(deadline) {
				t.Fatalf("after %d looks in %v, ops levels does not show %v (clients at %v):\n%s", looks, waitLimit, want, counts(), out)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("clients: %v\n$ poise ops levels -redis %s\n%s", counts(), url, tailLines(strings.SplitN(out, "\nSESSION", 2)[0], 6))
	}

	expect(map[string]int{"L1": sessions})
	demoFault(t, addr, faultL1Down, true)
	expect(map[string]int{"L2": sessions})
	q := sessions / 4
	for _, c := range clients[:q] {
		if err := c.send(map[string]any{"type": "reset_ai"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range clients[q : 2*q] {
		c.silent.Store(true)
	}
	expect(map[string]int{"L1": q, "L2": sessions - 2*q, "L4": q})
	for i, c := range clients {
		if n := c.bad.Load(); n > 0 {
			t.Fatalf("session %d got %d error messages or seq gaps", i, n)
		}
	}
}
