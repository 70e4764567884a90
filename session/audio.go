package session

import (
	"context"
	"strings"
	"time"

	"github.com/poise-dev/poise/asr"
	"github.com/poise-dev/poise/coach"
)

const transcriptWindow = time.Minute // captions kept for the answer prompt

// captionEvent is a caption from the session's pipeline, tagged with the
// pipeline so that captions of a stopped one are still delivered in order
// but never confused with a newer one's.
type captionEvent struct {
	p *asr.Pipeline
	c asr.Caption
}

// line is one final caption kept for the prompt.
type line struct {
	at   time.Time
	text string
}

// startAudio begins an audio stream: a new ASR pipeline in the profile's
// language. Without an ASR pool, frames are validated and dropped.
func (s *Session) startAudio(ctx context.Context) {
	s.stopAudio()
	s.audioOn = true
	if s.cfg.ASR == nil {
		return
	}
	var p *asr.Pipeline
	p = asr.NewPipeline(s.cfg.ASRConfig, s.cfg.ASR, s.profile.Lang, func(c asr.Caption) {
		s.post(ctx, captionEvent{p: p, c: c})
	}, s.log)
	p.Start(ctx)
	s.pipeline = p
}

// stopAudio ends the audio stream. The pipeline flushes its open utterance
// from a worker goroutine, so run keeps draining the captions it emits.
func (s *Session) stopAudio() {
	s.audioOn = false
	p := s.pipeline
	if p == nil {
		return
	}
	s.pipeline = nil
	s.workers.Go(p.Stop)
}

// onAudio validates one binary frame and feeds it to the pipeline. Run only.
func (s *Session) onAudio(data []byte) {
	switch {
	case !s.audioOn:
		s.sendError(refuse(codeAudio, "binary frame before audio_start"))
	case len(data) > maxAudioFrame:
		s.sendError(refuse(codeAudio, "audio frame of %d bytes is over %d", len(data), maxAudioFrame))
	case len(data)%2 != 0:
		s.sendError(refuse(codeAudio, "audio frame has an odd byte count (%d); pcm_s16le needs 2 bytes a sample", len(data)))
	default:
		s.feedAudio(data)
	}
}

// feedAudio counts a valid frame against audio_seconds_per_hour and feeds
// it to the pipeline. Over the limit the frame is dropped: captions pause
// until the hour ends, and the client hears why once (a limit message,
// never an error). Typed questions still work.
func (s *Session) feedAudio(data []byte) {
	if v := s.hub.limiter.TakeAudio(s.subject, len(data)); !v.OK {
		s.limitHit(limitAudio, v.Until)
		return
	}
	if s.pipeline != nil {
		s.pipeline.Feed(data)
	}
}

// onCaption sends a caption; a final that reads as a question is answered
// when the profile's auto_answer is on. Partials are dropped when the
// client is behind.
func (s *Session) onCaption(ctx context.Context, e captionEvent) {
	c := e.c
	m := &captionMsg{head: head{Type: "caption"}, UttID: c.UttID, Text: c.Text, Final: c.Final, Source: c.Source}
	if !c.Final {
		s.sendDroppable(m)
		return
	}
	s.send(m)
	text := strings.TrimSpace(c.Text)
	if text == "" {
		return
	}
	s.remember(text)
	if s.autoAnswer && coach.IsQuestion(text) {
		level := s.questionLevel()
		s.questions++
		s.ask(ctx, "q"+itoa(s.questions), text, level)
	}
}

// remember keeps the last minute of final captions for the prompt.
func (s *Session) remember(text string) {
	now := s.cfg.Now()
	s.transcript = append(s.transcript, line{at: now, text: text})
	keep := 0
	for keep < len(s.transcript) && now.Sub(s.transcript[keep].at) > transcriptWindow {
		keep++
	}
	s.transcript = s.transcript[keep:]
}

// recentTranscript is the last minute of captions, oldest first.
func (s *Session) recentTranscript() string {
	var b strings.Builder
	for _, l := range s.transcript {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}
