package asr

import (
	"context"
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
}

// recognizer transcribes one clip, as Pool.Recognize does. The pipeline
// reaches its recognizer through it so that tests can put an in-process
// one in the Pool's place.
type recognizer interface {
	Recognize(ctx context.Context, pcm []int16, lang string, partial bool) (text, source string, err error)
}

// Pipeline is one session's audio path: Feed → VAD → utterances → the
// shared Pool → captions passed to emit. Feed never blocks. Start starts its
// goroutine; Stop flushes and waits for it.
type Pipeline struct {
	cfg     Config // defaults resolved
	rec     recognizer
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
	return newPipeline(cfg, pool, pool.metrics, lang, emit, log)
}

// newPipeline is NewPipeline on any recognizer; m may be nil.
func newPipeline(cfg Config, rec recognizer, m *Metrics, lang string, emit func(Caption), log zerolog.Logger) *Pipeline {
	return &Pipeline{
		cfg:     cfg.withDefaults(),
		rec:     rec,
		lang:    lang,
		emit:    emit,
		log:     log,
		metrics: m,
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

// Feed queues raw PCM16LE bytes, which the pipeline owns from then on: the
// caller must not change them (the session hands over the frame's own
// copy, so a frame is copied once). It never blocks: when
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
	case p.in <- pcm:
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
