package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// Backends the simulators play; one vendorsim process each, as real
// vendors are separate hosts.
const (
	simVendorA = "vendor-a"
	simVendorB = "vendor-b"
	simLocal   = "local"
	simWhisper = "whisper"
	simSTT     = "stt" // the optional cloud speech-to-text
)

// Models the configuration asks each backend for.
const (
	modelA     = "gpt-4o-mini"
	modelB     = "gpt-4o"
	modelLocal = "qwen2.5-7b-instruct"
	modelSTT   = "gpt-4o-mini-transcribe"
)

const httpTimeout = 10 * time.Second // one control request

// simSpec is how one simulator is started.
type simSpec struct {
	name string
	args []string
}

// sim is a running vendorsim.
type sim struct {
	p   *proc
	url string
}

// bins are the binaries under test.
type bins struct{ poise, vendorsim string }

// startSims starts one vendorsim per spec. On error it stops those it
// started.
func startSims(ctx context.Context, b bins, dir string, specs []simSpec) (map[string]*sim, error) {
	sims := map[string]*sim{}
	for _, s := range specs {
		args := append([]string{"-addr", "127.0.0.1:0", "-log-level", "warn"}, s.args...)
		p, url, err := startProc(ctx, dir, "sim-"+s.name, b.vendorsim, args, func(line string) (string, bool) {
			u, ok := strings.CutPrefix(line, "vendorsim listening on ")
			return u, ok
		})
		if err != nil {
			stopSims(sims)
			return nil, err
		}
		sims[s.name] = &sim{p: p, url: url}
	}
	return sims, nil
}

func stopSims(sims map[string]*sim) {
	for _, s := range sims {
		s.p.stop()
	}
}

// setFault sets model's fault on the simulator ("*": every model).
func (s *sim) setFault(ctx context.Context, model string, f vendorsim.Fault) error {
	return call(ctx, http.MethodPost, s.url+"/_sim/faults", vendorsim.FaultCommand{Model: model, Fault: f}, nil)
}

// clear removes every fault.
func (s *sim) clear(ctx context.Context) error {
	return call(ctx, http.MethodDelete, s.url+"/_sim/faults", nil, nil)
}

// reset clears faults and counters.
func (s *sim) reset(ctx context.Context) error {
	return call(ctx, http.MethodPost, s.url+"/_sim/reset", nil, nil)
}

// call sends body as JSON and decodes a 2xx answer into out (if not nil).
func call(ctx context.Context, method, url string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("chaos: %s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("chaos: %s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(msg))
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// redisProc is a redis-server on a fixed port, so that it can be
// restarted where the nodes expect it.
type redisProc struct {
	p    *proc
	port int
	dir  string
}

func startRedis(ctx context.Context, dir string) (*redisProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &redisProc{port: port, dir: dir}
	return r, r.start(ctx)
}

func (r *redisProc) start(ctx context.Context) error {
	bin, err := lookRedis()
	if err != nil {
		return err
	}
	args := []string{"--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.dir}
	p, _, err := startProc(ctx, r.dir, fmt.Sprintf("redis-%d", time.Now().UnixMilli()), bin, args, func(line string) (string, bool) {
		return "", strings.Contains(line, "Ready to accept connections")
	})
	r.p = p
	return err
}

func (r *redisProc) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// lookRedis finds redis-server; the suite's Redis scenarios need it.
func lookRedis() (string, error) {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("chaos: redis-server is needed by the Redis scenarios (apt-get install redis-server): %w", err)
	}
	return p, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
