package health

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/rs/zerolog"
)

// TestAudioProbesOutlastShortIntervals: a whisper server and a cloud
// speech-to-text that take 300 ms per decode keep their circuits closed
// under a 200 ms health interval (whose half bounds other probes), and a
// whisper server that fails its decodes opens its circuit.
func TestAudioProbesOutlastShortIntervals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := vendorsim.NewMemNet()
		sim := vendorsim.New(vendorsim.Options{InferenceDelay: 300 * time.Millisecond})
		n.Serve("asr:80", sim)
		h := New(Config{IntervalMS: 200}, []Probe{
			WhisperProbe("whisper", "http://asr:80", n.Client()),
			TranscriptionProbe("cloud", "http://asr:80/v1", "key", "whisper-1", n.Client()),
		}, zerolog.Nop(), NewMetrics(nil))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { h.Run(ctx) })
		defer func() { cancel(); wg.Wait(); sim.Close(); n.Close() }()

		time.Sleep(5 * time.Second)
		for _, b := range []string{"whisper", "cloud"} {
			if c := h.Circuit(b); c != Closed {
				t.Errorf("%s decoding in 300 ms under a 200 ms interval: circuit %s, want closed", b, c)
			}
		}
		if c := sim.Counters(vendorsim.WhisperModel); c.Completed == 0 {
			t.Fatalf("whisper completed no probe: %+v", c)
		}
		sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500})
		time.Sleep(5 * time.Second)
		if h.BackendUp("whisper") {
			t.Fatal("a whisper server failing every decode kept a closed circuit")
		}
	})
}
