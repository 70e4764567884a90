package load

import (
	"testing"
	"time"
)

func TestLoadClip(t *testing.T) {
	c, err := LoadClip("../../../asr/testdata/en_questions.wav", "../../../asr/testdata/boundaries.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Utterances) != 3 || c.Utterances[2].EndMS != 10736 {
		t.Fatalf("utterances %+v", c.Utterances)
	}
	if d := c.Duration(); d < 10736*time.Millisecond || d > 20*time.Second {
		t.Errorf("duration %v", d)
	}
	for i, f := range c.Frames[:len(c.Frames)-1] {
		if len(f) != 2*samplesPerFrame {
			t.Fatalf("frame %d has %d bytes, want %d", i, len(f), 2*samplesPerFrame)
		}
	}
	ends := c.endFrames()
	ms := int(frameDuration / time.Millisecond)
	if ends[0] != 2414/ms || ends[2] != 10736/ms {
		t.Errorf("end frames %v", ends)
	}
}

func TestLoadClipErrors(t *testing.T) {
	if _, err := LoadClip("../../../asr/testdata/en_questions.wav", "testdata/missing.json"); err == nil {
		t.Error("a missing boundaries file loaded")
	}
	if _, err := LoadClip("../../../asr/testdata/noise_only.wav", "../../../asr/testdata/boundaries.json"); err == nil {
		t.Error("a WAV with no boundaries entry loaded")
	}
}
