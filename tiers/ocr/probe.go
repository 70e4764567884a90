package ocr

import (
	_ "embed"
	"fmt"
	"strings"
	"time"

	"context"
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

// Probe is the health check of OCR: it reads probeImage with one
// tesseract process, past the pool's own down state, and fails unless
// the text is right. A pool whose workers are all busy passes: it is
// reading. Its result is the health center's: the pool's own health
// counts live reads only. Give it ProbeTimeout.
func (p *Pool) Probe(ctx context.Context) error {
	if p.path == "" {
		return fmt.Errorf("%w: %s not found", ErrUnavailable, p.cfg.Command)
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
	return err
}
