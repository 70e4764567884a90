package ocr

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

// fakeTesseract writes a shell script that stands in for tesseract.
func fakeTesseract(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tesseract")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func shot(t *testing.T) []byte {
	t.Helper()
	img, err := ocrtest.PNG(probeShot)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestReadProbeAndMetrics(t *testing.T) {
	ocrtest.Need(t)
	reg := prometheus.NewPedanticRegistry()
	p := New(Config{TimeoutMS: 60000}, zerolog.Nop(), NewMetrics(reg))
	defer p.Close()
	if err := p.Probe(context.Background()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	text, err := p.Read(context.Background(), shot(t), "en")
	if err != nil || !strings.Contains(text, "probe 42") {
		t.Fatalf("Read = %q, %v; want the probe's text", text, err)
	}
	if n := testutil.ToFloat64(p.m.requests.WithLabelValues(resultOK)); n != 1 { // the probe is the health center's, not a read
		t.Errorf("ok reads = %v, want 1", n)
	}
	if testutil.ToFloat64(p.m.up) != 1 {
		t.Error("poise_ocr_up is not 1")
	}
}

func TestBadImage(t *testing.T) {
	p := New(Config{Command: fakeTesseract(t, "echo never")}, zerolog.Nop(), nil)
	defer p.Close()
	for i := 0; i < 3; i++ { // bad images never take OCR down
		if _, err := p.Read(context.Background(), []byte("not an image"), "en"); !errors.Is(err, ErrNotImage) {
			t.Fatalf("Read(garbage) = %v, want ErrNotImage", err)
		}
	}
	if err := p.available(); err != nil {
		t.Fatalf("after bad images: %v", err)
	}
}

func TestFailuresTakeItDown(t *testing.T) {
	p := New(Config{Command: fakeTesseract(t, "echo broken >&2; exit 3"), RetryMS: 60000}, zerolog.Nop(), nil)
	defer p.Close()
	img := shot(t)
	for i := 0; i < failsToDown; i++ {
		if _, err := p.Read(context.Background(), img, "en"); err == nil || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "broken") {
			t.Fatalf("read %d: %v, want tesseract's failure", i, err)
		}
	}
	if _, err := p.Read(context.Background(), img, "en"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("after %d failures: %v, want ErrUnavailable", failsToDown, err)
	}
	if err := p.Probe(context.Background()); err == nil {
		t.Fatal("the probe passed a broken tesseract")
	}
}

func TestTimeoutKills(t *testing.T) {
	p := New(Config{Command: fakeTesseract(t, "exec sleep 30"), TimeoutMS: 50}, zerolog.Nop(), nil)
	defer p.Close()
	start := time.Now()
	_, err := p.Read(context.Background(), shot(t), "en")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read = %v, want the timeout", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatalf("the timed-out process was not killed (took %v)", time.Since(start))
	}
}

// TestBusy fills the workers and the queue with reads of a tesseract that
// never answers: the next read fails at once with ErrBusy, and Close
// ends the others.
func TestBusy(t *testing.T) {
	p := New(Config{Command: fakeTesseract(t, "exec sleep 30"), Workers: 1, QueueDepth: 1, TimeoutMS: 60000}, zerolog.Nop(), nil)
	img := shot(t)
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() { _, err := p.Read(context.Background(), img, "en"); errs <- err }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(p.queue) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // waiting for the two reads to be admitted, not asserting time
	}
	if _, err := p.Read(context.Background(), img, "en"); !errors.Is(err, ErrBusy) {
		t.Fatalf("third read = %v, want ErrBusy", err)
	}
	p.Close()
	for i := 0; i < 2; i++ {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("read after Close = %v, want ErrClosed", err)
		}
	}
	if _, err := p.Read(context.Background(), img, "en"); !errors.Is(err, ErrClosed) {
		t.Errorf("read on a closed pool = %v, want ErrClosed", err)
	}
}

func TestNotInstalled(t *testing.T) {
	p := New(Config{Command: "/nonexistent/tesseract"}, zerolog.Nop(), nil)
	defer p.Close()
	if _, err := p.Read(context.Background(), shot(t), "en"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Read = %v, want ErrUnavailable", err)
	}
	if err := p.Probe(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Probe = %v, want ErrUnavailable", err)
	}
}

func TestCheck(t *testing.T) {
	img := shot(t)
	cases := map[string]struct {
		data []byte
		want error
	}{
		"png":       {img, nil},
		"empty":     {nil, ErrNotImage},
		"garbage":   {[]byte("GIF89a not really"), ErrNotImage},
		"truncated": {img[:20], ErrNotImage},
		"too big":   {make([]byte, MaxBytes+1), ErrTooLarge},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, _, err := Check(c.data)
			if !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
				t.Fatalf("Check = %v, want %v", err, c.want)
			}
		})
	}
}

func TestClean(t *testing.T) {
	got := Clean("给 定 一个 数组 nums\n\n  \nreturn [0, 1]   \n\f")
	if want := "给定一个数组 nums\nreturn [0, 1]"; got != want {
		t.Fatalf("Clean = %q, want %q", got, want)
	}
}
