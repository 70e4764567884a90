package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Bounds on child processes.
const (
	startTimeout = 30 * time.Second // until a child prints its address
	stopTimeout  = 12 * time.Second // after SIGTERM, before SIGKILL (poise gives clients 10 s)
)

// proc is one child process: a vendorsim, a poise node or redis-server.
// Its output goes to a log file; a copier goroutine, owned by the proc,
// drains stdout after the address line.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    *os.File
	copied sync.WaitGroup // the stdout copier
	exited chan struct{}  // closed when the process has been waited for
}

// startProc starts bin with args, logging to dir/name.log, and returns
// once addrOf recognises the address in a line of its stdout.
func startProc(ctx context.Context, dir, name, bin string, args []string, addrOf func(line string) (string, bool)) (*proc, string, error) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, "", fmt.Errorf("chaos: %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the suite
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Close()
		return nil, "", fmt.Errorf("chaos: %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, "", fmt.Errorf("chaos: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: log, exited: make(chan struct{})}
	addr := make(chan string, 1)
	p.copied.Go(func() { p.copy(out, addrOf, addr) })
	go func() { // owned by the proc: ends when the process exits, which stop and kill force
		p.copied.Wait()
		cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	select {
	case a, ok := <-addr:
		if ok {
			return p, a, nil
		}
		return nil, "", fmt.Errorf("chaos: %s exited before printing its address (see %s)", name, log.Name())
	case <-time.After(startTimeout):
	case <-ctx.Done():
	}
	p.kill()
	return nil, "", fmt.Errorf("chaos: %s printed no address within %v (see %s)", name, startTimeout, log.Name())
}

// copy writes the child's stdout to its log, sending the address once.
func (p *proc) copy(out io.Reader, addrOf func(string) (string, bool), addr chan<- string) {
	defer close(addr)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	found := false
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(p.log, line)
		if !found {
			if a, ok := addrOf(line); ok {
				found = true
				addr <- a
			}
		}
	}
	io.Copy(p.log, out) // after a too-long line
}

// stop asks the process to end (SIGTERM) and kills it after stopTimeout.
func (p *proc) stop() error {
	if p == nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopTimeout):
		p.kill()
		return fmt.Errorf("chaos: %s ignored SIGTERM for %v", p.name, stopTimeout)
	}
}

// kill ends the process at once (SIGKILL) and waits for it.
func (p *proc) kill() {
	if p == nil {
		return
	}
	p.cmd.Process.Kill()
	<-p.exited
}
