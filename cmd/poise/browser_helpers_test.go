package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser end-to-end tests drive Debian's Chromium, headless, against
// the real poise binary. Everything here is for those tests.

const (
	chromiumPath   = "/usr/bin/chromium"
	browserWait    = 20 * time.Second // any one condition in the page: a bound on hangs, not on latency
	serverStopWait = 10 * time.Second // graceful stop after SIGTERM
	viewportW      = 1280             // px, screenshots
	viewportH      = 860
)

// browserEnv is what every browser subtest shares: the built binary, one
// Chromium, and where screenshots go.
type browserEnv struct {
	bin     string          // the poise binary, built once per package run
	browser context.Context // a chromedp context whose browser is running
	shots   string          // directory for PNG screenshots
}

// sharedOptions are what the package's one Chromium is started with: the
// fake microphone plays micWAV, and a getDisplayMedia picks the entire
// screen without asking (the screenshot test's fake capture).
func sharedOptions() ([]chromedp.ExecAllocatorOption, string, error) {
	wav, err := filepath.Abs(micWAV)
	if err != nil {
		return nil, "", err
	}
	return []chromedp.ExecAllocatorOption{
		chromedp.Flag("use-file-for-fake-audio-capture", wav),
		chromedp.Flag("auto-select-desktop-capture-source", "Entire screen"),
	}, wav, nil
}

// newBrowserEnv gives the test poise and Chromium: the package's one
// Chromium (started by the first test that asks, stopped by TestMain) when
// wav is "" or micWAV and there are no extra options; else a Chromium of
// its own, stopped when the test ends. Each tab is a browser context of
// its own (newTab), so tests sharing the browser share no storage and may
// run in parallel. Under CI=true a missing Chromium fails the test;
// elsewhere it skips.
func newBrowserEnv(t *testing.T, wav string, extra ...chromedp.ExecAllocatorOption) *browserEnv {
	t.Helper()
	needChromium(t)
	start := time.Now()
	env := &browserEnv{bin: poiseBinary(t), shots: os.Getenv("POISE_ARTIFACTS")}
	if env.shots == "" {
		env.shots = t.TempDir()
	}
	if err := os.MkdirAll(env.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	_, sharedWAV, err := sharedOptions()
	if err != nil {
		t.Fatal(err)
	}
	if abs, _ := filepath.Abs(wav); len(extra) == 0 && (wav == "" || abs == sharedWAV) {
		env.browser = shared.chromium(t)
	} else {
		env.browser = startChromium(t, t.TempDir(), wav, extra...)
	}
	t.Logf("poise and chromium ready after %v", time.Since(start).Round(time.Millisecond))
	return env
}

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (scripts/test installs Debian's chromium): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing; install it with: apt-get install -y chromium", chromiumPath)
	}
}

// startChromium starts a Chromium of the test's own, stopped when the test
// ends.
func startChromium(t *testing.T, profile, wav string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	var opts []chromedp.ExecAllocatorOption
	if wav != "" {
		opts = append(opts, chromedp.Flag("use-file-for-fake-audio-capture", wav))
	}
	browser, stop, err := launchChromium(profile, append(opts, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return browser
}

// launchChromium starts Chromium with the tests' flags and opts, its
// profile in dir; stop ends it and waits for it to exit.
func launchChromium(dir string, opts ...chromedp.ExecAllocatorOption) (context.Context, func(), error) {
	all := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(dir),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(all, opts...)...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	stop := func() {
		cancelBrowser()
		cancelAlloc() // waits for Chromium to exit
	}
	if err := chromedp.Do(browser); err != nil {
		stop()
		return nil, nil, fmt.Errorf("start chromium: %w", err)
	}
	return browser, stop, nil
}

// shared holds what the package's tests share: the binaries of the
// commands, each built once, and one Chromium, each made by the first test
// that needs it and ended by TestMain (closeShared).
var shared = sharedProcs{bins: map[string]*builtBin{}}

type sharedProcs struct {
	dirOnce sync.Once
	dir     string // temporary directory of the binaries and the profile
	dirErr  error

	mu   sync.Mutex           // guards bins
	bins map[string]*builtBin // by command name

	browserMu sync.Mutex      // guards the three below
	browser   context.Context // nil until started
	stop      func()          // ends the browser
	err       error           // a failed start, reported to every test that asks
}

// builtBin is one command's binary, built once.
type builtBin struct {
	once sync.Once
	path string
	err  error // a failed build, reported to every test that asks
}

func (s *sharedProcs) tempDir() (string, error) {
	s.dirOnce.Do(func() { s.dir, s.dirErr = os.MkdirTemp("", "poise-test-") })
	return s.dir, s.dirErr
}

// poiseBinary returns the poise binary, building it on first use.
func poiseBinary(t *testing.T) string {
	t.Helper()
	return commandBinary(t, "poise")
}

// commandBinary returns the binary of ./cmd/<name>, building it on first
// use (with -race when the test runs with it, so the build reuses the
// test's compiled packages).
func commandBinary(t *testing.T, name string) string {
	t.Helper()
	s := &shared
	s.mu.Lock()
	b := s.bins[name]
	if b == nil {
		b = &builtBin{}
		s.bins[name] = b
	}
	s.mu.Unlock()
	b.once.Do(func() {
		start := time.Now()
		dir, err := s.tempDir()
		if err == nil {
			b.path, err = buildCmd(filepath.Join(dir, name), name)
		}
		b.err = err
		t.Logf("built %s in %v", name, time.Since(start).Round(time.Millisecond))
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// chromium returns the shared browser, starting it on first use.
func (s *sharedProcs) chromium(t *testing.T) context.Context {
	t.Helper()
	s.browserMu.Lock()
	defer s.browserMu.Unlock()
	if s.browser == nil && s.err == nil {
		opts, _, err := sharedOptions()
		var dir string
		if err == nil {
			dir, err = s.tempDir()
		}
		if err == nil {
			s.browser, s.stop, err = launchChromium(filepath.Join(dir, "chromium"), opts...)
		}
		s.err = err
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.browser
}

// closeShared stops the shared Chromium and removes the binaries; TestMain
// calls it after the tests.
func closeShared() {
	s := &shared
	s.browserMu.Lock()
	if s.stop != nil {
		s.stop()
	}
	s.browserMu.Unlock()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// buildCmd builds ./cmd/<name> as bin.
func buildCmd(bin, name string) (string, error) {
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "../"+name)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgoSetting())
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", name, err, out)
	}
	return bin, nil
}

func cgoSetting() string {
	if raceEnabled {
		return "1"
	}
	if v := os.Getenv("CGO_ENABLED"); v != "" {
		return v
	}
	return "1"
}

// poiseServer is one running `poise serve` process.
type poiseServer struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	done chan error // receives Wait's result once
	logs *syncBuffer
}

// startPoise runs `poise serve -addr addr args...` and reads its address
// from the first JSON log line. addr "" means 127.0.0.1:0. The process is
// stopped when the test ends, if it still runs.
func (e *browserEnv) startPoise(t *testing.T, addr string, args ...string) *poiseServer {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	cmd := exec.Command(e.bin, append([]string{"serve", "-addr", addr}, args...)...)
	cmd.Env = withoutEnv(os.Environ(), "OPENAI_API_KEY")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &poiseServer{t: t, cmd: cmd, done: make(chan error, 1), logs: &syncBuffer{}}
	cmd.Stderr = s.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start poise: %v", err)
	}
	lines := bufio.NewReader(stdout)
	first, err := lines.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("poise printed no log line: %v\n%s", err, s.logs)
	}
	var head struct{ Addr string }
	if err := json.Unmarshal([]byte(first), &head); err != nil || head.Addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("first log line %q gives no addr: %v", first, err)
	}
	s.addr = head.Addr
	s.logs.Write([]byte(first))
	var line string
	next := func() bool {
		var err error
		line, err = lines.ReadString('\n')
		s.logs.Write([]byte(line))
		return err == nil
	}
	if err := awaitReady(next, func() string { return line }); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("poise on %s: %v\n%s", s.addr, err, s.logs)
	}
	go func() {
		io.Copy(s.logs, lines) // ends when the process closes stdout
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("poise %s log (tail):\n%s", s.addr, tail(s.logs.String(), 40))
		}
	})
	return s
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (s *poiseServer) url(path string) string { return "http://" + s.addr + path }

// stop sends SIGTERM and waits for a graceful exit, then kills. Safe to
// call twice.
func (s *poiseServer) stop() {
	if s.cmd.ProcessState != nil || s.done == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("poise exited with %v after SIGTERM\n%s", err, s.logs)
		}
	case <-time.After(serverStopWait):
		s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("poise did not stop within %v of SIGTERM", serverStopWait)
	}
	s.done = nil
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// tab is one page in its own browser context (its own storage), with the
// console errors and uncaught exceptions it produced.
type tab struct {
	t     *testing.T
	env   *browserEnv
	ctx   context.Context
	close context.CancelFunc // closes the tab (its target); safe to call twice

	mu       sync.Mutex
	problems []string // guarded by mu; filled by the listener
}

func (e *browserEnv) newTab(t *testing.T) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(e.browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tb := &tab{t: t, env: e, ctx: ctx, close: cancel}
	if err := chromedp.Listen(ctx, tb.onEvent); err != nil {
		t.Fatalf("listen: %v", err)
	}
	tb.do(chromedp.EmulateViewport(viewportW, viewportH))
	return tb
}

// onEvent runs on chromedp's reader goroutine: it only records.
func (tb *tab) onEvent(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			p = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		p = "exception: " + d.Text
		if d.Exception != nil {
			p += " " + d.Exception.Description
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			p = fmt.Sprintf("log %s: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
		}
	}
	if p != "" {
		tb.mu.Lock()
		tb.problems = append(tb.problems, p)
		tb.mu.Unlock()
	}
}

// consoleProblems returns what the page reported so far, keeping those
// that do not contain any of allowed.
func (tb *tab) consoleProblems(allowed ...string) []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var out []string
next:
	for _, p := range tb.problems {
		for _, a := range allowed {
			if strings.Contains(p, a) {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

func (tb *tab) requireClean(allowed ...string) {
	tb.t.Helper()
	if ps := tb.consoleProblems(allowed...); len(ps) > 0 {
		tb.t.Errorf("the page reported %d problem(s):\n%s", len(ps), strings.Join(ps, "\n"))
	}
}

func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("browser: %v", err)
	}
}

// js evaluates expr and decodes its value into T.
func js[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls expr in the page until it is truthy; what names the
// condition in the failure, which shows the page's state.
func (tb *tab) waitFor(what, expr string) {
	tb.t.Helper()
	tb.waitWithin(what, expr, browserWait)
}

// waitWithin is waitFor with its own bound d, for a condition that waits
// on the wall clock. A wait that took over half of d says so in the log,
// so that a margin grown thin shows before it fails.
func (tb *tab) waitWithin(what, expr string, d time.Duration) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, d+time.Second)
	defer cancel()
	start := time.Now()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(d)))
	if took := time.Since(start); took > d/2 {
		tb.t.Logf("waiting for %s took %v of its %v: a margin to watch", what, took.Round(time.Millisecond), d)
	}
	if err != nil {
		state, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`JSON.stringify({...document.body.dataset,
  status: document.getElementById('status')?.textContent,
  current: document.getElementById('current')?.innerText.slice(0, 600)})`))
		tb.t.Fatalf("waiting for %s (%s): %v\npage state: %s", what, expr, err, state)
	}
}

// shot saves a PNG of the viewport as name.png in the artifacts directory.
func (tb *tab) shot(name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(tb.env.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot %s", path)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
