package ocr

import (
	_ "embed"
	"fmt"
	"strings"

	"context"
)

// probeImage is a small screenshot that reads "Poise OCR probe 42"
// (rendered by ocrtest; TestProbeImage keeps it so).
//
//go:embed testdata/probe.png
var probeImage []byte

// probeWant is what the probe must find in probeImage's text.
const probeWant = "42"

// Probe is the health check of OCR: it reads probeImage with one
// tesseract process, past the pool's own down state (this is how it
// comes back), and fails unless the text is right. A pool whose workers
// are all busy passes: it is reading.
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
	p.observe("en", 0, err)
	return err
}
