package upstream

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestClocksCancelWithTheirCause checks each clock of a stream: what
// cancels, when, and with which cause.
func TestClocksCancelWithTheirCause(t *testing.T) {
	cases := []struct {
		name  string
		call  Call
		steps func(k *clocks) // what the stream does at the start
		after time.Duration   // when the context must be cancelled
		cause error
	}{
		{"no headers", Call{HeaderTimeout: 2 * time.Second, FirstToken: time.Second}, func(*clocks) {}, 2 * time.Second, errNoResponse},
		{"first token from the request", Call{FirstToken: time.Second}, func(*clocks) {}, time.Second, errFirstToken},
		{"first token from the headers", Call{HeaderTimeout: 2 * time.Second, FirstToken: 3 * time.Second}, func(k *clocks) {
			time.Sleep(time.Second)
			k.headers()
		}, 4 * time.Second, errFirstToken},
		{"stall after content", Call{FirstToken: time.Second}, func(k *clocks) {
			k.headers()
			time.Sleep(500 * time.Millisecond)
			k.started()
			k.pause()
			time.Sleep(5 * time.Second) // the handler's own time does not count
			k.rearm()
		}, 5800 * time.Millisecond, errStall}, // 5.5 s, then the 300 ms stall bound
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancelCause(t.Context())
				defer cancel(nil)
				start := time.Now()
				k := startClocks(tc.call, 300*time.Millisecond, cancel)
				defer k.stop()
				tc.steps(k)
				<-ctx.Done()
				if got := time.Since(start); got != tc.after {
					t.Errorf("cancelled after %v, want %v", got, tc.after)
				}
				if cause := context.Cause(ctx); cause != tc.cause {
					t.Errorf("cause %v, want %v", cause, tc.cause)
				}
			})
		})
	}
}

// TestClocksStopped checks that stopped clocks never cancel.
func TestClocksStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(t.Context())
		defer cancel(nil)
		k := startClocks(Call{HeaderTimeout: time.Second, FirstToken: time.Second}, time.Second, cancel)
		k.stop()
		time.Sleep(time.Minute)
		if err := context.Cause(ctx); err != nil {
			t.Fatalf("stopped clocks cancelled: %v", err)
		}
	})
}
