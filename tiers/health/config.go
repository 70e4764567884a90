package health

import (
	"time"

	"github.com/poise-dev/poise/tiers/level"
)

// Defaults of Config; a zero field means the default.
const (
	defaultIntervalMS     = 30000 // between probes of one closed circuit
	defaultRecoverAfter   = 3     // consecutive passing trials that close a circuit
	defaultCooldownMS     = 2000  // open → first trial; doubles per failed trial, capped at the interval
	defaultL1DownAfter    = 3     // failures of an L1 vendor that open its circuit ...
	defaultL1DownWindowMS = 60000 // ... within this window
	defaultL2FailAfter    = 5     // failures of the local model that open its circuit ...
	defaultL2FailWindowMS = 60000 // ... within this window
	otherFailAfter        = 3     // the same for backends of no level (gateway endpoints, ASR)
	templatesFailAfter    = 1     // one template failure opens the template store's circuit
)

// Config tunes the health center. The file keys live with the engine's
// configuration (health.interval_ms, health.recover_after,
// l1.down_after, l1.down_window_ms, l2.fail_after, l2.fail_window_ms);
// the caller copies them here. Zero values mean the defaults.
type Config struct {
	// IntervalMS is the time between two probes of a backend whose
	// circuit is closed (default 30000); up to a tenth of it is added as
	// jitter. It also caps the cooldown of an open circuit.
	IntervalMS int
	// RecoverAfter is how many consecutive passing trials close a
	// half-open circuit (default 3).
	RecoverAfter int
	// CooldownMS is how long a circuit stays open before its first trial
	// (default 2000, at most IntervalMS); it doubles after each failed
	// trial, up to IntervalMS, and is also the gap between two probe
	// trials of a half-open circuit.
	CooldownMS int
	// L1DownAfter is how many failures of one L1 vendor within
	// L1DownWindowMS (or in a row) open its circuit (default 3).
	L1DownAfter int
	// L1DownWindowMS is the window for L1DownAfter (default 60000).
	L1DownWindowMS int
	// L2FailAfter is how many failures of the local model within
	// L2FailWindowMS (or in a row) open its circuit (default 5).
	L2FailAfter int
	// L2FailWindowMS is the window for L2FailAfter (default 60000).
	L2FailWindowMS int
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.IntervalMS = orDefault(c.IntervalMS, defaultIntervalMS)
	c.RecoverAfter = orDefault(c.RecoverAfter, defaultRecoverAfter)
	c.CooldownMS = min(orDefault(c.CooldownMS, defaultCooldownMS), c.IntervalMS)
	c.L1DownAfter = orDefault(c.L1DownAfter, defaultL1DownAfter)
	c.L1DownWindowMS = orDefault(c.L1DownWindowMS, defaultL1DownWindowMS)
	c.L2FailAfter = orDefault(c.L2FailAfter, defaultL2FailAfter)
	c.L2FailWindowMS = orDefault(c.L2FailWindowMS, defaultL2FailWindowMS)
	return c
}

// policy is the circuit policy of a backend of level l.
func (c Config) policy(l level.Level) policy {
	p := policy{failAfter: otherFailAfter, window: ms(c.L1DownWindowMS), recoverAfter: c.RecoverAfter,
		cooldown: ms(c.CooldownMS), maxCooldown: ms(c.IntervalMS)}
	switch l {
	case level.L1:
		p.failAfter = c.L1DownAfter
	case level.L2:
		p.failAfter, p.window = c.L2FailAfter, ms(c.L2FailWindowMS)
	case level.L3:
		p.failAfter = templatesFailAfter
	}
	return p
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// ms converts a millisecond config value to a duration.
func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }
