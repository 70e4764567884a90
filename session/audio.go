package session

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/poise-dev/poise/asr"
	"github.com/poise-dev/poise/coach"
)

const transcriptWindow = time.Minute // captions kept for the answer prompt

// audioStream is one audio pipeline of the session, from audio_start to
// audio_stop: its generation, and the caption ids it was given. Owned by
// run; the pipeline's emit only carries the pointer back.
type audioStream struct {
	gen uint64
	p   *asr.Pipeline
	ids map[string]string // the pipeline's utterance id → its utt_id; an entry goes with the final
}

// captionEvent is a caption from one of the session's pipelines. A
// stopped pipeline's final (its flush) is still delivered; its partials
// are dropped.
type captionEvent struct {
	a *audioStream
	c asr.Caption
}

// captionID returns the utt_id of the pipeline's utterance utt, giving it
// one on its first caption: "u" and the seq of that caption's message. Seqs
// are unique within a session and survive a resume on another node, so
// utt_ids never repeat across audio restarts (the pipeline numbers its
// utterances from u1 every time).
func (a *audioStream) captionID(utt string, seq uint64) string {
	id, ok := a.ids[utt]
	if !ok {
		id = "u" + strconv.FormatUint(seq, 10)
		a.ids[utt] = id
	}
	return id
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
	a := &audioStream{gen: s.next(), ids: make(map[string]string)}
	a.p = asr.NewPipeline(s.cfg.ASRConfig, s.cfg.ASR, s.profile.Lang, func(c asr.Caption) {
		s.post(ctx, captionEvent{a: a, c: c})
	}, s.log)
	a.p.Start(ctx)
	s.audio = a
}

// stopAudio ends the audio stream. The pipeline flushes its open utterance
// from a worker goroutine, so run keeps draining the captions it emits.
func (s *Session) stopAudio() {
	s.audioOn = false
	a := s.audio
	if a == nil {
		return
	}
	s.audio = nil
	s.workers.Go(a.p.Stop)
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
	if s.audio != nil {
		s.audio.p.Feed(data)
	}
}

// onCaption sends a caption; a final that reads as a question is answered
// when the profile's auto_answer is on. Partials are dropped when the
// client is behind or their pipeline is no longer the current one.
func (s *Session) onCaption(ctx context.Context, e captionEvent) {
	c, a := e.c, e.a
	if !c.Final && (s.audio == nil || a.gen != s.audio.gen || !s.sendsNow()) {
		return
	}
	s.captionsFirst()
	id := a.captionID(c.UttID, s.replay.last()+1)
	s.send(&captionMsg{head: head{Type: "caption"}, UttID: id, Text: c.Text, Final: c.Final, Source: c.Source})
	if !c.Final {
		return
	}
	delete(a.ids, c.UttID)
	text := asr.Unmarked(strings.TrimSpace(c.Text)) // what was said: a simulator's mark is for the page only
	if text == "" {
		return
	}
	s.remember(text)
	if s.autoAnswer && coach.IsQuestion(text) {
		level := s.questionLevel()
		s.ask(ctx, s.questionID(""), text, level)
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
