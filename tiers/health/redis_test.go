package health

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/redistest"

	"github.com/poise-dev/poise/tiers/level"
	"github.com/rs/zerolog"
)

// healthStores are the Store implementations that must behave alike.
func healthStores(t *testing.T) map[string]func(t *testing.T) Store {
	return map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemoryStore() },
		"redis": func(t *testing.T) Store {
			return NewRedisStore(redistest.Client(t, redistest.DBTiers), zerolog.Nop())
		},
		"fallback over redis": func(t *testing.T) Store {
			return NewFallbackStore(NewRedisStore(redistest.Client(t, redistest.DBTiers), zerolog.Nop()), 0, nil, zerolog.Nop())
		},
	}
}

// TestHealthStoreConformance runs the same merge rules against every store.
func TestHealthStoreConformance(t *testing.T) {
	for name, mk := range healthStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("rounds", func(t *testing.T) { testStoreRounds(t, mk) })
			t.Run("fail", func(t *testing.T) { testStoreFail(t, mk(t)) })
			t.Run("set state", func(t *testing.T) { testStoreSetState(t, mk(t)) })
			t.Run("events", func(t *testing.T) { testStoreEvents(t, mk(t)) })
		})
	}
}

func testStoreRounds(t *testing.T, mk func(*testing.T) Store) {
	ctx := t.Context()
	at := time.UnixMilli(100_000)
	tests := []struct {
		name         string
		probes       []bool // results of one round, from several nodes
		wantPass     int
		wantFail     int
		prevFailures int // failed rounds before this one
	}{
		{"two passes count once", []bool{true, true}, 1, 0, 0},
		{"a fail outranks an earlier pass", []bool{true, false}, 0, 1, 0},
		{"a pass does not erase a fail", []bool{false, true}, 0, 1, 0},
		{"two fails count once", []bool{false, false}, 0, 1, 0},
		{"a late fail extends the streak before the round", []bool{true, false}, 0, 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mk(t)
			round := int64(1)
			for range tc.prevFailures {
				if _, err := s.Probe(ctx, "x", round, false, at); err != nil {
					t.Fatal(err)
				}
				round++
			}
			var st BackendState
			for _, pass := range tc.probes {
				var err error
				if st, err = s.Probe(ctx, "x", round, pass, at); err != nil {
					t.Fatal(err)
				}
			}
			if st.ConsecutivePass != tc.wantPass || st.ConsecutiveFail != tc.wantFail || st.State != StateUp {
				t.Fatalf("%+v, want up, pass %d fail %d", st, tc.wantPass, tc.wantFail)
			}
			old, _ := s.Probe(ctx, "x", round-5, !tc.probes[0], at.Add(time.Second))
			if old != st {
				t.Fatalf("an older round changed the record: %+v → %+v", st, old)
			}
			// Three passing rounds in a row.
			for i := range 3 {
				st, _ = s.Probe(ctx, "x", round+1+int64(i), true, at)
			}
			if st.ConsecutivePass != tc.wantPass+3 || st.ConsecutiveFail != 0 {
				t.Fatalf("after 3 passing rounds: %+v", st)
			}
		})
	}
}

func testStoreFail(t *testing.T, s Store) {
	ctx := t.Context()
	at := time.UnixMilli(200_000)
	s.Probe(ctx, "x", 1, true, at)
	st, err := s.Fail(ctx, "x", at.Add(time.Second))
	if err != nil || st.ConsecutivePass != 0 || st.ConsecutiveFail != 1 || !st.UpdatedAt.Equal(at.Add(time.Second)) {
		t.Fatalf("Fail after a pass = %+v, %v", st, err)
	}
	// The round's pass no longer stands: a fail of the same round does not
	// count again.
	st, _ = s.Probe(ctx, "x", 1, false, at)
	if st.ConsecutiveFail != 1 {
		t.Fatalf("a fail of a round whose pass was undone counted again: %+v", st)
	}
}

func testStoreSetState(t *testing.T, s Store) {
	ctx := t.Context()
	at := time.UnixMilli(300_000)
	s.Fail(ctx, "x", at)
	s.Fail(ctx, "x", at)
	// Two nodes decide the same transition: exactly one changes it.
	st1, c1, err1 := s.SetState(ctx, "x", StateDown, at)
	st2, c2, err2 := s.SetState(ctx, "x", StateDown, at)
	if err1 != nil || err2 != nil || !c1 || c2 {
		t.Fatalf("SetState twice: changed %v %v, errs %v %v; want true false", c1, c2, err1, err2)
	}
	if st1.State != StateDown || st1.ConsecutiveFail != 0 || st2 != st1 {
		t.Fatalf("SetState = %+v then %+v; want down with streaks restarted", st1, st2)
	}
	s.Probe(ctx, "x", 7, true, at)
	s.SetState(ctx, "y", StateUp, at) // not a change: y reads as up
	states, err := s.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range states {
		names = append(names, st.Name)
	}
	if len(states) == 0 || states[0].Name != "x" || states[0].State != StateDown || states[0].ConsecutivePass != 1 {
		t.Fatalf("States() = %+v", states)
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("States() not sorted: %v", names)
		}
	}
}

func testStoreEvents(t *testing.T, s Store) {
	ctx := t.Context()
	at := time.UnixMilli(400_000)
	steps := []struct {
		id   string
		at   time.Time
		want int
	}{
		{"probe:7", at, 1},
		{"probe:7", at, 1}, // another node, same round
		{"n1-1", at.Add(10 * time.Second), 2},
		{"n2-1", at.Add(70 * time.Second), 2}, // probe:7 is out of the minute
	}
	for i, st := range steps {
		n, err := s.AddEvent(ctx, "k", st.id, st.at, time.Minute)
		if err != nil || n != st.want {
			t.Fatalf("step %d: AddEvent = %d, %v; want %d", i, n, err, st.want)
		}
	}
	if err := s.ClearEvents(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.AddEvent(ctx, "k", "n2-2", at.Add(71*time.Second), time.Minute); n != 1 {
		t.Fatalf("after ClearEvents: %d events, want 1", n)
	}
}

// TestHealthSharedRedisAcrossNodes: two health centers sharing Redis count
// events from both, do not double-count probe rounds, and a node learns of
// a level that another node took down without probing itself.
func TestHealthSharedRedisAcrossNodes(t *testing.T) {
	rdb := redistest.Client(t, redistest.DBTiers)
	clock := newFakeClock()
	probe := &switchProbe{}
	mk := func(node string, probes ...Probe) *Center {
		store := NewFallbackStore(NewRedisStore(rdb, zerolog.Nop()), 0, nil, zerolog.Nop())
		return New(testHealthConfig(), probes, zerolog.Nop(), nil,
			WithStore(store), WithClock(clock.Now), WithNode(node))
	}
	a := Probe{Name: "a", Level: level.L1, Check: probe.check}
	n1 := mk("n1", a)
	n3 := mk("n3") // probes nothing: it only watches the shared state
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { n3.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	sigs, unsubscribe := n3.Subscribe(4)
	defer unsubscribe()

	n2 := mk("n2", a)
	n1.ReportAllDown()
	n2.ReportAllDown()
	n1.ReportAllDown()
	if !n1.Down(level.L1) {
		t.Fatal("node 1 did not take L1 down after 3 events from two nodes")
	}
	select {
	case sig := <-sigs:
		if sig.Event != level.VendorAllDown || !n3.Down(level.L1) {
			t.Fatalf("node 3 got %+v, down %v; want vendor_all_down", sig, n3.Down(level.L1))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("node 3 did not learn that L1 is down")
	}
	for i := range 3 {
		clock.Advance(time.Second)
		n1.CheckNow(t.Context())
		n2.CheckNow(t.Context())
		if i < 2 && (!n1.Down(level.L1) || !n2.Down(level.L1)) {
			t.Fatalf("after %d rounds probed by two nodes: down %v %v; want both (no double count)", i+1, n1.Down(level.L1), n2.Down(level.L1))
		}
	}
	if n1.Down(level.L1) || n2.Down(level.L1) {
		t.Fatal("L1 still down after 3 passing rounds")
	}
}

// failingStore is a Store whose every call fails while its switch
// is down, and otherwise forwards to a MemoryStore.
type failingStore struct {
	*MemoryStore
	redistest.Switch
}

func (f *failingStore) Probe(ctx context.Context, name string, round int64, pass bool, at time.Time) (BackendState, error) {
	if err := f.Call(); err != nil {
		return BackendState{}, err
	}
	return f.MemoryStore.Probe(ctx, name, round, pass, at)
}

func (f *failingStore) SetState(ctx context.Context, name string, st State, at time.Time) (BackendState, bool, error) {
	if err := f.Call(); err != nil {
		return BackendState{}, false, err
	}
	return f.MemoryStore.SetState(ctx, name, st, at)
}

func (f *failingStore) States(ctx context.Context) ([]BackendState, error) {
	if err := f.Call(); err != nil {
		return nil, err
	}
	return f.MemoryStore.States(ctx)
}

// TestFallbackStoreKeepsJudging: while the shared store fails, a node
// continues from the last shared state on its own, tries the shared store
// again only after the cooldown, and writes its decisions back when the
// shared store returns.
func TestFallbackStoreKeepsJudging(t *testing.T) {
	primary := &failingStore{MemoryStore: NewMemoryStore()}
	clock := newFakeClock()
	h := New(testHealthConfig(), []Probe{{Name: "a", Level: level.L1, Check: (&switchProbe{}).check}}, zerolog.Nop(), nil,
		WithStore(NewFallbackStore(primary, 5*time.Second, clock.Now, zerolog.Nop())), WithClock(clock.Now))
	ctx := t.Context()
	h.ReportAllDown()
	h.ReportAllDown()
	h.ReportAllDown()
	if !h.Down(level.L1) {
		t.Fatal("L1 not down")
	}
	primary.Set(true)
	hits := primary.Calls()
	// Two passing rounds while the shared store is down: counted locally,
	// continuing from the shared "down", so L1 stays down (3 are needed).
	for range 2 {
		clock.Advance(time.Second)
		h.CheckNow(ctx)
	}
	if !h.Down(level.L1) {
		t.Fatal("L1 came up on the local store without 3 passing rounds")
	}
	if primary.Calls()-hits != 1 {
		t.Fatalf("the failing store was tried %d times within the cooldown, want 1", primary.Calls()-hits)
	}
	clock.Advance(time.Second)
	h.CheckNow(ctx)
	if h.Down(level.L1) {
		t.Fatal("L1 still down after 3 passing rounds on the local store")
	}
	// The shared store returns: this node's decision is written back.
	primary.Set(false)
	clock.Advance(5 * time.Second)
	h.CheckNow(ctx)
	states, _ := primary.MemoryStore.States(ctx)
	for _, st := range states {
		if st.Name == levelKey(level.L1) && st.State != StateUp {
			t.Fatalf("shared L1 = %s after the store returned, want up", st.State)
		}
	}
}
