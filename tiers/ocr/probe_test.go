package ocr

import (
	"bytes"
	"os"
	"testing"

	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
)

// probeShot is what testdata/probe.png shows.
var probeShot = ocrtest.Shot{Text: "Poise OCR probe 42", Font: ocrtest.SansFont, Size: 20, Scale: 1, Theme: ocrtest.Light}

// TestProbeImage keeps testdata/probe.png the rendering of probeShot;
// POISE_UPDATE_PROBE=1 writes it.
func TestProbeImage(t *testing.T) {
	want, err := ocrtest.PNG(probeShot)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("POISE_UPDATE_PROBE") == "1" {
		if err := os.WriteFile("testdata/probe.png", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(probeImage, want) {
		t.Fatal("testdata/probe.png is not the rendering of probeShot; run with POISE_UPDATE_PROBE=1")
	}
}
