package session

// replay keeps the newest sent messages of a session, so that a client that
// resumes with last_seq gets every later message exactly once. Owned by the
// session's run goroutine. The buffer grows on demand up to its capacity, so
// an idle session costs little.
type replay struct {
	buf   [][]byte // ring of encoded messages
	start int      // index in buf of the oldest message
	first uint64   // seq of the oldest message kept
	n     int
	cap   int
}

func newReplay(capacity int) *replay { return &replay{cap: capacity, first: 1} }

// add appends the message with the next seq (first+n).
func (r *replay) add(msg []byte) {
	if r.n < r.cap && r.n == len(r.buf) {
		r.buf = append(r.buf, msg)
		r.n++
		return
	}
	if r.n < r.cap {
		r.buf[(r.start+r.n)%len(r.buf)] = msg
		r.n++
		return
	}
	r.buf[r.start] = msg
	r.start = (r.start + 1) % len(r.buf)
	r.first++
}

// last returns the seq of the newest message, 0 if none was sent.
func (r *replay) last() uint64 { return r.first + uint64(r.n) - 1 }

// after returns the messages with seq > lastSeq, oldest first, and false if
// some of them are no longer kept.
func (r *replay) after(lastSeq uint64) ([][]byte, bool) {
	if lastSeq >= r.last() {
		return nil, true
	}
	if lastSeq+1 < r.first {
		return nil, false
	}
	skip := int(lastSeq + 1 - r.first)
	out := make([][]byte, 0, r.n-skip)
	for i := skip; i < r.n; i++ {
		out = append(out, r.buf[(r.start+i)%len(r.buf)])
	}
	return out, true
}
