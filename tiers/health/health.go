package health

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// Health center tunables.
const (
	probeDownAfter   = 3                      // consecutive failed probe rounds that take level.L1 or level.L2 down
	backendDownAfter = 3                      // consecutive failures (probes or live) that mark one backend down
	storeTimeout     = 500 * time.Millisecond // per Store call
	maxProbeTimeout  = 5 * time.Second        // per probe; also at most half the interval
	jitterFraction   = 10                     // up to interval/jitterFraction is added to each wait
)

// Event keys of the sliding windows in the Store.
const (
	keyL1AllDown = "l1:all_down" // all-down events: live questions and probe rounds
	keyL2Fail    = "l2:fail"     // live failures of the local model
)

// levelKey names a level's record in the Store.
func levelKey(l level.Level) string { return "level:" + l.String() }

// Center is the health center: it probes every backend, counts failures
// from live traffic, and decides which levels are usable. One Center
// serves every session of the process (and, through a shared Store,
// every node), so an outage is counted once, not per session, and a new
// session starts at Supported() without paying for a known outage.
//
// Rules: L1 goes down after l1.down_after all-down events
// within l1.down_window_ms (a question on which every vendor failed, or a
// probe round in which every vendor failed), or after 3 failed probe
// rounds; L2 after l2.fail_after live failures within l2.fail_window_ms,
// or 3 failed probe rounds; L3 on one template failure (live or probe). A
// down level is up again after health.recover_after consecutive passing
// probe rounds; a failure in between restarts the count.
//
// Safe for concurrent use. Run owns the probe goroutines.
type Center struct {
	cfg    Config
	probes map[level.Level][]Probe // immutable after New
	store  Store
	now    func() time.Time
	log    zerolog.Logger
	m      *Metrics
	node   string        // prefixes live event ids, unique per process
	seq    atomic.Uint64 // live event ids

	// judge serializes "store update, then decide a transition" so that
	// this node never applies an older decision after a newer one.
	judge sync.Mutex

	mu        sync.Mutex
	levelDown map[level.Level]bool     // Guarded by mu.
	backends  map[string]BackendState  // Guarded by mu.
	subs      map[*subscriber]struct{} // Guarded by mu.
}

// Option adjusts New.
type Option func(*Center)

// WithStore shares the health state through s (default: a MemoryStore).
func WithStore(s Store) Option { return func(h *Center) { h.store = s } }

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(h *Center) { h.now = now } }

// WithNode names this node in event ids (default: a random id).
func WithNode(name string) Option { return func(h *Center) { h.node = name } }

// New returns a health center for cfg over probes: one per backend (a
// later probe of the same name replaces an earlier one). The caller builds
// them from its configuration (HTTPProbe, FirstTokenProbe, the templates'
// check), so the center knows backends and levels, not who uses them. A
// level is configured when it has a probe; Supported never returns an
// unconfigured level. Call Run to start probing.
func New(cfg Config, probes []Probe, log zerolog.Logger, m *Metrics, opts ...Option) *Center {
	h := &Center{
		cfg:       cfg.withDefaults(),
		probes:    map[level.Level][]Probe{},
		now:       time.Now,
		log:       log,
		m:         m,
		node:      strconv.FormatUint(rand.Uint64(), 36),
		levelDown: map[level.Level]bool{},
		backends:  map[string]BackendState{},
		subs:      map[*subscriber]struct{}{},
	}
	for _, o := range opts {
		o(h)
	}
	if h.store == nil {
		h.store = NewMemoryStore()
	}
	h.addProbes(probes)
	return h
}

func (h *Center) addProbes(probes []Probe) {
	byName := map[string]Probe{}
	var order []string
	for _, p := range probes {
		if p.Check == nil || p.Level < level.None || p.Level > level.L3 {
			h.log.Warn().Str("backend", p.Name).Msg("tiers: health: probe ignored: no check or bad level")
			continue
		}
		if _, seen := byName[p.Name]; !seen {
			order = append(order, p.Name)
		}
		byName[p.Name] = p
	}
	for _, name := range order {
		p := byName[name]
		h.probes[p.Level] = append(h.probes[p.Level], p)
		h.backends[name] = BackendState{Name: name, State: StateUp}
		h.m.setUp(name, true)
	}
}

// Configured reports whether level l has a backend to probe.
func (h *Center) Configured(l level.Level) bool { return len(h.probes[l]) > 0 }

// Supported returns the best level usable now: L1 if vendors are
// configured and up, else L2 if the local model is, else L3 if templates
// are, else L4. It reads a cache and never blocks on I/O.
func (h *Center) Supported() level.Level {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := level.L1; l <= level.L3; l++ {
		if h.Configured(l) && !h.levelDown[l] {
			return l
		}
	}
	return level.L4
}

// Down reports whether the health center has marked level l down. An
// unconfigured level is not "down"; callers check their own configuration.
func (h *Center) Down(l level.Level) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.levelDown[l]
}

// BackendUp reports whether backend name is up (unknown names are up).
func (h *Center) BackendUp(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, ok := h.backends[name]
	return !ok || st.State != StateDown
}

// Backends returns the last known state of every backend, sorted by name,
// for the ops view. It reads a cache and never blocks on I/O.
func (h *Center) Backends() []BackendState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]BackendState, 0, len(h.backends))
	for _, st := range h.backends {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b BackendState) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// storeCtx bounds one Store call; reports from a cancelled question
// must still be recorded, so it does not inherit the caller's cancel.
func storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
}

// eventID returns a fresh id for a live event.
func (h *Center) eventID() string { return fmt.Sprintf("%s-%d", h.node, h.seq.Add(1)) }

// round is the probe round that t falls in.
func (h *Center) round(t time.Time) int64 {
	return t.UnixMilli() / int64(h.cfg.IntervalMS)
}

// ReportSuccess records a live request to backend that ended well. It
// clears the backend's live failure streak, so that failures spread over
// hours never add up to a down backend (or an open gateway circuit); it
// counts as a passing check of the current probe round, which a failure in
// the same round still outranks. A down backend is left to its probes. It
// touches the store only when there is a streak to clear.
func (h *Center) ReportSuccess(backend string) {
	h.mu.Lock()
	rec, ok := h.backends[backend]
	h.mu.Unlock()
	if !ok || rec.State == StateDown || rec.ConsecutiveFail == 0 {
		return
	}
	ctx, cancel := storeCtx(context.Background())
	defer cancel()
	h.judge.Lock()
	defer h.judge.Unlock()
	now := h.now()
	st, err := h.store.Probe(ctx, backend, h.round(now), true, now)
	if err != nil {
		h.storeError(err, "success")
		return
	}
	h.judgeBackend(ctx, st)
}

// ReportResult records the end of one live request to backend at level.
// Failures whose class counts against health (see Class) feed the
// backend's streak and, for the local model, L2's failure window; a
// template failure takes L3 down. Success and our own cancellations change
// nothing. It blocks for at most a few store calls (storeTimeout each).
func (h *Center) ReportResult(lvl level.Level, backend string, class upstream.Class) {
	if !class.CountsAgainstHealth() {
		return
	}
	ctx, cancel := storeCtx(context.Background())
	defer cancel()
	h.judge.Lock()
	defer h.judge.Unlock()
	now := h.now()
	if rec, err := h.store.Fail(ctx, backend, now); err != nil {
		h.storeError(err, "fail")
	} else {
		h.judgeBackend(ctx, rec)
	}
	switch lvl {
	case level.L2:
		n, err := h.store.AddEvent(ctx, keyL2Fail, h.eventID(), now, ms(h.cfg.L2FailWindowMS))
		if err != nil {
			h.storeError(err, "event")
			return
		}
		if n >= h.cfg.L2FailAfter {
			h.setLevel(ctx, level.L2, StateDown, fmt.Sprintf("%d live failures of %s", n, backend))
		}
	case level.L3:
		h.setLevel(ctx, level.L3, StateDown, fmt.Sprintf("template failure (%s)", class))
	}
}

// ReportAllDown records a question on which every L1 vendor failed with a
// class that counts against health: one all-down event.
func (h *Center) ReportAllDown() {
	ctx, cancel := storeCtx(context.Background())
	defer cancel()
	h.judge.Lock()
	defer h.judge.Unlock()
	h.countAllDown(ctx, h.eventID(), "every vendor failed a question")
}

// countAllDown adds one all-down event and takes L1 down at the threshold.
// The caller holds judge.
func (h *Center) countAllDown(ctx context.Context, id, why string) {
	n, err := h.store.AddEvent(ctx, keyL1AllDown, id, h.now(), ms(h.cfg.L1DownWindowMS))
	if err != nil {
		h.storeError(err, "event")
		return
	}
	if n >= h.cfg.L1DownAfter {
		h.setLevel(ctx, level.L1, StateDown, fmt.Sprintf("%d all-down events, last: %s", n, why))
	}
}

// judgeBackend applies rec and moves the backend down after
// backendDownAfter failures, or up after recover_after passing probes.
// The caller holds judge.
func (h *Center) judgeBackend(ctx context.Context, rec BackendState) {
	want := rec.State
	switch {
	case rec.State != StateDown && rec.ConsecutiveFail >= backendDownAfter:
		want = StateDown
	case rec.State == StateDown && rec.ConsecutivePass >= h.cfg.RecoverAfter:
		want = StateUp
	}
	if want != rec.State {
		st, changed, err := h.store.SetState(ctx, rec.Name, want, h.now())
		if err != nil {
			h.storeError(err, "set state")
		} else {
			rec = st
			if changed {
				h.log.Info().Str("backend", rec.Name).Str("state", string(rec.State)).Msg("tiers: health: backend state changed")
			}
		}
	}
	h.applyBackend(rec)
}

// applyBackend updates the cache of one backend.
func (h *Center) applyBackend(rec BackendState) {
	h.mu.Lock()
	prev, known := h.backends[rec.Name]
	h.backends[rec.Name] = rec
	h.mu.Unlock()
	if !known || prev.State != rec.State {
		h.m.setUp(rec.Name, rec.State != StateDown)
	}
}

// setLevel moves level l to s in the store and applies the result; going
// up clears the level's failure window so old failures cannot take it
// down again at once. The caller holds judge.
func (h *Center) setLevel(ctx context.Context, l level.Level, s State, why string) {
	rec, changed, err := h.store.SetState(ctx, levelKey(l), s, h.now())
	if err != nil {
		h.storeError(err, "set level")
		return
	}
	if changed {
		ev := h.log.Warn()
		if s == StateUp {
			ev = h.log.Info()
			key := keyL1AllDown
			if l == level.L2 {
				key = keyL2Fail
			}
			if err := h.store.ClearEvents(ctx, key); err != nil {
				h.storeError(err, "clear events")
			}
		}
		ev.Str("answer_level", l.String()).Str("state", string(s)).Str("why", why).Msg("tiers: health: level state changed")
	}
	h.applyLevel(l, rec.State)
}

// applyLevel updates the cache of level l and signals subscribers when
// this node sees it change.
func (h *Center) applyLevel(l level.Level, s State) {
	down := s == StateDown
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.levelDown[l] == down {
		return
	}
	h.levelDown[l] = down
	sig := level.Signal{Event: level.Recovered, Level: l}
	if down {
		sig.Event = level.DownEvent(l)
	}
	h.broadcastLocked(sig)
}

func (h *Center) storeError(err error, op string) {
	h.log.Warn().Err(err).Str("op", op).Msg("tiers: health: store failed; keeping the last known state")
}
