package ocr

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"
)

// probeImage is a small screenshot that reads "Poise OCR probe 42"
// (rendered by ocrtest; TestProbeImage keeps it so).
//
//go:embed testdata/probe.png
var probeImage []byte

// ProbeTimeout bounds one probe: a tesseract process, started cold.
const ProbeTimeout = 5 * time.Second

// probeWant is what the probe must find in probeImage's text.
const probeWant = "42"

// probeReuse is how long a passing probe stands for the next ones: one
// tesseract run costs a few hundred milliseconds of CPU, and a health
// interval may be far shorter (the demo's, the tests'); a failing probe
// is always run again.
const probeReuse = 10 * time.Second

// Probe is the health check of OCR: it reads probeImage with one
// tesseract process, past the pool's own down state, and fails unless
// the text is right. A pool whose workers are all busy passes: it is
// reading. Its result is the health center's: the pool's own health
// counts live reads only. A pass stands for probeReuse. Give it
// ProbeTimeout.
func (p *Pool) Probe(ctx context.Context) error {
	if p.path == "" {
		return fmt.Errorf("%w: %s not found", ErrUnavailable, p.cfg.Command)
	}
	if last := p.lastPass.Load(); last != 0 && p.now().Sub(time.Unix(0, last)) < probeReuse {
		return nil
	}
	if !p.admit() {
		return ErrClosed
	}
	defer p.wg.Done()
	select {
	case p.slots <- struct{}{}:
	default:
		return nil
	}
	defer func() { <-p.slots }()
	text, err := p.run(ctx, probeImage, "en")
	if err == nil && !strings.Contains(text, probeWant) {
		err = fmt.Errorf("ocr: probe read %q, want %q in it", clip(text, 40), probeWant)
	}
	if err == nil {
		p.lastPass.Store(p.now().UnixNano())
	}
	return err
}
