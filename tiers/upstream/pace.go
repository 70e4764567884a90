package upstream

import (
	"context"
	"io"
	"time"
)

// pacedBody reads a stream's body at most once per pace while it is
// armed: the tokens a server sends in between wait in the socket, and one
// read takes them all, instead of one read, one wake-up and one hop to the
// session per token. Stream arms it at the first content (which is never
// delayed) and disarms it at the finish (the [DONE] that follows is not
// waited for). A wait ends early when ctx is done; the read then returns
// ctx's cause. Owned by one stream call.
type pacedBody struct {
	r     io.Reader
	ctx   context.Context
	pace  time.Duration
	armed bool
	next  time.Time   // the earliest next read while armed
	timer *time.Timer // made on the first wait
}

// arm and disarm start and end the pacing; a nil pacedBody (no pace) is
// never armed.
func (p *pacedBody) arm() {
	if p != nil {
		p.armed = true
	}
}

func (p *pacedBody) disarm() {
	if p != nil {
		p.armed = false
	}
}

func (p *pacedBody) Read(b []byte) (int, error) {
	if p.armed {
		if err := p.wait(); err != nil {
			return 0, err
		}
	}
	n, err := p.r.Read(b)
	p.next = time.Now().Add(p.pace)
	return n, err
}

// wait blocks until next, or until ctx is done.
func (p *pacedBody) wait() error {
	d := time.Until(p.next)
	if d <= 0 {
		return nil
	}
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-p.timer.C:
		return nil
	case <-p.ctx.Done():
		p.timer.Stop()
		return context.Cause(p.ctx)
	}
}

// stop releases the timer.
func (p *pacedBody) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}
