package session

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUpgradeKeepsWhatCameBeforeTheSwitch sends the upgrade request and a
// hello frame in one write, before the 101 comes back: the bytes net/http
// had already read must reach the session (the read buffer is only made
// smaller when it holds nothing).
func TestUpgradeKeepsWhatCameBeforeTheSwitch(t *testing.T) {
	ts := newTestServer(t, Config{})
	nc, err := net.DialTimeout("tcp", ts.srv.Listener.Addr().String(), waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(waitLimit))
	hello, _ := json.Marshal(hello("en"))
	req := "GET /ws HTTP/1.1\r\nHost: " + ts.srv.Listener.Addr().String() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := nc.Write(append([]byte(req), maskedText(hello)...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %s", resp.Status)
	}
	payload := readServerFrame(t, br)
	if !strings.Contains(string(payload), `"type":"welcome"`) {
		t.Fatalf("first message %s, want the welcome", payload)
	}
}

// maskedText is one client text frame (masked, as RFC 6455 requires) of
// p, which must be under 126 bytes.
func maskedText(p []byte) []byte {
	key := [4]byte{1, 2, 3, 4}
	out := []byte{0x81, 0x80 | byte(len(p)), key[0], key[1], key[2], key[3]}
	for i, b := range p {
		out = append(out, b^key[i%4])
	}
	return out
}

// readServerFrame reads one unmasked server frame and returns its payload.
func readServerFrame(t *testing.T, br *bufio.Reader) []byte {
	t.Helper()
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		t.Fatal(err)
	}
	n := int(head[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			t.Fatal(err)
		}
		n = int(binary.BigEndian.Uint16(ext[:]))
	case 127:
		t.Fatal("a frame over 64 KiB")
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Fatal(err)
	}
	return p
}
