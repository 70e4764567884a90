package session

import (
	"container/list"
	"sync"
)

// lobby bounds the connections that have not said hello yet, in all and
// per client address. Such a socket costs a file descriptor, two
// goroutines and its buffers while it waits (up to handshakeTimeout), and
// a client that opens them in a loop would otherwise hold as many as it
// likes, until real hellos find the process at its file limit. A
// connection over a bound sheds the oldest waiting one (of its address,
// or of all): the newest are the likeliest to be real, and a real page
// says hello within milliseconds. Shedding closes the socket at once,
// which ends its handshake read. Safe for concurrent use; nothing under
// its lock waits.
type lobby struct {
	max, perAddr int

	mu     sync.Mutex
	all    list.List             // of *waiting, oldest first
	byAddr map[string]*list.List // of *waiting, oldest first
}

type waiting struct {
	c         *conn
	addr      string
	all, mine *list.Element
}

func newLobby(max, perAddr int) *lobby {
	return &lobby{max: max, perAddr: perAddr, byAddr: map[string]*list.List{}}
}

// enter admits c from addr, shedding the oldest waiting connections over
// the bounds, and returns leave, which removes c once it said hello or
// ended (idempotent).
func (l *lobby) enter(c *conn, addr string) (leave func()) {
	w := &waiting{c: c, addr: addr}
	var shed []*conn
	l.mu.Lock()
	for mine := l.byAddr[addr]; mine != nil && mine.Len() >= l.perAddr; mine = l.byAddr[addr] {
		shed = append(shed, l.remove(mine.Front().Value.(*waiting)))
	}
	for l.all.Len() >= l.max {
		shed = append(shed, l.remove(l.all.Front().Value.(*waiting)))
	}
	mine := l.byAddr[addr]
	if mine == nil {
		mine = list.New()
		l.byAddr[addr] = mine
	}
	w.all, w.mine = l.all.PushBack(w), mine.PushBack(w)
	l.mu.Unlock()
	for _, old := range shed {
		old.ws.CloseNow()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if w.all != nil {
				l.remove(w)
			}
			l.mu.Unlock()
		})
	}
}

// remove takes w out of both lists. Called with mu held.
func (l *lobby) remove(w *waiting) *conn {
	l.all.Remove(w.all)
	w.all = nil
	mine := l.byAddr[w.addr]
	mine.Remove(w.mine)
	if mine.Len() == 0 {
		delete(l.byAddr, w.addr)
	}
	return w.c
}

// len is the number of connections waiting for hello.
func (l *lobby) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.Len()
}

// count is the number of connections from addr waiting for hello.
func (l *lobby) count(addr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if mine := l.byAddr[addr]; mine != nil {
		return mine.Len()
	}
	return 0
}
