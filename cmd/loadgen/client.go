package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

const pingEvery = 10 * time.Second // as the browser does

// client is one session: a reader goroutine records what arrives, a
// pinger keeps the heartbeat alive. close stops both and waits.
type client struct {
	id     string
	ws     *websocket.Conn
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu                 sync.Mutex
	lastSeq            uint64
	gaps, dups, errors int
	levels             []time.Time   // arrival of each level message
	levelC             chan struct{} // signalled on each level message
}

type serverMsg struct {
	Type      string `json:"type"`
	Seq       uint64 `json:"seq"`
	SessionID string `json:"session_id"`
}

func dial(ctx context.Context, server, lang string) (*client, error) {
	url := "ws" + strings.TrimPrefix(server, "http") + "/ws"
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, url, nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(1 << 20)
	hello := map[string]any{"type": "hello", "v": 1, "profile": map[string]any{"lang": lang, "seniority": "mid"}}
	if err := wsjson.Write(dctx, ws, hello); err != nil {
		ws.CloseNow()
		return nil, err
	}
	var w serverMsg
	if err := wsjson.Read(dctx, ws, &w); err != nil || w.Type != "welcome" {
		ws.CloseNow()
		return nil, errors.Join(errors.New("no welcome"), err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	c := &client{id: w.SessionID, ws: ws, cancel: rcancel, levelC: make(chan struct{}, 1)}
	c.wg.Go(func() { c.readLoop(rctx) })
	c.wg.Go(func() { c.pingLoop(rctx) })
	return c, nil
}

func (c *client) readLoop(ctx context.Context) {
	for {
		var m serverMsg
		if err := wsjson.Read(ctx, c.ws, &m); err != nil {
			return
		}
		now := time.Now()
		c.mu.Lock()
		switch {
		case m.Seq == c.lastSeq+1:
			c.lastSeq = m.Seq
		case m.Seq <= c.lastSeq:
			c.dups++
		default:
			c.gaps++
			c.lastSeq = m.Seq
		}
		if m.Type == "error" {
			c.errors++
		}
		if m.Type == "level" {
			c.levels = append(c.levels, now)
			select {
			case c.levelC <- struct{}{}:
			default:
			}
		}
		c.mu.Unlock()
	}
}

func (c *client) pingLoop(ctx context.Context) {
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			wsjson.Write(wctx, c.ws, map[string]any{"type": "ping", "t": now.UnixMilli()})
			cancel()
		}
	}
}

// waitLevel waits up to d for a level message that arrived after mark.
func (c *client) waitLevel(mark time.Time, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		if !c.firstLevelAfter(mark).IsZero() {
			return true
		}
		select {
		case <-c.levelC:
		case <-timer.C:
			return false
		}
	}
}

func (c *client) firstLevelAfter(mark time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.levels {
		if t.After(mark) {
			return t
		}
	}
	return time.Time{}
}

func (c *client) counts() (gaps, dups, errs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gaps, c.dups, c.errors
}

func (c *client) close() {
	c.ws.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	c.wg.Wait()
}
