package asr

import (
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// changedNow reports whether ch is closed.
func changedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestStateFollowsTheChain walks whisper down and back with and without a
// cloud behind it: live, then paused (or degraded with the cloud) after two
// failures in a row, live again after the first success, and every change
// closes the channel State gave out.
func TestStateFollowsTheChain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		cloud bool
		down  State
	}{{"whisper only", false, StatePaused}, {"with the cloud", true, StateDegraded}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rigOptions{cloud: c.cloud, cfg: Config{RetryMs: 1000}})
				st, changed := r.pool.State()
				if st != StateLive {
					t.Fatalf("a new pool is %q, want live", st)
				}
				r.sims[0].SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500})
				r.pool.Recognize(t.Context(), second(1), "en", true)
				if st, _ := r.pool.State(); st != StateLive || changedNow(changed) {
					t.Fatalf("after one failure the state is %q (changed %v), want live", st, changedNow(changed))
				}
				r.pool.Recognize(t.Context(), second(1), "en", true)
				if !changedNow(changed) {
					t.Fatal("the second failure in a row did not signal a change")
				}
				st, changed = r.pool.State()
				if st != c.down {
					t.Fatalf("whisper down: state %q, want %q", st, c.down)
				}
				r.sims[0].SetFault(vendorsim.WhisperModel, vendorsim.Fault{})
				time.Sleep(1500 * time.Millisecond) // past the retry: whisper is due, not yet up
				if st, _ := r.pool.State(); st != c.down {
					t.Fatalf("whisper due for a retry: state %q, want still %q", st, c.down)
				}
				if _, _, err := r.pool.Recognize(t.Context(), second(1), "en", true); err != nil {
					t.Fatal(err)
				}
				if st, _ := r.pool.State(); st != StateLive || !changedNow(changed) {
					t.Fatalf("whisper back: state %q (changed %v), want live", st, changedNow(changed))
				}
			})
		})
	}
}

// TestStateDegradedWhenWhisperIsSlow: a whisper server that decodes much
// slower than real time degrades the captions; fast decodes bring them
// back.
func TestStateDegradedWhenWhisperIsSlow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{delay: 100 * time.Millisecond})
		r.pool.Recognize(t.Context(), second(2), "en", false)
		if st, _ := r.pool.State(); st != StateLive {
			t.Fatalf("a decode at 0.05× real time: %q, want live", st)
		}
		r.sims[0].SetFault(vendorsim.WhisperModel, vendorsim.Fault{InferenceDelayMS: 8000})
		r.pool.Recognize(t.Context(), second(2), "en", false) // 4× real time
		if st, _ := r.pool.State(); st != StateDegraded {
			t.Fatalf("a decode at 4× real time: %q, want degraded", st)
		}
		r.sims[0].SetFault(vendorsim.WhisperModel, vendorsim.Fault{})
		for range 3 {
			r.pool.Recognize(t.Context(), second(2), "en", false)
		}
		if st, _ := r.pool.State(); st != StateLive {
			t.Fatalf("after three fast decodes: %q, want live", st)
		}
	})
}
