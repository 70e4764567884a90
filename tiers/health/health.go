package health

import (
	"cmp"
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
	reportQueue     = 1024                   // reports waiting for the health goroutine; more are dropped
	storeTimeout    = 500 * time.Millisecond // per Store call, in the sync goroutine
	maxProbeTimeout = 5 * time.Second        // per probe; also at most half the interval
	jitterFraction  = 10                     // up to interval/jitterFraction is added to each wait
)

// Center is the health center: one circuit per backend (see doc.go),
// fed by probes and by reports from live traffic, and the levels derived
// from them. One Center serves every session and the gateway of the
// process; through a Store it shares its circuits with the other nodes.
//
// Nothing here blocks on I/O: queries and Allow take mu for a map lookup,
// Report is a non-blocking send to the health goroutine. Run owns that
// goroutine, the probes and the store sync. Safe for concurrent use.
type Center struct {
	cfg     Config
	probes  map[string]Probe         // by backend; immutable after New
	byLevel map[level.Level][]string // backend names per level; immutable
	store   Store                    // nil: this node alone
	node    string                   // this node's name in the shared records
	log     zerolog.Logger
	m       *Metrics
	reports chan report   // to the health goroutine; never closed
	kick    chan struct{} // cap 1: a circuit changed, sync soon
	outage  *Outage       // the store's failures, for the log
	now     func() time.Time
	running atomic.Bool // the health goroutine drains reports

	mu        sync.Mutex
	circuits  map[string]*circuit      // Guarded by mu.
	live      int                      // circuits made by track; Guarded by mu.
	levelDown map[level.Level]bool     // Guarded by mu.
	subs      map[*subscriber]struct{} // Guarded by mu.
}

// report is one live request's end, for the health goroutine.
type report struct {
	backend string
	ok      bool
	class   upstream.Class
	at      time.Time
}

// Option adjusts New.
type Option func(*Center)

// WithStore shares the circuits through s (default: none, this node
// judges alone).
func WithStore(s Store) Option { return func(h *Center) { h.store = s } }

// WithClock replaces time.Now for the circuits, for tests that do not
// Run the center (Run's timers use the real clock; use testing/synctest).
func WithClock(now func() time.Time) Option { return func(h *Center) { h.now = now } }

// WithNode names this node in the shared records (default: a random id).
func WithNode(name string) Option { return func(h *Center) { h.node = name } }

// New returns a health center for cfg over probes: one per backend (a
// later probe of the same name replaces an earlier one). The caller builds
// them from its configuration (CompletionProbe, ListProbe, WhisperProbe,
// the templates' check), so the center knows backends and levels, not who
// uses them. A level is configured when it has a probe; Supported never
// returns an unconfigured level. Call Run to start probing.
func New(cfg Config, probes []Probe, log zerolog.Logger, m *Metrics, opts ...Option) *Center {
	h := &Center{
		cfg:       cfg.withDefaults(),
		probes:    map[string]Probe{},
		byLevel:   map[level.Level][]string{},
		node:      strconv.FormatUint(rand.Uint64(), 36),
		log:       log,
		m:         m,
		now:       time.Now,
		reports:   make(chan report, reportQueue),
		kick:      make(chan struct{}, 1),
		circuits:  map[string]*circuit{},
		levelDown: map[level.Level]bool{},
		subs:      map[*subscriber]struct{}{},
	}
	for _, o := range opts {
		o(h)
	}
	h.outage = NewOutage(0, nil, log, "tiers: health: shared store failed; this node judges alone",
		"tiers: health: shared store answers again")
	h.addProbes(probes)
	return h
}

func (h *Center) addProbes(probes []Probe) {
	for _, p := range probes {
		if p.Check == nil || p.Level < level.None || p.Level > level.L3 {
			h.log.Warn().Str("backend", p.Name).Msg("tiers: health: probe ignored: no check or bad level")
			continue
		}
		if old, ok := h.probes[p.Name]; ok {
			h.byLevel[old.Level] = slices.DeleteFunc(h.byLevel[old.Level], func(n string) bool { return n == p.Name })
		}
		h.probes[p.Name] = p
		h.byLevel[p.Level] = append(h.byLevel[p.Level], p.Name)
		h.circuits[p.Name] = newCircuit(p.Name, p.Level, h.cfg.policy(p.Level), h.node)
		h.m.setCircuit(p.Name, Closed)
	}
}

// Configured reports whether level l has a backend to probe.
func (h *Center) Configured(l level.Level) bool { return len(h.byLevel[l]) > 0 }

// Supported returns the best level usable now: L1 if vendors are
// configured and one of their circuits is closed, else L2 if the local
// model's is, else L3 if the template store's is, else L4. It reads
// memory and never blocks on I/O.
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

// Down reports whether level l is down: configured, and none of its
// backends' circuits is closed. An unconfigured level is not "down";
// callers check their own configuration.
func (h *Center) Down(l level.Level) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.levelDown[l]
}

// BackendUp reports whether backend's circuit is closed (unknown names
// are up).
func (h *Center) BackendUp(backend string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.circuits[backend]
	return !ok || c.state == Closed
}

// Circuit returns backend's circuit state (Closed for unknown names).
func (h *Center) Circuit(backend string) Circuit {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.circuits[backend]; ok {
		return c.state
	}
	return Closed
}

// Allow reports whether a live request may go to backend now, and admits
// it as the half-open trial when it is one: closed → yes; open → no until
// the cooldown is over, then yes for one trial (the circuit turns
// half-open); half-open → yes for one trial at a time. The caller that got
// yes reports the request's end with Report (a trial with no report
// counts as failed after trialTimeout). Unknown backends are allowed. It
// never blocks on I/O.
func (h *Center) Allow(backend string) bool {
	h.mu.Lock()
	c, known := h.circuits[backend]
	if !known {
		h.mu.Unlock()
		return true
	}
	_, ok, ch := c.allow(h.now())
	lv := h.judgeLevelsLocked(ch)
	h.mu.Unlock()
	h.announce(lv, ch)
	return ok
}

// Report records the end of one live request to backend: ok, or failed
// with class. A failure whose class does not count against health (see
// upstream.Class) is ignored. It never blocks: the report goes to the
// health goroutine on a bounded queue, and when that is full it is
// dropped and counted (poise_health_reports_dropped_total). Before Run
// starts (and after it returns) there is no health goroutine, and the
// report is applied at once, in memory.
func (h *Center) Report(backend string, ok bool, class upstream.Class) {
	if !ok && !class.CountsAgainstHealth() {
		return
	}
	r := report{backend: backend, ok: ok, class: class, at: h.now()}
	if !h.running.Load() {
		h.applyReport(r)
		return
	}
	select {
	case h.reports <- r:
	default:
		h.m.dropped()
	}
}

// Release gives back a half-open trial that Allow admitted but the caller
// did not use after all (the gateway asks before it knows whether it
// will reach that endpoint), so the next request can be the trial at once
// instead of after trialTimeout. It never blocks on I/O.
func (h *Center) Release(backend string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.circuits[backend]; ok && c.state == HalfOpen {
		c.gen = 0
	}
}

// ReportSuccess is Report(backend, true, ClassNone).
func (h *Center) ReportSuccess(backend string) { h.Report(backend, true, upstream.ClassNone) }

// ReportResult is Report(backend, false, class); the level is the
// backend's own and is ignored.
func (h *Center) ReportResult(_ level.Level, backend string, class upstream.Class) {
	h.Report(backend, false, class)
}

// Backends returns every circuit's record, sorted by name, for the ops
// view. It reads memory and never blocks on I/O.
func (h *Center) Backends() []BackendState {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]BackendState, 0, len(h.circuits))
	for _, c := range h.circuits {
		out = append(out, c.record(now))
	}
	slices.SortFunc(out, func(a, b BackendState) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// applyReport feeds one report to its circuit. Health goroutine.
func (h *Center) applyReport(r report) {
	h.track(r.backend)
	h.update(r.backend, func(c *circuit) *change {
		if r.ok {
			return c.pass(r.at, r.at, 0, true)
		}
		return c.fail(r.at, 0, true, "live "+string(r.class))
	})
}

// maxLiveCircuits bounds the circuits made for backends that have no
// probe (the gateway's endpoint and model pairs of a "*" chain): a client
// naming a new model each time must not grow the map without end.
const maxLiveCircuits = 1024

// track gives backend a circuit of its own when it has none and live
// reports are all it will get (no probe: its half-open trials are live
// requests that Allow admits), up to maxLiveCircuits.
func (h *Center) track(backend string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.circuits[backend]; ok || h.live >= maxLiveCircuits {
		return
	}
	h.live++
	h.circuits[backend] = newCircuit(backend, level.None, h.cfg.policy(level.None), h.node)
	h.m.setCircuit(backend, Closed)
}

// update runs f on backend's circuit under mu, derives the levels, and
// announces what changed outside the lock.
func (h *Center) update(backend string, f func(*circuit) *change) {
	h.mu.Lock()
	c, ok := h.circuits[backend]
	if !ok {
		h.mu.Unlock()
		return
	}
	ch := f(c)
	lv := h.judgeLevelsLocked(ch)
	h.mu.Unlock()
	h.announce(lv, ch)
}

// levelChange is a level going down or back up, for the log.
type levelChange struct {
	level level.Level
	down  bool
}

// judgeLevelsLocked derives every level from its circuits after ch (nil:
// nothing changed) and signals subscribers of the levels that changed: a
// level is down when none of its backends' circuits is closed. The
// caller holds mu.
func (h *Center) judgeLevelsLocked(ch *change) []levelChange {
	if ch == nil {
		return nil
	}
	var out []levelChange
	for l := level.L1; l <= level.L3; l++ {
		names := h.byLevel[l]
		if len(names) == 0 {
			continue
		}
		down := true
		for _, n := range names {
			if h.circuits[n].state == Closed {
				down = false
				break
			}
		}
		if h.levelDown[l] == down {
			continue
		}
		h.levelDown[l] = down
		out = append(out, levelChange{level: l, down: down})
		sig := level.Signal{Event: level.Recovered, Level: l}
		if down {
			sig.Event = level.DownEvent(l)
		}
		h.broadcastLocked(sig)
	}
	return out
}

// announce logs and counts a circuit change and the level changes it
// caused, and asks the sync goroutine to share it. Called without mu.
func (h *Center) announce(lv []levelChange, ch *change) {
	if ch == nil {
		return
	}
	ev := h.log.Info()
	if ch.to == Open {
		ev = h.log.Warn()
	}
	ev.Str("backend", ch.name).Str("from", string(ch.from)).Str("to", string(ch.to)).Str("why", ch.reason).
		Msg("tiers: health: circuit changed")
	h.m.setCircuit(ch.name, ch.to)
	for _, l := range lv {
		state := StateUp
		if l.down {
			state = StateDown
		}
		h.log.Info().Str("answer_level", l.level.String()).Str("state", string(state)).Str("backend", ch.name).
			Msg("tiers: health: level state changed")
	}
	select {
	case h.kick <- struct{}{}:
	default:
	}
}
