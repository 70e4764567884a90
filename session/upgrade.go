package session

import (
	"bufio"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Buffers of an upgraded connection. net/http hands a hijacked connection
// its 4 KiB read and 4 KiB write buffers, which a session would keep for
// as long as its socket lives, idle or not. An audio frame (1.3 KiB, with
// its header) still comes in with one read, and an answer delta (a few
// hundred bytes) goes out with one write; a longer message goes straight
// through the buffer.
const (
	upgradedReadBuffer  = 1536
	upgradedWriteBuffer = 1 << 10
)

// slimUpgrade is the ResponseWriter the WebSocket upgrade sees: its Hijack
// hands the connection on with smaller buffers than net/http's, and with
// its reads paced while audio streams (reads). The read buffer is only
// replaced when it holds nothing yet (a client that sent before the 101
// keeps net/http's, with its bytes, and unpaced reads).
type slimUpgrade struct {
	http.ResponseWriter
	reads *pacedReads // set by Hijack; nil for a connection that kept net/http's reader
}

// Hijack implements http.Hijacker.
func (w *slimUpgrade) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	r := brw.Reader
	if r.Buffered() == 0 {
		w.reads = &pacedReads{Conn: nc}
		r = bufio.NewReaderSize(w.reads, upgradedReadBuffer)
	}
	return nc, bufio.NewReadWriter(r, bufio.NewWriterSize(nc, upgradedWriteBuffer)), nil
}

// audioReadPace is how often an upgraded connection is read while audio
// streams: a browser sends a frame every 40 ms, and a read every 100 ms
// takes two or three at once, for a few tens of milliseconds more on a
// caption that takes most of a second anyway.
const audioReadPace = 100 * time.Millisecond

// pacedReads is an upgraded connection's socket as its reader sees it.
// While audio streams (the reader says so with audio), a read that follows
// one that emptied the socket (a short read) first sleeps until
// audioReadPace after it: the frames that arrive meanwhile then come in
// one or two reads instead of a wake-up, a read and a failed read each. A
// text message waits at most as long. Read only by the connection's
// reader (coder/websocket's read lock orders every Read).
type pacedReads struct {
	net.Conn
	streaming atomic.Bool // the last message read was an audio frame
	drained   bool        // the last read was short
	next      time.Time   // after a short read: the earliest next read while streaming
}

// audio says whether audio streams: on after each audio frame, off after
// any other message.
func (p *pacedReads) audio(on bool) {
	if p != nil && p.streaming.Load() != on {
		p.streaming.Store(on)
	}
}

func (p *pacedReads) Read(b []byte) (int, error) {
	if p.drained && p.streaming.Load() {
		if d := time.Until(p.next); d > 0 {
			time.Sleep(d) // bounded by audioReadPace
		}
	}
	n, err := p.Conn.Read(b)
	if p.drained = n < len(b); p.drained {
		p.next = time.Now().Add(audioReadPace)
	}
	return n, err
}
