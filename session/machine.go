package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/looplab/fsm"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/level"
)

// FSM events: the `reason` of a level message. The health signals' events
// are package level's; the others are the session's own.
const (
	evVendorAllDown    = level.VendorAllDown
	evLocalFailing     = level.LocalFailing
	evTemplatesFailing = level.TemplatesFailing
	evRecovered        = level.Recovered
	evReset            = "reset"
	evHeartbeatLost    = "heartbeat_lost"
	evRestore          = "restore"
)

// restoreTo names the FSM event that restores a session to a level. looplab/fsm
// maps (event, source) to one destination, and restore may go anywhere, so
// each destination has its own event; the reason sent is still "restore".
func restoreTo(l tiers.Level) string { return evRestore + ":" + l.String() }

// recoverTo names the FSM event of a climb of several levels at once to
// l, for the same reason; the reason sent is "recovered".
func recoverTo(l tiers.Level) string { return evRecovered + ":" + l.String() }

var allLevels = []string{"L1", "L2", "L3", "L4"}

func machineEvents() fsm.Events {
	ev := fsm.Events{
		{Name: evReset, Src: []string{"L2", "L3", "L4"}, Dst: "L1"},
		{Name: evHeartbeatLost, Src: []string{"L1", "L2", "L3"}, Dst: "L4"},
	}
	// A level whose source fails steps down one level; a recovered level
	// is climbed back to from the level below it.
	for l := tiers.L1; l <= tiers.L3; l++ {
		ev = append(ev,
			fsm.EventDesc{Name: level.DownEvent(l), Src: []string{l.String()}, Dst: (l + 1).String()},
			fsm.EventDesc{Name: evRecovered, Src: []string{(l + 1).String()}, Dst: l.String()})
	}
	for l := tiers.L1; l <= tiers.L4; l++ {
		var src []string
		for _, s := range allLevels {
			if s != l.String() {
				src = append(src, s)
			}
		}
		ev = append(ev, fsm.EventDesc{Name: restoreTo(l), Src: src, Dst: l.String()})
		var worse []string
		for w := l + 2; w <= tiers.L4; w++ {
			worse = append(worse, w.String())
		}
		if len(worse) > 0 {
			ev = append(ev, fsm.EventDesc{Name: recoverTo(l), Src: worse, Dst: l.String()})
		}
	}
	return ev
}

// machine is a session's answer level. It is owned by the session's run
// goroutine: looplab/fsm is not safe for concurrent Event calls, and no
// callback here calls back into it. The FSM is made at the first event: a
// session that never changes level (most idle ones) keeps its start level
// only, not the FSM's 2 KiB of tables.
type machine struct {
	start tiers.Level
	f     *fsm.FSM // nil until the first event
}

func newMachine(start tiers.Level) *machine { return &machine{start: start} }

// level returns the current level.
func (m *machine) level() tiers.Level {
	if m.f == nil {
		return m.start
	}
	l, _ := level.Parse(m.f.Current())
	return l
}

// fire runs event and reports whether the level changed. An event that does
// not apply to the current level is not an error: health signals and resets
// reach every session whatever its level. The context is detached from
// cancellation because a cancelled Event leaves looplab/fsm stuck for good.
func (m *machine) fire(ctx context.Context, event string) (changed bool, err error) {
	if m.f == nil {
		m.f = fsm.NewFSM(m.start.String(), machineEvents(), nil)
	}
	err = m.f.Event(context.WithoutCancel(ctx), event)
	var invalid fsm.InvalidEventError
	var none fsm.NoTransitionError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &invalid), errors.As(err, &none):
		return false, nil
	default:
		return false, fmt.Errorf("session: level event %s: %w", event, err)
	}
}
