package asr

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	tiershealth "github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// centerCircuits adapts the health center to Circuits, as cmd/poise does.
type centerCircuits struct{ h *tiershealth.Center }

func (c centerCircuits) BackendUp(backend string) bool { return c.h.BackendUp(backend) }

func (c centerCircuits) Report(backend string, ok bool, class string) {
	c.h.Report(backend, ok, upstream.Class(class))
}

// TestPoolRoutesByTheWhisperCircuit: with the health center's circuits,
// a whisper server whose probes fail (its circuit open) is passed over
// for finals before any caption pays a failed request there: the cloud
// takes them and the captions say degraded; a partial still tries it as
// the last resort. Once its probes pass recover_after times the circuit
// closes and finals go back to whisper. Live failures reach the circuit
// too: failing finals open it without a probe.
func TestPoolRoutesByTheWhisperCircuit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const whisperName = "whisper@whisper-0:80"
		var center *tiershealth.Center
		r := newRig(t, rigOptions{cloud: true, cfg: Config{RetryMs: 1000}, circuits: func(n *vendorsim.MemNet) Circuits {
			center = tiershealth.New(tiershealth.Config{RecoverAfter: 2}, []tiershealth.Probe{
				tiershealth.WhisperProbe(whisperName, "http://whisper-0:80", n.Client()),
				tiershealth.TranscriptionProbe(cloudName, "http://cloud:80/v1", "test-key", "gpt-4o-mini-transcribe", n.Client()),
			}, zerolog.Nop(), tiershealth.NewMetrics(prometheus.NewPedanticRegistry()))
			return centerCircuits{center}
		}})
		whisper := r.sims[0]
		requests := func() int64 { return whisper.Counters(vendorsim.WhisperModel).Requests }
		final := func(wantSource string) {
			t.Helper()
			text, source, err := r.pool.Recognize(t.Context(), second(1), "en", false)
			if err != nil || text == "" || source != wantSource {
				t.Fatalf("final: %q from %q, %v; want a transcript from %s", text, source, err, wantSource)
			}
		}

		whisper.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500, HealthDown: true})
		for range 3 { // the failures that open a circuit of no level
			center.CheckNow(t.Context())
		}
		if center.BackendUp(whisperName) || !r.pool.Backends()[0].Up {
			t.Fatal("want whisper's circuit open by its probes while the pool has seen no failure")
		}
		before := requests()
		final(SourceCloud)
		if got := requests() - before; got != 0 {
			t.Fatalf("whisper got %d requests with its circuit open and the cloud up", got)
		}
		if st, _ := r.pool.State(); st != StateDegraded {
			t.Fatalf("captions %q with whisper's circuit open and the cloud answering, want degraded", st)
		}

		whisper.ClearFaults()
		if text, source, err := r.pool.Recognize(t.Context(), second(1), "en", true); err != nil || source != SourceWhisper || text == "" {
			t.Fatalf("partial with the circuit open: %q from %q, %v; want whisper as the last resort", text, source, err)
		}
		for range 2 { // recover_after passing trials, a cooldown apart
			time.Sleep(2 * time.Second)
			center.CheckNow(t.Context())
		}
		if !center.BackendUp(whisperName) {
			t.Fatalf("whisper's circuit is %s after two passing trials", center.Circuit(whisperName))
		}
		final(SourceWhisper)
		if st, _ := r.pool.State(); st != StateLive {
			t.Fatalf("captions %q with whisper back, want live", st)
		}

		whisper.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500})
		for range 3 { // live failures; the pool's own health retries after retry_ms
			final(SourceCloud)
			time.Sleep(time.Second)
		}
		if center.BackendUp(whisperName) {
			t.Fatal("three failed finals on whisper did not open its circuit")
		}
		if _, _, err := r.pool.Recognize(t.Context(), second(1), "en", true); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("partial with whisper failing: %v, want ErrUnavailable", err)
		}
	})
}
