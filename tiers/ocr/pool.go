package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Backend names OCR in health records, metrics and logs.
const Backend = "ocr"

// Sentinel errors of Read.
var (
	// ErrBusy: every worker is busy and the queue is full; not a failure
	// of OCR, the caller goes on without the text.
	ErrBusy = errors.New("ocr: every worker busy and the queue full")
	// ErrUnavailable: OCR failed twice in a row and is skipped for a
	// while, or is disabled.
	ErrUnavailable = errors.New("ocr: unavailable")
	// ErrClosed: the pool is closed.
	ErrClosed = errors.New("ocr: pool closed")
)

// failsToDown consecutive failures take OCR out for Config.RetryMS.
const failsToDown = 2

// waitDelay bounds the wait for a killed tesseract's pipes to close.
const waitDelay = time.Second

// Pool runs tesseract, at most Config.Workers processes at once with at
// most Config.QueueDepth images waiting; a read beyond that fails at once
// with ErrBusy, so a burst never builds a queue longer than the answer's
// budget. Each process is bounded by Config.TimeoutMS and killed when its
// read's ctx ends. Safe for concurrent use; Close waits for every
// process.
type Pool struct {
	cfg  Config
	log  zerolog.Logger
	m    *Metrics
	now  func() time.Time
	path string // the resolved command; "" when it was not found

	queue chan struct{} // one token per read admitted (running or waiting)
	slots chan struct{} // one token per running process

	ctx    context.Context // ends at Close: kills every process
	cancel context.CancelFunc
	wg     sync.WaitGroup // reads in flight

	mu        sync.Mutex
	closed    bool      // Guarded by mu.
	fails     int       // consecutive failures. Guarded by mu.
	downUntil time.Time // skipped until then. Guarded by mu.

	lastPass atomic.Int64 // unix ns of the last passing probe (probe.go)
}

// New returns a pool for cfg (zero fields take their defaults). A command
// that is not on PATH is logged; every read then fails (and the probe
// says why). m may be nil.
func New(cfg Config, log zerolog.Logger, m *Metrics) *Pool {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{cfg: cfg, log: log, m: m, now: time.Now, ctx: ctx, cancel: cancel,
		queue: make(chan struct{}, cfg.Workers+cfg.QueueDepth), slots: make(chan struct{}, cfg.Workers)}
	if !cfg.Disabled {
		path, err := exec.LookPath(cfg.Command)
		if err != nil {
			log.Warn().Err(err).Str("command", cfg.Command).Msg("ocr: tesseract not found; screenshot questions need the vision model (install tesseract-ocr, tesseract-ocr-eng, tesseract-ocr-chi-sim)")
		}
		p.path = path
	}
	m.setUp(p.path != "")
	return p
}

// Close kills the running processes, fails the waiting reads with
// ErrClosed and waits for every read to return.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
}

// Read returns the text of img (PNG or JPEG, within Check's limits) in
// lang ("zh": Simplified Chinese and English; anything else English). It
// blocks until the text, a failure, ctx's end or Close; a read that finds
// the queue full returns ErrBusy at once.
func (p *Pool) Read(ctx context.Context, img []byte, lang string) (string, error) {
	if !p.admit() {
		return "", ErrClosed
	}
	defer p.wg.Done()
	if err := p.available(); err != nil {
		p.m.request(resultUnavailable)
		return "", err
	}
	select {
	case p.queue <- struct{}{}:
	default:
		p.m.request(resultBusy)
		return "", ErrBusy
	}
	defer func() { <-p.queue }()
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-p.ctx.Done():
		return "", ErrClosed
	}
	defer func() { <-p.slots }()
	start := time.Now()
	text, err := p.run(ctx, img, lang)
	if ctx.Err() != nil {
		p.m.request(resultCancelled) // the caller gave up: says nothing about OCR
		return "", ctx.Err()
	}
	p.observe(lang, time.Since(start), err)
	return text, err
}

// admit counts a read in, unless the pool is closed.
func (p *Pool) admit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Add(1)
	return true
}

// available reports why OCR may not be tried now, if it may not.
func (p *Pool) available() error {
	if p.path == "" {
		return fmt.Errorf("%w: %s not found", ErrUnavailable, p.cfg.Command)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.now().Before(p.downUntil) {
		return fmt.Errorf("%w: failing, retried after %v", ErrUnavailable, p.downUntil.Sub(p.now()).Round(time.Millisecond))
	}
	return nil
}

// run reads one image with one tesseract process: the prepared picture
// on stdin, the text on stdout. The process dies with ctx, the pool, or
// its timeout.
func (p *Pool) run(ctx context.Context, img []byte, lang string) (string, error) {
	pgm, err := prepare(img)
	if err != nil {
		return "", err
	}
	rctx, cancel := context.WithTimeout(ctx, ms(p.cfg.TimeoutMS))
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	cmd := exec.CommandContext(rctx, p.path, "stdin", "stdout", "-l", tessLang(lang), "--psm", "6")
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	cmd.Stdin = bytes.NewReader(pgm)
	cmd.WaitDelay = waitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case p.ctx.Err() != nil:
		return "", ErrClosed
	case rctx.Err() != nil:
		return "", fmt.Errorf("ocr: tesseract took over %d ms: %w", p.cfg.TimeoutMS, context.DeadlineExceeded)
	case err != nil:
		return "", fmt.Errorf("ocr: tesseract: %w: %s", err, clip(stderr.String(), 200))
	}
	return Clean(stdout.String()), nil
}

// tessLang is tesseract's -l for a profile language.
func tessLang(lang string) string {
	if lang == "zh" {
		return "chi_sim+eng"
	}
	return "eng"
}

// observe records one read: metrics, and the pool's own health (two
// failures in a row take it out for RetryMS). A cancelled read says
// nothing about OCR.
func (p *Pool) observe(lang string, took time.Duration, err error) {
	switch {
	case err == nil:
		p.m.request(resultOK)
		p.m.observe(tessLang(lang), took)
	case errors.Is(err, context.Canceled), errors.Is(err, ErrClosed):
		p.m.request(resultCancelled)
		return
	case errors.Is(err, ErrNotImage):
		p.m.request(resultBadImage)
		return // the client's image, not OCR's health
	case errors.Is(err, context.DeadlineExceeded):
		p.m.request(resultTimeout)
	default:
		p.m.request(resultError)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		if p.fails >= failsToDown {
			p.log.Info().Str("backend", Backend).Msg("ocr: up again")
			p.m.setUp(true)
		}
		p.fails, p.downUntil = 0, time.Time{}
		return
	}
	p.fails++
	if p.fails >= failsToDown {
		p.downUntil = p.now().Add(ms(p.cfg.RetryMS))
		if p.fails == failsToDown {
			p.log.Warn().Err(err).Str("backend", Backend).Dur("retry", ms(p.cfg.RetryMS)).Msg("ocr: down")
			p.m.setUp(false)
		}
	}
}

// Clean tidies tesseract's text: trailing spaces and blank lines go, and
// the spaces tesseract puts between Chinese characters.
func Clean(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\f", ""), "\n")
	out := lines[:0]
	for _, l := range lines {
		l = strings.TrimRight(joinHan(l), " \t\r")
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// joinHan drops a space between two Han characters (or a Han character
// and CJK punctuation).
func joinHan(l string) string {
	if !strings.Contains(l, " ") {
		return l
	}
	r := []rune(l)
	var b strings.Builder
	for i, c := range r {
		if c == ' ' && i > 0 && i+1 < len(r) && wide(r[i-1]) && wide(r[i+1]) {
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// wide reports a CJK ideograph or full-width punctuation.
func wide(r rune) bool {
	return (r >= 0x4e00 && r <= 0x9fff) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
