package main

import (
	"io"
	"net"
	"sync"
	"testing"
)

// cutProxy is a TCP proxy between the browser and poise that the test can
// cut: every connection closed and the port refusing, as when the
// candidate's network drops while the server stays up. It reopens on the
// same port.
type cutProxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener          // guarded by mu; nil while cut
	conns map[net.Conn]struct{} // guarded by mu
	wg    sync.WaitGroup        // accept loops and pipes
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	p := &cutProxy{t: t, target: target, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() {
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) url(path string) string { return "http://" + p.addr + path }

func (p *cutProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by cut
			}
			p.pipe(c)
		}
	})
}

// pipe copies both ways between c and a new connection to the target.
func (p *cutProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	for _, dir := range [][2]net.Conn{{c, up}, {up, c}} {
		p.wg.Go(func() {
			io.Copy(dir[0], dir[1])
			dir[0].Close()
			dir[1].Close()
			p.mu.Lock()
			delete(p.conns, dir[0])
			delete(p.conns, dir[1])
			p.mu.Unlock()
		})
	}
}

// cut closes the listener and every connection; connects are refused until
// reopen.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// reopen listens again on the same port.
func (p *cutProxy) reopen() {
	p.t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}
