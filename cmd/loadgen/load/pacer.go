package load

import (
	"context"
	"sync"
	"time"
)

// shardSize is the most sessions one pacer drives.
const shardSize = 128

// pacer drives a shard of sessions from one ticker: every frameDuration
// it sends each session's due audio frames, typed question, heartbeat and
// audio_stop, so that a thousand sessions cost a few timer wake-ups per
// frame instead of one each. It owns its sessions and is the only writer
// of their connections, except for a session that is reconnecting: a
// goroutine of its own (waited for in away) owns that one until it hands
// it back on back.
type pacer struct {
	clients          []*client
	start, stop, end time.Time
	back             chan *client // reconnects done; buffered for every client, so a send never blocks
	away             sync.WaitGroup
	wctx             context.Context // bounds the writes of a tick (writeCtx)
	wcancel          context.CancelFunc
	wrenew           time.Time // when wctx is replaced
}

func newPacer(clients []*client, start, stop, end time.Time) *pacer {
	return &pacer{clients: clients, start: start, stop: stop, end: end, back: make(chan *client, len(clients))}
}

// run drives the sessions until end (or ctx is done), then closes their
// connections and waits for their readers and reconnects.
func (p *pacer) run(ctx context.Context) {
	defer p.close()
	for _, c := range p.clients {
		c.begin(p.start)
	}
	t := time.NewTicker(frameDuration)
	defer t.Stop()
	endAt := time.NewTimer(time.Until(p.end))
	defer endAt.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-endAt.C:
			return
		case c := <-p.back:
			p.returned(c)
		case now := <-t.C:
			p.tick(ctx, now)
		}
	}
}

// tick sends what each session has due at now and starts a reconnect
// for each that lost its connection.
func (p *pacer) tick(ctx context.Context, now time.Time) {
	wctx := p.writeCtx(ctx, now)
	for _, c := range p.clients {
		if c.away || c.gone {
			continue
		}
		if c.tick(wctx, now, p.stop) {
			c.away = true
			p.away.Go(func() {
				if !c.reconnect(ctx, p.end) {
					c.gone = true
				}
				p.back <- c
			})
		}
	}
}

// returned takes a session back from its reconnect.
func (p *pacer) returned(c *client) {
	c.away = false
	if !c.gone {
		c.resumed(time.Now(), p.stop)
	}
}

// writeCtx bounds the writes of a tick by writeTimeout (and up to a
// second more): one context a second instead of one a write.
func (p *pacer) writeCtx(ctx context.Context, now time.Time) context.Context {
	if p.wctx == nil || now.After(p.wrenew) {
		if p.wcancel != nil {
			p.wcancel() // no write is in flight: this goroutine makes them all
		}
		p.wctx, p.wcancel = context.WithTimeout(ctx, writeTimeout+time.Second)
		p.wrenew = now.Add(time.Second)
	}
	return p.wctx
}

// close waits for the reconnects, then closes every connection and waits
// for its reader.
func (p *pacer) close() {
	p.away.Wait()
	for range len(p.back) {
		p.returned(<-p.back)
	}
	for _, c := range p.clients {
		c.closeConn()
	}
	if p.wcancel != nil {
		p.wcancel()
	}
}
