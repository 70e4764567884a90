package redisstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// TestHealthStoreMerge: the record whose circuit changed last wins, a
// change is published, and States reads every field back.
func TestHealthStoreMerge(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBStore)
	s := NewHealthStore(rdb, zerolog.Nop())
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var changes atomic.Int32
	wg.Go(func() { s.Watch(ctx, func() { changes.Add(1) }) })
	defer func() { cancel(); wg.Wait() }()
	eventually(t, "subscribed", func() bool { return changes.Load() >= 1 })

	at := time.UnixMilli(1_700_000_000_000)
	open := health.BackendState{Name: "a", State: health.StateDown, Circuit: health.Open, ConsecutiveFail: 3,
		UpdatedAt: at, ChangedAt: at, OpenUntil: at.Add(2 * time.Second), CooldownMS: 2000, Reason: "3 failures", Node: "n1"}
	got, err := s.Merge(ctx, open)
	if err != nil || got != open {
		t.Fatalf("first merge = %+v, %v; want the record itself", got, err)
	}
	eventually(t, "the change published", func() bool { return changes.Load() >= 2 })
	older := health.BackendState{Name: "a", State: health.StateUp, Circuit: health.Closed, UpdatedAt: at.Add(time.Second),
		ChangedAt: at.Add(-time.Second), Node: "n2"}
	if got, err := s.Merge(ctx, older); err != nil || got != open {
		t.Fatalf("merge of an older decision = %+v, %v; want the stored open record", got, err)
	}
	newer := older
	newer.ChangedAt, newer.LastTrial = at.Add(5*time.Second), at.Add(4*time.Second)
	if got, err := s.Merge(ctx, newer); err != nil || got != newer {
		t.Fatalf("merge of a newer decision = %+v, %v; want it written", got, err)
	}
	states, err := s.States(ctx)
	if err != nil || len(states) != 1 || states[0] != newer {
		t.Fatalf("States() = %+v, %v; want [%+v]", states, err, newer)
	}
}

// switchCheck is a probe whose result a test switches.
type switchCheck struct{ fail atomic.Bool }

func (s *switchCheck) check(context.Context) error {
	if s.fail.Load() {
		return errors.New("down")
	}
	return nil
}

// TestHealthNodesAgreeThroughRedis: a circuit that one node opens on its
// live failures is open on the other node within one probe interval,
// and both close it when the backend heals.
func TestHealthNodesAgreeThroughRedis(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBStore)
	probe := &switchCheck{}
	probe.fail.Store(true)
	cfg := health.Config{IntervalMS: 2000, RecoverAfter: 2, CooldownMS: 100} // node 2 alone needs 3 failed checks: 4 s
	mk := func(node string) *health.Center {
		return health.New(cfg, []health.Probe{{Name: "a", Level: level.L1, Check: probe.check}}, zerolog.Nop(), nil,
			health.WithStore(NewHealthStore(rdb, zerolog.Nop())), health.WithNode(node))
	}
	n1, n2 := mk("n1"), mk("n2")
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { n1.Run(ctx) })
	wg.Go(func() { n2.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	for range 3 {
		n1.Report("a", false, upstream.ClassServer)
	}
	eventually(t, "node 2 sees the circuit node 1 opened", func() bool { return n2.Circuit("a") != health.Closed })
	if b := n2.Backends(); !n2.Down(level.L1) || len(b) != 1 || b[0].Node != "n1" {
		t.Fatalf("node 2: L1 down %v, records %+v; want L1 down on node 1's decision", n2.Down(level.L1), b)
	}
	probe.fail.Store(false)
	eventually(t, "both nodes close it once the backend heals", func() bool {
		return n1.Circuit("a") == health.Closed && n2.Circuit("a") == health.Closed
	})
	states, err := NewHealthStore(rdb, zerolog.Nop()).States(t.Context())
	if err != nil || len(states) != 1 || states[0].Circuit != health.Closed {
		t.Fatalf("shared records = %+v, %v; want a closed", states, err)
	}
}
