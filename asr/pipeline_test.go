package asr

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

const chunkMs = 20 // the browser's frame in these tests

// session is a pipeline with its captions collected. Build it inside a
// synctest bubble.
type session struct {
	p        *Pipeline
	captions []Caption // written by the pipeline's goroutine; read after Stop or synctest.Wait
}

func startSession(t *testing.T, r *rig, lang string) *session {
	t.Helper()
	s := &session{}
	s.p = NewPipeline(r.cfg, r.pool, lang, func(c Caption) { s.captions = append(s.captions, c) }, zerolog.Nop())
	s.p.Start(t.Context())
	t.Cleanup(s.p.Stop)
	return s
}

// play feeds pcm at real-time pace (fake time in the bubble).
func play(s *session, pcm []int16) {
	b := pcmBytes(pcm)
	step := chunkMs * SampleRate / 1000 * bytesPerFrame
	for off := 0; off < len(b); off += step {
		s.p.Feed(b[off:min(off+step, len(b))])
		time.Sleep(chunkMs * time.Millisecond)
	}
}

// finals returns the final captions; partialsBefore checks that every
// partial precedes its utterance's final and names a known utterance.
func (s *session) finals(t *testing.T) []Caption {
	t.Helper()
	var out []Caption
	closed := map[string]bool{}
	for _, c := range s.captions {
		if closed[c.UttID] {
			t.Fatalf("caption %+v after its utterance's final", c)
		}
		if c.Final {
			closed[c.UttID] = true
			out = append(out, c)
		}
	}
	return out
}

func (s *session) partials(utt string) int {
	n := 0
	for _, c := range s.captions {
		if c.UttID == utt && !c.Final {
			n++
		}
	}
	return n
}

func TestPipelineCaptionsEachQuestion(t *testing.T) {
	t.Parallel()
	for _, clip := range loadTruth(t) {
		t.Run(clip.File, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rigOptions{transcript: "why this job?", delay: 300 * time.Millisecond})
				s := startSession(t, r, clip.File[:2]) // "en" or "zh"
				play(s, loadWAV(t, clip.File))
				s.p.Stop()
				finals := s.finals(t)
				if len(finals) != len(clip.Utterances) {
					t.Fatalf("got %d finals %+v, want %d", len(finals), finals, len(clip.Utterances))
				}
				for i, f := range finals {
					if want := fmt.Sprintf("u%d", i+1); f.UttID != want || f.Text != "why this job?" || f.Source != SourceWhisper {
						t.Errorf("final %d = %+v, want %s from whisper, a question", i, f, want)
					}
					if s.partials(f.UttID) == 0 {
						t.Errorf("%s: no partial before its final (utterances last over a second)", f.UttID)
					}
					// 600 ms of silence to notice the end, 300 ms to decode,
					// up to one 20 ms chunk of framing.
					if f.Latency < 900*time.Millisecond || f.Latency > 920*time.Millisecond {
						t.Errorf("%s: latency %v, want 900–920 ms", f.UttID, f.Latency)
					}
				}
				for _, c := range s.captions {
					if !c.Final && c.Latency != 0 {
						t.Errorf("partial %+v carries final-only fields", c)
					}
				}
				if got := histogramCount(t, r); got != uint64(len(clip.Utterances)) {
					t.Fatalf("latency histogram counted %d, want %d", got, len(clip.Utterances))
				}
			})
		})
	}
}

func TestPipelineStopFlushesTheOpenUtterance(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{transcript: "cut short"})
		s := startSession(t, r, "en")
		pcm := loadWAV(t, "en_questions.wav")
		play(s, pcm[:samplesAt(1500)]) // stops in the first question
		s.p.Stop()
		finals := s.finals(t)
		if len(finals) != 1 || finals[0].Text != "cut short" {
			t.Fatalf("finals %+v, want the open utterance flushed", finals)
		}
		if s.p.Feed(pcmBytes(pcm[:320])) {
			t.Fatal("Feed accepted audio after Stop")
		}
	})
}

func TestPipelineSupersedesSlowPartials(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Decoding takes longer than the partial period: each new partial
		// cancels the one in flight.
		r := newRig(t, rigOptions{delay: 1500 * time.Millisecond})
		s := startSession(t, r, "en")
		quiet := noise(int(samplesAt(500)), 30, 1)
		play(s, concat(quiet, voiced(int(samplesAt(4000))), noise(int(samplesAt(3000)), 30, 2)))
		s.p.Stop()
		c := r.sims[0].Counters(vendorsim.WhisperModel)
		if c.Cancelled == 0 {
			t.Fatalf("whisper counters %+v: no superseded partial was cancelled", c)
		}
		if finals := s.finals(t); len(finals) != 1 {
			t.Fatalf("finals %+v, want 1", finals)
		}
	})
}

func TestPipelinesShareASaturatedPool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// One whisper server, slower than real time for three sessions'
		// partials: partials are skipped, no final is lost.
		r := newRig(t, rigOptions{delay: 700 * time.Millisecond})
		pcm := loadWAV(t, "en_questions.wav")
		var sessions []*session
		done := make(chan struct{})
		for range 3 {
			s := startSession(t, r, "en")
			sessions = append(sessions, s)
			go func() {
				play(s, pcm)
				s.p.Stop()
				done <- struct{}{}
			}()
		}
		for range sessions {
			<-done
		}
		for i, s := range sessions {
			if finals := s.finals(t); len(finals) != 3 {
				t.Errorf("session %d: %d finals, want 3", i, len(finals))
			}
		}
		if skipped := testutil.ToFloat64(r.metrics.partialSkipped); skipped == 0 {
			t.Fatal("no partial skipped on a saturated pool")
		}
	})
}

func TestPipelineCaptionsPauseAndResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		break_ func(r *rig)
		mend   func(r *rig)
	}{
		{
			"whisper answers 500",
			func(r *rig) { r.sims[0].SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500}) },
			func(r *rig) { r.sims[0].SetFault(vendorsim.WhisperModel, vendorsim.Fault{}) },
		},
		{
			"whisper endpoint refuses connections",
			func(r *rig) { r.net.Listener("whisper-0:80").Refuse(true) },
			func(r *rig) { r.net.Listener("whisper-0:80").Refuse(false) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rigOptions{cfg: Config{RetryMs: 1000}})
				s := startSession(t, r, "zh")
				pcm := loadWAV(t, "zh_questions.wav") // utterances end at 3.8, 9.6, 15.3 s
				tt.break_(r)
				play(s, pcm[:samplesAt(5000)])
				synctest.Wait()
				if len(s.captions) != 0 {
					t.Fatalf("captions %+v while every backend fails, want none", s.captions)
				}
				if got := testutil.ToFloat64(r.metrics.finalsLost); got != 1 {
					t.Fatalf("failed finals = %v, want 1", got)
				}
				tt.mend(r)
				play(s, pcm[samplesAt(5000):])
				s.p.Stop()
				finals := s.finals(t)
				if len(finals) != 2 || finals[0].UttID != "u2" || finals[1].UttID != "u3" {
					t.Fatalf("finals %+v, want u2 and u3 once whisper is back", finals)
				}
			})
		})
	}
}

func TestPipelineFeedNeverBlocks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{})
		p := NewPipeline(r.cfg, r.pool, "en", func(Caption) {}, zerolog.Nop())
		chunk := make([]byte, 64<<10)
		accepted := 0
		for range 20 { // not started: nothing drains the queue
			if p.Feed(chunk) {
				accepted += len(chunk)
			}
		}
		if accepted > maxQueuedAudio || p.Dropped() != int64(20*len(chunk)-accepted) {
			t.Fatalf("accepted %d, dropped %d of %d bytes", accepted, p.Dropped(), 20*len(chunk))
		}
		if got := testutil.ToFloat64(r.metrics.audioDropped); got != float64(p.Dropped()) {
			t.Fatalf("dropped metric %v, want %d", got, p.Dropped())
		}
		p.Stop() // before Start: returns at once
	})
}

func TestPipelineEndsWithItsContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{delay: time.Hour})
		s := &session{}
		ctx, cancel := context.WithCancel(t.Context())
		s.p = NewPipeline(r.cfg, r.pool, "en", func(c Caption) { s.captions = append(s.captions, c) }, zerolog.Nop())
		s.p.Start(ctx)
		play(s, loadWAV(t, "en_questions.wav")[:samplesAt(3500)]) // a final is decoding
		cancel()
		s.p.Stop() // returns without waiting an hour
		if len(s.captions) != 0 {
			t.Fatalf("captions %+v", s.captions)
		}
	})
}

func histogramCount(t *testing.T, r *rig) uint64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "poise_caption_latency_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatal("poise_caption_latency_seconds not registered")
	return 0
}
