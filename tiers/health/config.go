package health

import "time"

// Defaults of Config; a zero field means the default.
const (
	defaultIntervalMS     = 30000 // between probes of one backend
	defaultRecoverAfter   = 3     // consecutive passing probes to climb back
	defaultL1DownAfter    = 3     // all-down events before L1 is down
	defaultL1DownWindowMS = 60000 // window for those events
	defaultL2FailAfter    = 5     // live L2 failures before L2 is down
	defaultL2FailWindowMS = 60000 // window for those failures
)

// Config tunes the health center. The file keys live with the engine's
// configuration (health.interval_ms, health.recover_after,
// l1.down_after, l1.down_window_ms, l2.fail_after, l2.fail_window_ms);
// the caller copies them here. Zero values mean the defaults.
type Config struct {
	// IntervalMS is the time between two probes of a backend (default
	// 30000); up to a tenth of it is added as jitter.
	IntervalMS int
	// RecoverAfter is how many consecutive passing probe rounds a down
	// level (or backend) needs to be up again (default 3).
	RecoverAfter int
	// L1DownAfter is how many all-down events within L1DownWindowMS take
	// L1 down (default 3).
	L1DownAfter int
	// L1DownWindowMS is the window for L1DownAfter (default 60000).
	L1DownWindowMS int
	// L2FailAfter is how many live failures of the local model within
	// L2FailWindowMS take L2 down (default 5).
	L2FailAfter int
	// L2FailWindowMS is the window for L2FailAfter (default 60000).
	L2FailWindowMS int
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.IntervalMS = orDefault(c.IntervalMS, defaultIntervalMS)
	c.RecoverAfter = orDefault(c.RecoverAfter, defaultRecoverAfter)
	c.L1DownAfter = orDefault(c.L1DownAfter, defaultL1DownAfter)
	c.L1DownWindowMS = orDefault(c.L1DownWindowMS, defaultL1DownWindowMS)
	c.L2FailAfter = orDefault(c.L2FailAfter, defaultL2FailAfter)
	c.L2FailWindowMS = orDefault(c.L2FailWindowMS, defaultL2FailWindowMS)
	return c
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// ms converts a millisecond config value to a duration.
func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }
