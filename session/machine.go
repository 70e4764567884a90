package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/poise-dev/poise/tiers/level"

	"github.com/looplab/fsm"
	"github.com/poise-dev/poise/tiers"
)

// FSM events: the `reason` of a level message.
const (
	evVendorAllDown    = "vendor_all_down"
	evLocalFailing     = "local_failing"
	evTemplatesFailing = "templates_failing"
	evRecovered        = "recovered"
	evReset            = "reset"
	evHeartbeatLost    = "heartbeat_lost"
	evRestore          = "restore"
)

// restoreTo names the FSM event that restores a session to a level. looplab/fsm
// maps (event, source) to one destination, and restore may go anywhere, so
// each destination has its own event; the reason sent is still "restore".
func restoreTo(l tiers.Level) string { return evRestore + ":" + l.String() }

var (
	allLevels = []string{"L1", "L2", "L3", "L4"}
	// downEvent is the event that leaves a level whose source failed.
	downEvent = map[tiers.Level]string{tiers.L1: evVendorAllDown, tiers.L2: evLocalFailing, tiers.L3: evTemplatesFailing}
)

func machineEvents() fsm.Events {
	ev := fsm.Events{
		{Name: evVendorAllDown, Src: []string{"L1"}, Dst: "L2"},
		{Name: evLocalFailing, Src: []string{"L2"}, Dst: "L3"},
		{Name: evTemplatesFailing, Src: []string{"L3"}, Dst: "L4"},
		{Name: evRecovered, Src: []string{"L2"}, Dst: "L1"},
		{Name: evRecovered, Src: []string{"L3"}, Dst: "L2"},
		{Name: evRecovered, Src: []string{"L4"}, Dst: "L3"},
		{Name: evReset, Src: []string{"L2", "L3", "L4"}, Dst: "L1"},
		{Name: evHeartbeatLost, Src: []string{"L1", "L2", "L3"}, Dst: "L4"},
	}
	for l := tiers.L1; l <= tiers.L4; l++ {
		var src []string
		for _, s := range allLevels {
			if s != l.String() {
				src = append(src, s)
			}
		}
		ev = append(ev, fsm.EventDesc{Name: restoreTo(l), Src: src, Dst: l.String()})
	}
	return ev
}

// machine is a session's answer level. It is owned by the session's run
// goroutine: looplab/fsm is not safe for concurrent Event calls, and no
// callback here calls back into it.
type machine struct {
	f *fsm.FSM
}

func newMachine(start tiers.Level) *machine {
	return &machine{f: fsm.NewFSM(start.String(), machineEvents(), nil)}
}

// level returns the current level.
func (m *machine) level() tiers.Level {
	l, _ := level.Parse(m.f.Current())
	return l
}

// fire runs event and reports whether the level changed. An event that does
// not apply to the current level is not an error: health signals and resets
// reach every session whatever its level. The context is detached from
// cancellation because a cancelled Event leaves looplab/fsm stuck for good.
func (m *machine) fire(ctx context.Context, event string) (changed bool, err error) {
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
