package session

import (
	"bufio"
	"net"
	"net/http"
)

// Buffers of an upgraded connection. net/http hands a hijacked connection
// its 4 KiB read and 4 KiB write buffers, which a session would keep for
// as long as its socket lives, idle or not. A client's text message (a
// heartbeat, a typed question) comes in with one read, and an answer
// delta (a few hundred bytes) goes out with one write. An audio frame
// (100 ms, 3.2 KiB with its header) takes two reads at 512 bytes as at
// 1.5 KiB (counted: the buffer's fill, then the rest straight into the
// message buffer; one only at 4 KiB), so the read buffer is no larger
// than a text message needs (docs/benchmarks.md, "Idle sessions").
const (
	upgradedReadBuffer  = 512
	upgradedWriteBuffer = 1 << 10
)

// slimUpgrade is the ResponseWriter the WebSocket upgrade sees: its Hijack
// hands the connection on with smaller buffers than net/http's. The read
// buffer is only replaced when it holds nothing yet (a client that sent
// before the 101 keeps net/http's, with its bytes).
type slimUpgrade struct{ http.ResponseWriter }

// Hijack implements http.Hijacker.
func (w slimUpgrade) Hijack() (net.Conn, *bufio.ReadWriter, error) {
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
		r = bufio.NewReaderSize(nc, upgradedReadBuffer)
	}
	return nc, bufio.NewReadWriter(r, bufio.NewWriterSize(nc, upgradedWriteBuffer)), nil
}
