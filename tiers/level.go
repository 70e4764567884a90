package tiers

import "github.com/poise-dev/poise/tiers/level"

// Level is an answer level (see package level); the engine's requests and
// events carry it.
type Level = level.Level

// The answer levels, as the engine's callers name them.
const (
	NoLevel = level.None
	L1      = level.L1
	L2      = level.L2
	L3      = level.L3
	L4      = level.L4
)

// Signal is a level-driving event of the health center (see package
// level); sessions receive them.
type Signal = level.Signal
