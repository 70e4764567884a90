package asr

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
)

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
	r.decode(pctx, cancel, decodeResult{utt: u, seq: u.partialSeq}, pcm)
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
	r.decode(fctx, cancel, decodeResult{utt: u, final: true}, pcm)
}

// decode runs one Recognize in a goroutine owned by run (shutdown waits
// for it); the result comes back through r.results unless run is shutting
// down. cancel releases ctx when the decode is over.
func (r *runner) decode(ctx context.Context, cancel context.CancelFunc, res decodeResult, pcm []int16) {
	r.wg.Go(func() {
		defer cancel()
		res.text, res.source, res.err = r.p.rec.Recognize(ctx, pcm, r.p.lang, !res.final)
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
	r.p.emit(Caption{UttID: u.id, Text: res.text, Final: true, Source: res.source, Latency: latency})
}
