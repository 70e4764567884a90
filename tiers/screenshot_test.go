package tiers

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/cmd/vendorsim/sim/simtest"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

const (
	modelVision = "vision-model"
	visionReply = "Approach: one pass with a hash map from value to index; O(n) time, O(n) space."
	ocrText     = "1. Two Sum. Given an array of integers nums and an integer target, return the indices of the two numbers that add up to target."
)

// fakeReader stands in for OCR (tiers/ocr is tested on real Tesseract on
// its own): it answers text after it is released, or fails.
type fakeReader struct {
	release   chan struct{} // closed: reads return; nil: at once
	err       error
	mu        sync.Mutex
	calls     int
	cancelled int
}

func (f *fakeReader) Read(ctx context.Context, img []byte, lang string) (string, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			f.mu.Lock()
			f.cancelled++
			f.mu.Unlock()
			return "", ctx.Err()
		}
	}
	if f.err != nil {
		return "", f.err
	}
	return ocrText, nil
}

func (f *fakeReader) counts() (calls, cancelled int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.cancelled
}

// screenshotRig is the engine rig with a vision model on its own host
// and a fake reader.
func screenshotRig(t *testing.T, reader Reader) (*rig, simtest.Host) {
	t.Helper()
	vision := newSimHost(t)
	vision.Sim.SetReply(modelVision, visionReply)
	r := newRig(t, func(c *Config) {
		c.L1.Vision = VisionConfig{FirstTokenMS: 1000}
		c.L1.Vision.BaseURL, c.L1.Vision.Model, c.L1.Vision.APIKey = vision.URL, modelVision, "sk-v"
	})
	r.engine.Close()
	// The vision model is probed as cmd/poise probes it: a backend of no
	// level, with a circuit of its own.
	probes := append(healthProbes(r.cfg), health.ListProbe("vision", NoLevel, vision.URL, "sk-v", upstream.NewHTTPClient()))
	r.health = health.New(healthConfig(r.cfg), probes, zerolog.New(r.logs), nil, health.WithClock(r.clock.Now))
	var opts []Option
	if reader != nil {
		opts = append(opts, WithReader(reader))
	}
	r.engine = NewEngine(r.cfg, r.health, r.tpl, zerolog.New(r.logs), nil, opts...)
	return r, vision
}

// askShot asks a screenshot question and returns its events, the Read
// events apart.
func askShot(t *testing.T, r *rig) (reads []string, a answer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	png, err := ocrtest.PNG(ocrtest.Shot{Text: ocrText, Font: ocrtest.SansFont, Size: 14, Scale: 1, Theme: ocrtest.Light})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{ID: "q1", Level: L1, Profile: Profile{Lang: "en"}, Image: &Image{Data: png, Format: "png"}}
	began := time.Now()
	r.engine.Answer(ctx, req, func(ev Event) {
		if ev.Kind == EventRead {
			if a.out.Answered {
				t.Errorf("Read after Start")
			}
			reads = append(reads, ev.Text)
			return
		}
		if ev.Kind == EventStart {
			a.out.Answered = true
		}
		a.events = append(a.events, ev)
	})
	a.took = time.Since(began)
	a.out = outcomeOf(a.events)
	checkShape(t, a, false)
	return reads, a
}

func TestScreenshotVision(t *testing.T) {
	fr := &fakeReader{release: make(chan struct{})}
	r, vision := screenshotRig(t, fr)
	_, a := askShot(t, r)
	if st := a.start(); st.Via != ViaVision || st.Source != "vision" || st.Level != L1 {
		t.Fatalf("Start %+v, want vision at L1", st)
	}
	if a.text() != visionReply || a.end().Reason != ReasonDone {
		t.Fatalf("answer %q (%s), want the vision reply, done", a.text(), a.end().Reason)
	}
	if c := vision.Sim.Counters(modelVision); c.Images != 1 {
		t.Fatalf("vision counters %+v, want the image", c)
	}
	if calls, cancelled := fr.counts(); calls != 1 || cancelled != 1 {
		t.Fatalf("OCR calls %d, cancelled %d: want one read, cancelled once vision answered", calls, cancelled)
	}
	if c := r.a.Sim.Counters(modelA); c.Requests != 0 {
		t.Fatalf("the text vendor was asked: %+v", c)
	}
}

// TestScreenshotVisionSlowOrDown: the OCR text is answered by the text
// vendor, with Via ocr, after a Read event, when the vision model misses
// its first-token budget or fails.
func TestScreenshotVisionSlowOrDown(t *testing.T) {
	for name, f := range map[string]vendorsim.Fault{
		"slow": {FirstTokenDelayMS: 5000},
		"down": {Status: 503},
	} {
		t.Run(name, func(t *testing.T) {
			r, vision := screenshotRig(t, &fakeReader{})
			vision.Sim.SetFault(modelVision, f)
			reads, a := askShot(t, r)
			if len(reads) != 1 || reads[0] != ocrText {
				t.Fatalf("reads %q, want the OCR text once", reads)
			}
			if st := a.start(); st.Via != ViaOCR || st.Source != "a" || st.Level != L1 {
				t.Fatalf("Start %+v, want vendor a at L1 via OCR", st)
			}
			if a.end().Reason != ReasonDone {
				t.Fatalf("end %q", a.end().Reason)
			}
		})
	}
}

// TestScreenshotNoVision: without a vision model, or with its circuit
// open, OCR answers at once.
func TestScreenshotCircuitOpen(t *testing.T) {
	r, vision := screenshotRig(t, &fakeReader{})
	vision.Sim.SetFault(modelVision, vendorsim.Fault{Status: 500})
	for i := 0; i < 3; i++ { // three live failures open the vision backend's circuit
		askShot(t, r)
	}
	if r.health.BackendUp("vision") {
		t.Fatal("vision is still up after three failures")
	}
	before := vision.Sim.Counters(modelVision).Requests
	_, a := askShot(t, r)
	if a.start().Via != ViaOCR {
		t.Fatalf("Start %+v, want via OCR", a.start())
	}
	if n := vision.Sim.Counters(modelVision).Requests; n != before {
		t.Fatalf("the open circuit's vision model was asked (%d → %d requests)", before, n)
	}
}

// TestScreenshotNothingWorks: vision down and OCR failing leave the
// question to the coach (a lone End none); OCR text with every text
// source down, likewise, after its Read.
func TestScreenshotNothingWorks(t *testing.T) {
	r, vision := screenshotRig(t, &fakeReader{err: errors.New("tesseract broke")})
	vision.Sim.SetFault(modelVision, vendorsim.Fault{Status: 503})
	reads, a := askShot(t, r)
	if a.out.Answered || len(reads) != 0 {
		t.Fatalf("answered %+v, reads %q; want neither", a.out, reads)
	}
	r, vision = screenshotRig(t, &fakeReader{})
	for _, h := range []struct {
		s     simtest.Host
		model string
	}{{vision, modelVision}, {r.a, modelA}, {r.b, modelB}, {r.local, modelLocal}} {
		h.s.Sim.SetFault(h.model, vendorsim.Fault{Status: 503})
	}
	r.tpl.miss = true
	reads, a = askShot(t, r)
	if a.out.Answered || len(reads) != 1 {
		t.Fatalf("answered %+v, reads %q; want the read and no answer", a.out, reads)
	}
	if !strings.Contains(reads[0], "Two Sum") {
		t.Fatalf("read %q", reads[0])
	}
}
