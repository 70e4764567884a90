package session

import (
	"strings"
	"time"
)

// DefaultCoalesce is how long the answer deltas that follow a sent one are
// gathered into one message: the browser renders at 60 frames a second
// anyway, and each message costs an encode, a replay slot and a write.
const DefaultCoalesce = 50 * time.Millisecond

// coalescer gathers an answer's deltas into fewer answer_delta messages. A
// delta that comes window or more after the answer's last delta message
// goes out at once, so the first delta of an answer is never delayed;
// one that comes sooner waits, with any others, until window after that
// message, and they go out as one (with the delta that comes when they
// are due, if it comes before the timer). Whatever the session sends first
// (answer_end, a level change, a caption) flushes the waiting text ahead
// of it (Session.send), so the order of the text and of every other
// message is unchanged. Owned by run.
type coalescer struct {
	window time.Duration // <= 0: every delta goes out alone
	gen    uint64        // the question whose deltas these are
	id     string        // its wire id
	last   time.Time     // when its last delta message went out; zero before the first
	text   strings.Builder
	timer  *time.Timer // made on the first wait; armed while text waits
}

// maxCoalesced bounds the text gathered into one message: a burst of
// deltas (a template answer, a replayed prefill) goes out in pieces of
// about this size rather than as one message a client's read limit refuses.
const maxCoalesced = 2048 // bytes

// add takes one delta of question gen (wire id id) at now and returns the
// text to send now, if any ("" means it waits for due).
func (c *coalescer) add(gen uint64, id, text string, now time.Time) string {
	if gen != c.gen {
		c.gen, c.id, c.last = gen, id, time.Time{}
	}
	waiting := c.text.Len() > 0
	if !waiting && (c.window <= 0 || c.last.IsZero() || now.Sub(c.last) >= c.window) {
		c.last = now
		return text
	}
	c.text.WriteString(text)
	if c.text.Len() >= maxCoalesced || now.Sub(c.last) >= c.window { // full, or due already: no timer wake-up
		_, all, _ := c.take(now)
		return all
	}
	if !waiting {
		c.arm(c.window - now.Sub(c.last))
	}
	return ""
}

func (c *coalescer) arm(d time.Duration) {
	if c.timer == nil {
		c.timer = time.NewTimer(d)
		return
	}
	c.timer.Reset(d)
}

// due fires when waiting text should go out (take); nil while none waits.
func (c *coalescer) due() <-chan time.Time {
	if c.text.Len() == 0 || c.timer == nil {
		return nil
	}
	return c.timer.C
}

// take returns the waiting text and its question's wire id, and empties
// it; ok is false when nothing waits.
func (c *coalescer) take(now time.Time) (id, text string, ok bool) {
	if c.text.Len() == 0 {
		return "", "", false
	}
	text = c.text.String()
	c.text.Reset()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.last = now
	return c.id, text, true
}

// stop releases the timer. Run only, when the session ends.
func (c *coalescer) stop() {
	if c.timer != nil {
		c.timer.Stop()
	}
}

// sendDelta sends an answer's delta now or gathers it (coalescer).
func (s *Session) sendDelta(q *question, text string) {
	if s.deltas.gen != q.gen {
		s.flushDelta() // an earlier answer's text never takes this one's id (its answer_start flushed it already)
	}
	if now := s.deltas.add(q.gen, q.id, text, time.Now()); now != "" {
		s.emit(&answerDeltaMsg{head: head{Type: "answer_delta"}, ID: q.id, Text: now})
	}
}

// flushDelta sends the gathered delta text, if any, as one answer_delta.
func (s *Session) flushDelta() {
	if id, text, ok := s.deltas.take(time.Now()); ok {
		s.emit(&answerDeltaMsg{head: head{Type: "answer_delta"}, ID: id, Text: text})
	}
}
