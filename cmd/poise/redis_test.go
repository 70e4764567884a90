package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/redistest"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/redis/go-redis/v9"
)

// ownRedis is a redis-server that a test starts, kills and restarts.
type ownRedis struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// startOwnRedis starts redis-server on a free port (no persistence). A
// missing redis-server skips the test, and fails it under CI=true.
func startOwnRedis(t *testing.T) *ownRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed; scripts/test installs it")
		}
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &ownRedis{t: t, port: ln.Addr().(*net.TCPAddr).Port}
	ln.Close()
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *ownRedis) url() string { return "redis://127.0.0.1:" + strconv.Itoa(r.port) }

func (r *ownRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("redis-server: %v", err)
	}
	r.done = make(chan struct{})
	go func() { r.cmd.Wait(); close(r.done) }()
	rdb := redistest.Dial(r.t, r.url())
	waitUntil(r.t, "redis-server answers", func() bool { return rdb.Ping(context.Background()).Err() == nil })
}

// signal sends sig to redis-server: SIGSTOP makes it hang (a slow Redis:
// connections stay open, nothing answers), SIGCONT brings it back.
func (r *ownRedis) signal(sig syscall.Signal) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatalf("signal redis-server: %v", err)
	}
}

// kill stops redis-server at once, as a crash would; safe to call twice.
func (r *ownRedis) kill() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
	r.cmd = nil
}

// waitUntil polls cond every 20 ms until it holds, failing after waitLimit.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", waitLimit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// poiseDB serializes the tests that use the package's test database
// (redistest.DBPoise): each empties it and reads its poise:* keys.
var poiseDB sync.Mutex

// poiseDBURL returns the URL of the package's test database, emptied; the
// test holds it until it ends.
func poiseDBURL(t *testing.T) string {
	t.Helper()
	poiseDB.Lock()
	t.Cleanup(poiseDB.Unlock)
	return redistest.URL(t, redistest.DBPoise)
}

// process is a command whose first stdout line names its address.
type process struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	addr string
	out  *syncBuffer
	done chan struct{}
}

var addrRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// startProcess runs bin args... and reads its address from its first
// stdout line. The process is killed when the test ends, if it still runs;
// its output is logged when the test failed.
func startProcess(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{t: t, name: name, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), "OPENAI_API_KEY=")
	p.cmd.Stderr = p.out
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	lines := bufio.NewReader(stdout)
	first, err := lines.ReadString('\n')
	p.out.Write([]byte(first))
	if p.addr = addrRE.FindString(first); p.addr == "" {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		t.Fatalf("%s: first line %q names no address (%v)\n%s", name, first, err, p.out)
	}
	go func() {
		io.Copy(p.out, lines)
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s output (tail):\n%s", name, tailLines(p.out.String(), 30))
		}
	})
	return p
}

// kill sends SIGKILL and waits; safe to call twice.
func (p *process) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// wsClient is a protocol client that checks seqs as they arrive.
type wsClient struct {
	t            *testing.T
	ws           *websocket.Conn
	last         uint64            // newest seq read
	firstContent time.Duration     // of the last ask: question to answer_start
	raw          map[uint64][]byte // every sequenced message read, by seq
}

type wsMsg struct {
	Type      string          `json:"type"`
	Seq       uint64          `json:"seq"`
	SessionID string          `json:"session_id"`
	Token     string          `json:"resume_token"`
	LastSeq   uint64          `json:"last_seq"`
	Resumed   bool            `json:"resumed"`
	Level     string          `json:"level"`
	From      string          `json:"from"`
	Reason    string          `json:"reason"`
	ID        string          `json:"id"`
	T         json.RawMessage `json:"t"`
	Code      string          `json:"code"`
	Message   string          `json:"message"`
}

func dialWS(t *testing.T, addr string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &wsClient{t: t, ws: ws, raw: map[uint64][]byte{}}
}

func (c *wsClient) send(v any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := wsjson.Write(ctx, c.ws, v); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next message; a sequenced one must carry the next seq.
func (c *wsClient) read() (wsMsg, []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("read (after seq %d): %v", c.last, err)
	}
	var m wsMsg
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("bad JSON %q: %v", b, err)
	}
	if m.Type == "error" {
		c.t.Fatalf("error message: %s", b)
	}
	if m.Type != "welcome" {
		if m.Seq != c.last+1 {
			c.t.Fatalf("got seq %d after %d (lost or doubled): %s", m.Seq, c.last, b)
		}
		c.last = m.Seq
		c.raw[m.Seq] = b
	}
	return m, b
}

// readUntil reads until a message for which stop is true.
func (c *wsClient) readUntil(stop func(wsMsg) bool) wsMsg {
	c.t.Helper()
	for {
		if m, _ := c.read(); stop(m) {
			return m
		}
	}
}

func (c *wsClient) hello(resume map[string]any) wsMsg {
	c.t.Helper()
	h := map[string]any{"type": "hello", "v": 1, "profile": map[string]any{"lang": "en", "seniority": "senior"}}
	if resume != nil {
		h["resume"] = resume
	}
	c.send(h)
	w, _ := c.read()
	if w.Type != "welcome" {
		c.t.Fatalf("got %s, want welcome", w.Type)
	}
	if resume != nil {
		c.last = uint64(resume["last_seq"].(uint64))
	}
	return w
}

// ask sends a question and reads until its answer ends, returning its
// answer_start. The sessions of these tests answer at L1 or L2, where
// every question gets an answer (a coach card may come first).
func (c *wsClient) ask(text string) wsMsg {
	c.t.Helper()
	c.send(map[string]any{"type": "question", "text": text})
	asked := time.Now()
	var start wsMsg
	c.readUntil(func(m wsMsg) bool {
		if m.Type == "answer_start" && start.Type == "" {
			start = m
			c.firstContent = time.Since(asked)
		}
		return m.Type == "answer_end" && m.ID == start.ID
	})
	return start
}

// clusterConfig is a node's config: Redis, one shared vendorsim as its L1
// vendor, L2 model and whisper server, fast health rounds.
func clusterConfig(t *testing.T, node, redisURL, sim string) string {
	t.Helper()
	cfg := fmt.Sprintf(`redis_url: %s
node: %s
resume_window_ms: 20000
health: {interval_ms: 200, recover_after: 1000}
l1:
  down_after: 2
  first_token_timeout_ms: 1000
  vendors:
    - {name: vendor, base_url: %s/v1, api_key: test, model: gpt-4o-mini}
l2: {name: local, base_url: %s/v1, model: qwen-local}
asr: {whisper_urls: [%s]}
`, redisURL, node, sim, sim, sim)
	path := filepath.Join(t.TempDir(), node+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cluster is two `poise serve` processes sharing the test Redis and one
// vendorsim process.
type cluster struct {
	redisURL string
	sim      string
	a, b     *process
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	url := poiseDBURL(t)
	poise, vendorsim := poiseBinary(t), commandBinary(t, "vendorsim")
	sim := startProcess(t, "vendorsim", vendorsim, "-addr", "127.0.0.1:0", "-log-level", "warn")
	c := &cluster{redisURL: url, sim: "http://" + sim.addr}
	c.a = startProcess(t, "node-a", poise, "serve", "-addr", "127.0.0.1:0", "-config", clusterConfig(t, "node-a", url, c.sim))
	c.b = startProcess(t, "node-b", poise, "serve", "-addr", "127.0.0.1:0", "-config", clusterConfig(t, "node-b", url, c.sim))
	waitServing(t, c.a.addr) // a dial before the node is built waits in the kernel's queue, past a dial's limit on a busy machine
	waitServing(t, c.b.addr)
	return c
}

func (c *cluster) simFault(t *testing.T, model string, fault map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": model, "fault": fault})
	resp, err := http.Post(c.sim+"/_sim/faults", "application/json", bytes.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("set fault: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestTwoNodesShareHealth: the vendor's completions fail; node A's
// questions open its circuit (L1 down), and node B's session, which
// asked nothing, moves to L2 and answers its next question there.
func TestTwoNodesShareHealth(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	onB := dialWS(t, c.b.addr)
	wB := onB.hello(nil)
	if wB.Level != "L1" {
		t.Fatalf("B's session starts at %s, want L1", wB.Level)
	}
	rdb := redistest.Dial(t, c.redisURL)
	// The limits count in Redis too: B's session is held in its subject's set.
	waitUntil(t, "B's session held in poise:limit:sessions:*", func() bool {
		return rdb.ZScore(t.Context(), "poise:limit:sessions:anon:"+wB.SessionID, wB.SessionID).Err() == nil
	})
	onA := dialWS(t, c.a.addr)
	onA.hello(nil)
	c.simFault(t, "gpt-4o-mini", map[string]any{"status": 503})
	for i := range 2 { // l1.down_after
		if start := onA.ask(fmt.Sprintf("What is your biggest weakness, take %d?", i)); start.Level != "L2" {
			t.Fatalf("A's answer %d came from %s, want L2 (L1 fails)", i, start.Level)
		}
	}
	lv := onB.readUntil(func(m wsMsg) bool { return m.Type == "level" })
	if lv.Level != "L2" || lv.From != "L1" || lv.Reason != "vendor_all_down" {
		t.Fatalf("B's level message: %+v, want L1 → L2 (vendor_all_down)", lv)
	}
	if start := onB.ask("Why do you want to work here?"); start.Level != "L2" {
		t.Fatalf("B's answer came from %s, want L2", start.Level)
	}
	rec := rdb.HGetAll(t.Context(), "poise:health:vendor").Val()
	if rec["state"] != "down" || rec["circuit"] == "closed" || rec["circuit"] == "" {
		t.Fatalf("poise:health:vendor = %v, want state down and the circuit not closed", rec)
	}
}

// TestResumeOnOtherNodeAfterKill: node A is killed (SIGKILL) after its
// client read part of what A sent; the client resumes on node B and gets
// the rest exactly once, byte for byte, then B's live stream with the seqs
// and question ids continuing.
func TestResumeOnOtherNodeAfterKill(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	onA := dialWS(t, c.a.addr)
	w := onA.hello(nil)
	onA.ask("Tell me about yourself.")
	onA.ask("Describe a conflict with a teammate.")
	last := onA.last
	rdb := redistest.Dial(t, c.redisURL)
	waitUntil(t, "A's messages in Redis", func() bool {
		tail := rdb.LIndex(context.Background(), "poise:replay:{"+w.SessionID+"}", -1).Val()
		return strings.HasPrefix(tail, strconv.FormatUint(last, 10)+" ")
	})
	c.a.kill()

	const unread = 5 // the client had not processed A's last 5 messages
	onB := dialWS(t, c.b.addr)
	rw := onB.hello(map[string]any{"session_id": w.SessionID, "token": w.Token, "last_seq": last - unread})
	if !rw.Resumed || rw.SessionID != w.SessionID || rw.LastSeq != last {
		t.Fatalf("resume on B: %+v, want resumed with last_seq %d", rw, last)
	}
	for seq := last - unread + 1; seq <= last; seq++ {
		_, b := onB.read()
		if !bytes.Equal(b, onA.raw[seq]) {
			t.Fatalf("replayed seq %d = %s, A sent %s", seq, b, onA.raw[seq])
		}
	}
	onB.send(map[string]any{"type": "ping", "t": "live"})
	m, _ := onB.read()
	next := last + 1
	if m.Type == "captions" { // B tells the caption chain's state after a resumed welcome
		if m.Seq != next {
			t.Fatalf("captions on B: %+v, want seq %d", m, next)
		}
		m, _ = onB.read()
		next++
	}
	if m.Type != "pong" || string(m.T) != `"live"` || m.Seq != next {
		t.Fatalf("live message on B: %+v, want the pong with seq %d", m, next)
	}
	if start := onB.ask("What are your strengths?"); start.ID != "q3" {
		t.Fatalf("B's first question id %q, want q3", start.ID)
	}
	if h := rdb.HGetAll(t.Context(), "poise:session:"+w.SessionID).Val(); h["node"] != "node-b" || h["connected"] != "1" {
		t.Fatalf("session hash after the resume: %v, want node-b connected", h)
	}
}

// opsOutput runs `poise ops args...` in-process and returns its output.
func opsOutput(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := run(ctx, append([]string{"ops"}, args...), noEnv, &out, io.Discard); err != nil {
		t.Fatalf("poise ops %v: %v", args, err)
	}
	return out.String()
}

func demoFault(t *testing.T, addr, fault string, on bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"fault": fault, "on": on})
	resp, err := http.Post("http://"+addr+"/ops/api/demo/faults", "application/json", bytes.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("demo fault %s: %v %v", fault, resp, err)
	}
	resp.Body.Close()
}

func writeConfig(t *testing.T, cfg string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "poise.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRedisOutage: Redis hangs, then is killed, while a session runs. The
// session keeps answering, still changes level (health falls back to
// local state), the failed writes are counted, and after Redis restarts
// empty the ops view shows the session at its current level again without
// any new change.
func TestRedisOutage(t *testing.T) {
	t.Parallel()
	r := startOwnRedis(t)
	cfg := writeConfig(t, fmt.Sprintf("redis_url: %s\nnode: solo\nresume_window_ms: 2000\nhealth: {interval_ms: 200}\n", r.url()))
	addr := startServer(t, noEnv, "-demo", "-config", cfg)
	c := dialWS(t, addr)
	c.hello(nil)
	if start := c.ask("Tell me about yourself."); start.Level != "L1" {
		t.Fatalf("answer from %s, want L1", start.Level)
	}
	t.Logf("answer with Redis up: first content after %v", c.firstContent.Round(time.Millisecond))
	waitUntil(t, "ops view lists the session at L1", func() bool {
		return strings.Contains(opsOutput(t, "levels", "-redis", r.url()), "L1  1\n")
	})

	r.signal(syscall.SIGSTOP) // hung: every Redis call waits for its timeout
	for i := range 2 {
		start := c.ask(fmt.Sprintf("What is your biggest achievement, part %d?", i))
		t.Logf("answer %d with Redis hung: %s, first content after %v", i, start.Level, c.firstContent.Round(time.Millisecond))
	}
	c.send(map[string]any{"type": "ping", "t": "hung"})
	c.readUntil(func(m wsMsg) bool { return m.Type == "pong" })
	r.signal(syscall.SIGCONT)

	r.kill()
	for i := range 3 {
		start := c.ask(fmt.Sprintf("What motivates you, part %d?", i))
		t.Logf("answer %d with Redis down: %s, first content after %v", i, start.Level, c.firstContent.Round(time.Millisecond))
	}
	demoFault(t, addr, faultL1Down, true)
	if lv := c.readUntil(func(m wsMsg) bool { return m.Type == "level" }); lv.Level != "L2" {
		t.Fatalf("level with Redis down: %+v, want L2", lv)
	}
	if start := c.ask("Why should we hire you?"); start.Level != "L2" {
		t.Fatalf("answer from %s, want L2", start.Level)
	}
	metrics := scrape(t, addr)
	if v := metricValue(metrics, "poise_store_write_errors_total"); v < 1 {
		t.Fatalf("poise_store_write_errors_total = %v with Redis down, want > 0", v)
	}
	if v := metricValue(metrics, "poise_e2e_user_visible_errors_total"); v != 0 {
		t.Fatalf("poise_e2e_user_visible_errors_total = %v, want 0", v)
	}

	r.start() // empty: no persistence
	waitUntil(t, "ops view catches up: the session at L2", func() bool {
		out := opsOutput(t, "levels", "-redis", r.url())
		return strings.Contains(out, "1 live sessions") && strings.Contains(out, "L2  1\n")
	})
	c.send(map[string]any{"type": "ping", "t": 1})
	c.readUntil(func(m wsMsg) bool { return m.Type == "pong" })
}

// TestOpsWatchRedis: `poise ops watch -redis` prints each transition.
func TestOpsWatchRedis(t *testing.T) {
	t.Parallel()
	url := poiseDBURL(t)
	addr := startServer(t, noEnv, "-demo", "-config", writeConfig(t, "redis_url: "+url+"\nnode: watched\nhealth: {interval_ms: 200}\n"))
	c := dialWS(t, addr)
	w := c.hello(nil)

	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"ops", "watch", "-redis", url}, noEnv, out, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ops watch: %v", err)
		}
	}()
	// ops watch follows from the moment its first read reaches Redis, which
	// the test cannot see: switch the fault on and off until a transition
	// made after that moment is printed.
	for i := range 6 {
		demoFault(t, addr, faultL1Down, i%2 == 0)
		lv := c.readUntil(func(m wsMsg) bool { return m.Type == "level" })
		line := fmt.Sprintf("%s  %s → %s  (%s)  node=watched", w.SessionID, lv.From, lv.Level, lv.Reason)
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(out.String(), line) {
				return
			}
		}
	}
	t.Fatalf("ops watch printed no transition of session %s:\n%s", w.SessionID, out.String())
}

// TestRedisOptions: redis_url maps onto go-redis options for one server,
// Sentinel and Cluster, with fast-fail defaults.
func TestRedisOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url string
		check     func(*redis.UniversalOptions) bool
	}{
		{"one server", "redis://:pw@cache:6380/2", func(o *redis.UniversalOptions) bool {
			return len(o.Addrs) == 1 && o.Addrs[0] == "cache:6380" && o.Password == "pw" && o.DB == 2 &&
				o.MaxRetries == -1 && o.DialerRetries == 1 && o.ContextTimeoutEnabled && o.ReadTimeout == redisIOTimeout
		}},
		{"default port and TLS", "rediss://cache", func(o *redis.UniversalOptions) bool {
			return o.Addrs[0] == "cache:6379" && o.TLSConfig != nil
		}},
		{"sentinel", "redis://s1:26379/0?master_name=poise&addr=s2:26379&addr=s3", func(o *redis.UniversalOptions) bool {
			return o.MasterName == "poise" && strings.Join(o.Addrs, ",") == "s1:26379,s2:26379,s3:6379"
		}},
		{"cluster", "redis://n1:7000?cluster=true&read_timeout=1s", func(o *redis.UniversalOptions) bool {
			return o.IsClusterMode && o.ReadTimeout == time.Second && o.MasterName == ""
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := redisOptions(tc.url)
			if err != nil || !tc.check(o) {
				t.Fatalf("redisOptions(%q) = %+v, %v", tc.url, o, err)
			}
		})
	}
	for _, bad := range []string{"http://x", "redis://", "redis://h/x", "redis://h?pool=3", "redis://h?read_timeout=soon",
		"redis://:s3cret-pw@h:6379/0%zz", "redis://u:s3cret-pw@h:port"} {
		_, err := redisOptions(bad)
		if err == nil {
			t.Errorf("redisOptions(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("redisOptions(%q): the error %q shows the password", bad, err)
		}
	}
}
