package asr

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

const (
	maxQueuedAudio = 10 * SampleRate * bytesPerFrame // bytes (10 s) waiting in Feed's queue before drops
	feedQueue      = 1024                            // chunks; the byte bound above is the real one
	stopGrace      = time.Second                     // Stop waits FinalTimeoutMs plus this before cancelling
)

// Caption is one caption for the session to send.
type Caption struct {
	UttID   string        // the utterance; its partials and its final share it
	Text    string        // may be "" on a final that closes a shown partial
	Final   bool          // the last caption of the utterance
	Source  string        // SourceWhisper or SourceCloud
	Latency time.Duration // finals: end of speech → caption; partials: 0
	// Question is set on finals that look like a question (IsQuestion in
	// the session's language): the session answers those.
	Question bool
}

// Pipeline is one session's audio path: Feed → VAD → utterances → the
// shared Pool → captions passed to emit. Feed never blocks. Start starts its
// goroutine; Stop flushes and waits for it.
type Pipeline struct {
	cfg     Config // defaults resolved
	pool    *Pool
	lang    string
	emit    func(Caption)
	log     zerolog.Logger
	metrics *Metrics

	in      chan []byte   // Feed → run. Never closed: Feed may race Stop.
	queued  atomic.Int64  // bytes in `in`
	dropped atomic.Int64  // bytes Feed dropped
	eof     chan struct{} // closed by Stop: end of audio
	done    chan struct{} // closed when run returns

	mu      sync.Mutex
	started bool               // Guarded by mu.
	stopped bool               // Guarded by mu.
	cancel  context.CancelFunc // ends run at once. Guarded by mu.
}

// NewPipeline returns a pipeline for one session speaking lang ("zh",
// "en"). emit is called from the pipeline's goroutine, in order (an
// utterance's partials before its final, finals in utterance order); it
// must not block for long. pool is shared and not closed by the pipeline.
func NewPipeline(cfg Config, pool *Pool, lang string, emit func(Caption), log zerolog.Logger) *Pipeline {
	return &Pipeline{
		cfg:     cfg.withDefaults(),
		pool:    pool,
		lang:    lang,
		emit:    emit,
		log:     log,
		metrics: pool.metrics,
		in:      make(chan []byte, feedQueue),
		eof:     make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// Start starts the pipeline's goroutine under ctx (its end stops the
// pipeline without a flush). A second Start does nothing.
func (p *Pipeline) Start(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return
	}
	ctx, p.cancel = context.WithCancel(ctx)
	p.started = true
	go p.run(ctx, p.cancel)
}

// Feed queues raw PCM16LE bytes (a copy is kept). It never blocks: when
// 10 s of audio already wait it drops them (counted in Dropped) and returns
// false; after Stop it returns false.
func (p *Pipeline) Feed(pcm []byte) bool {
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if stopped {
		return false
	}
	if p.queued.Add(int64(len(pcm))) > maxQueuedAudio {
		p.queued.Add(-int64(len(pcm)))
		p.drop(len(pcm))
		return false
	}
	select {
	case p.in <- bytes.Clone(pcm):
		return true
	default:
		p.queued.Add(-int64(len(pcm)))
		p.drop(len(pcm))
		return false
	}
}

func (p *Pipeline) drop(n int) {
	p.dropped.Add(int64(n))
	p.metrics.addAudioDropped(n)
}

// Dropped is how many bytes Feed has dropped.
func (p *Pipeline) Dropped() int64 { return p.dropped.Load() }

// Stop ends the audio: queued audio is processed, the open utterance is
// flushed as a final, and Stop waits for the pending finals (bounded by
// FinalTimeoutMs plus a second; then they are cancelled) and for the
// pipeline's goroutines. Safe to call more than once and before Start.
func (p *Pipeline) Stop() {
	p.mu.Lock()
	first, started, cancel := !p.stopped, p.started, p.cancel
	p.stopped = true
	p.mu.Unlock()
	if !started {
		return
	}
	if first {
		close(p.eof)
	}
	t := time.NewTimer(ms(p.cfg.FinalTimeoutMs) + stopGrace)
	defer t.Stop()
	select {
	case <-p.done:
		return
	case <-t.C:
		p.log.Warn().Msg("asr: pipeline stop timed out; cancelling pending captions")
		cancel()
	}
	<-p.done // every wait in run ends with its ctx
}

// run is the pipeline's goroutine: it owns the segmenter and every
// utterance's state, starts the decodes and emits their captions.
func (p *Pipeline) run(ctx context.Context, cancel context.CancelFunc) {
	defer close(p.done)
	defer cancel()
	r := newRunner(p)
	defer r.shutdown()
	in, eof := p.in, p.eof
	for eof != nil || len(r.finals) > 0 {
		select {
		case b := <-in:
			p.queued.Add(-int64(len(b)))
			r.audio(ctx, b)
		case res := <-r.results:
			r.result(res)
		case <-eof:
			r.drain(ctx)
			r.handle(ctx, r.seg.flush(), time.Now())
			in, eof = nil, nil
		case <-ctx.Done():
			return
		}
	}
}

// runner is the state of run. Owned by run, not safe for concurrent use.
type runner struct {
	p       *Pipeline
	seg     *segmenter
	seq     int                // utterances opened
	cur     *utterance         // the open utterance, or nil
	partial context.CancelFunc // cancels the in-flight partial, or nil
	finals  []*pendingFinal    // finals not yet emitted, in utterance order
	results chan decodeResult
	quit    chan struct{} // closed by shutdown: decodes stop waiting to report
	wg      sync.WaitGroup
}

// utterance is one utterance's caption state.
type utterance struct {
	id          string
	lastPartial time.Time // when the last partial decode was started
	partialSeq  int       // partial decodes started
	shownSeq    int       // the newest partial shown
	shownText   string
	shownSource string
	audioAtLast int // samples the last partial decode covered
}

type pendingFinal struct {
	utt         *utterance
	endOfSpeech time.Time
	res         decodeResult
	done        bool
}

type decodeResult struct {
	utt    *utterance
	seq    int // partial sequence; 0 for a final
	final  bool
	text   string
	source string
	err    error
}

func newRunner(p *Pipeline) *runner {
	return &runner{p: p, seg: newSegmenter(p.cfg), results: make(chan decodeResult), quit: make(chan struct{})}
}

// shutdown cancels what is in flight and waits for the decode goroutines.
func (r *runner) shutdown() {
	if r.partial != nil {
		r.partial()
	}
	close(r.quit)
	r.wg.Wait()
}

// drain processes the audio that Feed queued before Stop.
func (r *runner) drain(ctx context.Context) {
	for {
		select {
		case b := <-r.p.in:
			r.p.queued.Add(-int64(len(b)))
			r.audio(ctx, b)
		default:
			return
		}
	}
}

func (r *runner) audio(ctx context.Context, b []byte) {
	now := time.Now()
	r.handle(ctx, r.seg.write(b), now)
	if r.cur != nil && now.Sub(r.cur.lastPartial) >= ms(r.p.cfg.PartialEveryMs) {
		r.startPartial(ctx, now)
	}
}

// handle acts on the segmenter's edges; now is when the audio arrived.
func (r *runner) handle(ctx context.Context, evs []segEvent, now time.Time) {
	for _, ev := range evs {
		if ev.opened {
			r.seq++
			r.cur = &utterance{id: uttID(r.seq), lastPartial: now}
			continue
		}
		// The end of speech was heard (pos-speechEnd) samples before the
		// audio that arrived now.
		behind := time.Duration(r.seg.pos-ev.speechEnd) * time.Second / SampleRate
		r.startFinal(ctx, r.cur, ev.pcm, now.Add(-behind))
		r.cur = nil
	}
}

func uttID(n int) string { return "u" + strconv.Itoa(n) }

// startPartial re-decodes the open utterance, superseding (cancelling) the
// partial in flight.
func (r *runner) startPartial(ctx context.Context, now time.Time) {
	u, pcm := r.cur, r.seg.openAudio()
	if len(pcm) == u.audioAtLast {
		return // nothing new to decode
	}
	r.cancelPartial()
	u.lastPartial, u.audioAtLast = now, len(pcm)
	u.partialSeq++
	pctx, cancel := context.WithCancel(ctx)
	r.partial = cancel
	r.decode(pctx, decodeResult{utt: u, seq: u.partialSeq}, pcm)
}

func (r *runner) cancelPartial() {
	if r.partial != nil {
		r.partial()
		r.partial = nil
	}
}

// startFinal decodes a closed utterance; its caption waits for the finals
// before it.
func (r *runner) startFinal(ctx context.Context, u *utterance, pcm []int16, endOfSpeech time.Time) {
	r.cancelPartial()
	r.finals = append(r.finals, &pendingFinal{utt: u, endOfSpeech: endOfSpeech})
	fctx, cancel := context.WithTimeout(ctx, ms(r.p.cfg.FinalTimeoutMs))
	r.decode(fctx, decodeResult{utt: u, final: true}, pcm, cancel)
}

// decode runs one Recognize in a goroutine owned by run; the result comes
// back through r.results unless run is shutting down.
func (r *runner) decode(ctx context.Context, res decodeResult, pcm []int16, cleanup ...context.CancelFunc) {
	r.wg.Go(func() {
		for _, c := range cleanup {
			defer c()
		}
		res.text, res.source, res.err = r.p.pool.Recognize(ctx, pcm, r.p.lang, !res.final)
		select {
		case r.results <- res:
		case <-r.quit:
		}
	})
}

func (r *runner) result(res decodeResult) {
	if !res.final {
		r.showPartial(res)
		return
	}
	for _, f := range r.finals {
		if f.utt == res.utt {
			f.res, f.done = res, true
		}
	}
	for len(r.finals) > 0 && r.finals[0].done {
		r.showFinal(r.finals[0])
		r.finals = r.finals[1:]
	}
}

// showPartial emits a partial of the open utterance unless a newer one was
// shown, the utterance has closed (its final follows), or it says nothing
// new.
func (r *runner) showPartial(res decodeResult) {
	u := res.utt
	if u != r.cur || res.seq <= u.shownSeq || res.err != nil || res.text == "" || res.text == u.shownText {
		return
	}
	u.shownSeq, u.shownText, u.shownSource = res.seq, res.text, res.source
	r.p.emit(Caption{UttID: u.id, Text: res.text, Source: res.source})
}

// showFinal emits an utterance's final. When every backend failed, the
// caption pauses: nothing is shown, or, if a partial was, it is made final.
func (r *runner) showFinal(f *pendingFinal) {
	u, res := f.utt, f.res
	if res.err != nil {
		r.p.metrics.incFinalsFailed()
		ev := r.p.log.Warn()
		if errors.Is(res.err, ErrUnavailable) {
			ev = r.p.log.Debug() // the pool logged the backends going down
		}
		ev.Err(res.err).Str("utt", u.id).Msg("asr: no final caption")
		if u.shownText == "" {
			return
		}
		res.text, res.source = u.shownText, u.shownSource
	}
	if res.text == "" && u.shownText == "" {
		return // nothing was said, nothing was shown
	}
	latency := time.Since(f.endOfSpeech)
	r.p.metrics.observeCaptionLatency(latency)
	r.p.emit(Caption{UttID: u.id, Text: res.text, Final: true, Source: res.source, Latency: latency,
		Question: IsQuestion(res.text, r.p.lang)})
}
