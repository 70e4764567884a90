package asr

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/poise-dev/poise/asr/whisper"
	"github.com/rs/zerolog"
)

// Caption sources, as the caption message's `source` field.
const (
	SourceWhisper = "whisper"
	SourceCloud   = "cloud"
)

// minWhisperAudio pads short clips: whisper.cpp returns nothing for input
// under 1 s ("input is too short").
const minWhisperAudio = 1050 * time.Millisecond

// Sentinel errors of Recognize.
var (
	// ErrBusy: a partial was refused because every whisper queue had work
	// waiting. Not a failure; the next partial may get through.
	ErrBusy = errors.New("asr: every recognizer queue is busy")
	// ErrUnavailable: no backend produced a transcript (all down or all
	// failed). Captions pause; they resume when a backend is back.
	ErrUnavailable = errors.New("asr: no recognizer available")
	// ErrClosed: the pool is closed.
	ErrClosed = errors.New("asr: pool closed")
)

// Pool is the process-wide recognizer chain shared by every session:
// whisper.cpp servers, each with its own bounded queue and one decode at a
// time, then the optional cloud for finals. Each backend keeps its own
// health: two failures in a row take it out for Config.RetryMs. Safe for
// concurrent use; Close stops its workers and waits for them.
type Pool struct {
	servers        []*server
	cloud          *cloud // nil when off
	requestTimeout time.Duration
	retry          time.Duration
	log            zerolog.Logger
	metrics        *Metrics
	now            func() time.Time
	chain          chain    // the captions State (state.go)
	circuits       Circuits // nil: each backend's own health alone

	room   *bell           // rung when a final leaves any whisper queue
	ctx    context.Context // ends at Close; bounds every request
	cancel context.CancelFunc
	wg     sync.WaitGroup // the server workers
}

// NewPool starts one worker per whisper server in cfg (zero fields take
// their defaults; call cfg.Validate first: a whisper URL that does not
// parse is skipped and logged). m may be nil.
func NewPool(cfg Config, log zerolog.Logger, m *Metrics) *Pool {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{
		requestTimeout: ms(cfg.RequestTimeoutMs),
		retry:          ms(cfg.RetryMs),
		log:            log,
		metrics:        m,
		now:            time.Now,
		circuits:       cfg.Circuits,
		room:           newBell(),
		ctx:            ctx,
		cancel:         cancel,
	}
	for _, raw := range cfg.WhisperURLs {
		c, err := whisper.New(raw, cfg.HTTPClient)
		if err != nil {
			log.Error().Err(err).Msg("asr: whisper server skipped")
			continue
		}
		u, _ := url.Parse(raw) // parsed above
		s := newServer("whisper@"+u.Host, c, cfg.QueueDepth, p.room)
		p.servers = append(p.servers, s)
		m.setBackendUp(s.name, true)
	}
	if cfg.Cloud.BaseURL != "" {
		p.cloud = newCloud(cfg)
		m.setBackendUp(cloudName, true)
	}
	p.chain.state, p.chain.changed = p.computeState(), make(chan struct{})
	for _, s := range p.servers {
		p.wg.Go(func() { s.run(ctx, p) })
	}
	return p
}

// Close stops the workers, fails every queued request with ErrClosed,
// cancels the running ones and waits for the workers to return.
func (p *Pool) Close() {
	p.cancel()
	p.wg.Wait()
}

// BackendStatus is one backend as the ops page shows it.
type BackendStatus struct {
	Name  string `json:"name"`
	Up    bool   `json:"up"`
	Queue int    `json:"queue"` // waiting plus running requests (whisper only)
}

// Backends reports every backend's health and queue, whisper first.
func (p *Pool) Backends() []BackendStatus {
	now := p.now()
	var out []BackendStatus
	for _, s := range p.servers {
		out = append(out, BackendStatus{Name: s.name, Up: s.health.available(now), Queue: s.load()})
	}
	if p.cloud != nil {
		out = append(out, BackendStatus{Name: cloudName, Up: p.cloud.health.available(now)})
	}
	return out
}

// Recognize transcribes pcm (16 kHz mono) in lang ("zh", "en"; empty: the
// server's default) and returns the cleaned text and its source
// (SourceWhisper or SourceCloud). It tries the whisper servers that are up,
// least loaded first, then the cloud (finals only); a backend that is up
// by its own health but whose shared circuit is open (Config.Circuits) is
// tried only after those, as a last resort. A partial is refused at
// once with ErrBusy when every server has work waiting; a final takes
// room in any server's queue, and waits only while every queue is full.
// It blocks until a transcript, ErrUnavailable, ctx's end, or Close
// (ErrClosed).
func (p *Pool) Recognize(ctx context.Context, pcm []int16, lang string, partial bool) (text, source string, err error) {
	if p.ctx.Err() != nil {
		return "", "", ErrClosed
	}
	padded := padSilence(pcm, minWhisperAudio)
	wav := EncodeWAV(padded, SampleRate)
	audio := time.Duration(len(padded)) * time.Second / SampleRate
	r := &recognition{ctx: ctx, wav: wav, audio: audio, lang: lang, partial: partial}
	closed, open := p.candidates()
	cloudUp := p.circuitUp(cloudName)
	text, source, done := p.onWhisper(r, closed)
	if !done {
		text, source, done = p.onCloud(r, cloudUp)
	}
	if !done { // the last resort: backends whose circuit is open
		text, source, done = p.onWhisper(r, open)
	}
	if !done {
		text, source, done = p.onCloud(r, !cloudUp)
	}
	switch {
	case r.err != nil:
		return "", "", r.err
	case done:
		return cleanText(text), source, nil
	}
	errs, busy := r.errs, r.busy
	if busy && len(errs) == 0 {
		p.metrics.incPartialSkipped()
		return "", "", ErrBusy
	}
	if len(errs) == 0 {
		return "", "", ErrUnavailable // every backend is down
	}
	return "", "", fmt.Errorf("%w: %w", ErrUnavailable, errors.Join(errs...))
}

// recognition is one Recognize call's attempts.
type recognition struct {
	ctx     context.Context
	wav     []byte
	audio   time.Duration
	lang    string
	partial bool
	errs    []error // the backends' failures
	busy    bool    // a whisper queue refused a partial
	err     error   // ends the call: ctx's, or ErrClosed
}

// onWhisper tries servers in turn. A final that finds a server's queue
// full goes on to the next; when every server it did not try to the end
// was full, it waits for room in any of them and offers itself to those
// again, least loaded first. A burst of finals so spreads over every
// server instead of queueing behind the one that was least loaded when the
// burst began. done is true when one answered (source SourceWhisper) or
// r.err ends the call.
func (p *Pool) onWhisper(r *recognition, servers []*server) (text, source string, done bool) {
	for len(servers) > 0 {
		var full []*server
		for _, s := range servers {
			text, err := p.onServer(r.ctx, s, &job{ctx: r.ctx, wav: r.wav, audio: r.audio, lang: r.lang, partial: r.partial, done: make(chan jobResult, 1)})
			switch {
			case err == nil:
				return text, SourceWhisper, true
			case r.ctx.Err() != nil:
				r.err = r.ctx.Err()
				return "", "", true
			case errors.Is(err, ErrClosed):
				r.err = ErrClosed
				return "", "", true
			case errors.Is(err, ErrBusy):
				r.busy = true
			case errors.Is(err, errFull):
				full = append(full, s)
			default:
				r.errs = append(r.errs, fmt.Errorf("%s: %w", s.name, err))
			}
		}
		if len(full) == 0 {
			break
		}
		if !p.waitRoom(r.ctx, full) {
			r.err = r.ctx.Err()
			return "", "", true
		}
		servers = byLoad(full)
	}
	return "", "", false
}

// waitRoom waits until a final may find room in one of full's queues: one
// has room already, or the pool's bell hands this caller a freed slot. It
// reports false when ctx ends first. It enrols before it looks, so a slot
// freed in between is not missed.
func (p *Pool) waitRoom(ctx context.Context, full []*server) bool {
	w := p.room.listen()
	defer p.room.leave(w)
	if slices.ContainsFunc(full, (*server).hasRoom) {
		return true
	}
	select {
	case <-w.rung:
		return true
	case <-ctx.Done():
		return false
	}
}

// byLoad sorts servers least loaded first.
func byLoad(servers []*server) []*server {
	loads := make(map[*server]int, len(servers))
	for _, s := range servers {
		loads[s] = s.load()
	}
	slices.SortStableFunc(servers, func(a, b *server) int { return loads[a] - loads[b] })
	return servers
}

// onCloud tries the cloud for a final when turn is true and the cloud is
// up by its own health. done as for onWhisper.
func (p *Pool) onCloud(r *recognition, turn bool) (text, source string, done bool) {
	if !turn || r.partial || p.cloud == nil || !p.cloud.health.available(p.now()) {
		return "", "", false
	}
	text, err := p.cloud.transcribe(r.ctx, p, r.wav, r.lang)
	switch {
	case err == nil:
		return text, SourceCloud, true
	case r.ctx.Err() != nil:
		r.err = r.ctx.Err()
		return "", "", true
	}
	r.errs = append(r.errs, fmt.Errorf("%s: %w", cloudName, err))
	return "", "", false
}

// candidates are the whisper servers that are up by their own health,
// least loaded first: those whose shared circuit is closed, and those
// whose circuit is open (tried last).
func (p *Pool) candidates() (closed, open []*server) {
	now := p.now()
	type loaded struct {
		s    *server
		load int
	}
	var up []loaded
	for _, s := range p.servers {
		if s.health.available(now) {
			up = append(up, loaded{s, s.load()})
		}
	}
	slices.SortStableFunc(up, func(a, b loaded) int { return a.load - b.load })
	for _, l := range up {
		if p.circuitUp(l.s.name) {
			closed = append(closed, l.s)
		} else {
			open = append(open, l.s)
		}
	}
	return closed, open
}

// circuitUp reports whether backend's shared circuit is closed (true
// without Circuits).
func (p *Pool) circuitUp(backend string) bool {
	return p.circuits == nil || p.circuits.BackendUp(backend)
}

// onServer queues j at s and waits for its result, withdrawing it if ctx
// ends first.
func (p *Pool) onServer(ctx context.Context, s *server, j *job) (string, error) {
	if err := s.submit(j); err != nil {
		return "", err
	}
	select {
	case r := <-j.done:
		return r.text, r.err
	case <-ctx.Done():
		s.withdraw(j) // a running job is cancelled through j.ctx
		return "", ctx.Err()
	}
}

// observe records one backend request that decoded audio (0: not paced,
// the cloud): metrics, health and pace, the chain's State, and a log line
// when the backend goes down or comes back.
func (p *Pool) observe(name string, h *health, partial bool, audio, took time.Duration, err error) {
	class, counts := "", false
	if err != nil {
		class, counts = classify(err)
		if class == "" {
			return // cancelled: says nothing about the backend
		}
		p.metrics.incBackendError(name, class)
		if !counts {
			p.log.Error().Err(err).Str("backend", name).Msg("asr: request refused") // our bug
			return
		}
	}
	p.metrics.observeDecode(name, partial, took)
	if err == nil {
		h.paced(took, audio)
	}
	if p.circuits != nil {
		p.circuits.Report(name, err == nil, class)
	}
	wentDown, cameUp := h.record(counts, p.now(), p.retry)
	defer p.refresh()
	switch {
	case wentDown:
		p.metrics.setBackendUp(name, false)
		p.log.Warn().Err(err).Str("backend", name).Str("class", class).Dur("retry", p.retry).Msg("asr: backend down")
	case cameUp:
		p.metrics.setBackendUp(name, true)
		p.log.Info().Str("backend", name).Msg("asr: backend up")
	}
}

// padSilence appends zeros so that pcm lasts at least d.
func padSilence(pcm []int16, d time.Duration) []int16 {
	n := int(d * SampleRate / time.Second)
	if len(pcm) >= n {
		return pcm
	}
	out := make([]int16, n)
	copy(out, pcm)
	return out
}
