package upstream

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Pacer spaces the reads of an answer stream after its first content: the
// stream reads the server at most once per Every, so that the tokens the
// server sent meanwhile come in one read and go on as one piece — one
// wake-up and one system call per Every instead of one per token. The
// first content is never waited for, nor is an event already in the
// buffer. A Pacer is shared by every stream of an engine; it holds no
// state of its own but Busy's.
type Pacer struct {
	// Every is the least time between two reads of a stream after its
	// first content; 0 or less reads as events come.
	Every time.Duration
	// Busy reports that the node is short of CPU. Pacing then steps aside:
	// a busy node reads several tokens a wake-up anyway, and unguarded
	// pacing cost first content at saturation (docs/benchmarks.md; a
	// likely cause, not proven: a goroutine a timer readies may run ahead
	// of the ones the network has readied). nil: never busy.
	Busy func() bool
}

// pacing is one stream's use of its Pacer. Owned by the stream call.
type pacing struct {
	p    *Pacer
	last time.Time // when the stream last went on reading; zero before its first content
}

// pause is called after the stream has passed content on and before it
// reads again: it sleeps until p.Every has passed since the last read (or
// since the first content, which went on at once). It does not watch the
// stream's context: a cancelled stream reads at most Every later, and a
// plain sleep costs the scheduler less than a select on a timer and the
// context, once per window of every stream.
func (s *pacing) pause() {
	if s.p == nil || s.p.Every <= 0 {
		return // not paced: no clock read per read either (the gateway's streams)
	}
	now := time.Now()
	if s.last.IsZero() {
		s.last = now
	}
	if d := s.p.Every - now.Sub(s.last); d > 0 && (s.p.Busy == nil || !s.p.Busy()) {
		time.Sleep(d)
		now = time.Now()
	}
	s.last = now
}

// schedSample is the runtime metric SchedulerLag reads.
const schedSample = "/sched/latencies:seconds"

// SchedulerLag tells whether the Go scheduler is behind: whether, over
// the last Window, at least a tenth of the goroutines that became
// runnable waited Limit or longer before they ran. It samples the
// runtime's scheduling-latency histogram at most once a Window, on the
// goroutine that asks when the last sample is stale (a few µs; the others
// read the last verdict), and holds no lock across anything but that
// read.
type SchedulerLag struct {
	Window time.Duration // how often the verdict is renewed
	Limit  time.Duration // a wait this long counts as late

	next atomic.Int64 // unix ns when the verdict is stale
	busy atomic.Bool
	mu   sync.Mutex // guards s and prev while one goroutine renews the verdict
	s    []metrics.Sample
	prev []uint64
}

// Busy reports the verdict, renewing it when it is stale.
func (l *SchedulerLag) Busy() bool {
	now := time.Now().UnixNano()
	if now < l.next.Load() || !l.mu.TryLock() {
		return l.busy.Load()
	}
	defer l.mu.Unlock()
	if now < l.next.Load() {
		return l.busy.Load()
	}
	l.next.Store(now + int64(l.Window))
	late, all := l.sample()
	busy := lagging(late, all)
	l.busy.Store(busy)
	return busy
}

// sample reads the runtime's histogram and counts it.
func (l *SchedulerLag) sample() (late, all uint64) {
	if l.s == nil {
		l.s = []metrics.Sample{{Name: schedSample}}
	}
	metrics.Read(l.s)
	if l.s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0, 0
	}
	return l.count(l.s[0].Value.Float64Histogram())
}

// count returns how many scheduling waits since the last histogram were
// Limit or longer, and how many there were in all (none on the first).
func (l *SchedulerLag) count(h *metrics.Float64Histogram) (late, all uint64) {
	fresh := len(l.prev) != len(h.Counts)
	if fresh {
		l.prev = make([]uint64, len(h.Counts))
	}
	limit := l.Limit.Seconds()
	for i, c := range h.Counts {
		n := c - l.prev[i]
		l.prev[i] = c
		if fresh {
			continue
		}
		all += n
		if h.Buckets[i] >= limit { // the bucket's lower bound
			late += n
		}
	}
	return late, all
}

// lagging is the verdict: a tenth or more of the waits were late.
func lagging(late, all uint64) bool { return all > 0 && late*10 >= all }
