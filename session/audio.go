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
// audio_stop: its source (tab or mic), its generation, and the caption ids
// it was given. Owned by run; the pipeline's emit only carries the pointer
// back. p is nil without an ASR pool (frames are validated and dropped).
type audioStream struct {
	source string
	gen    uint64
	p      *asr.Pipeline
	ids    map[string]string // the pipeline's utterance id → its utt_id; an entry goes with the final
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

// line is one final caption kept for the prompt, with who said it.
type line struct {
	at      time.Time
	text    string
	speaker string // speakerInterviewer, speakerCandidate or "" (one microphone hears both)
}

// startAudio begins the audio stream of source (tab or mic; "" is mic): a
// new ASR pipeline in the profile's language. It replaces that source's
// stream, and the other source's stream, if any, runs on: a session hears
// the interviewer's tab and the candidate's microphone at once. Untagged
// frames go to the stream started last. Without an ASR pool, frames are
// validated and dropped.
func (s *Session) startAudio(ctx context.Context, source string) {
	if source == "" {
		source = "mic"
	}
	s.stopStream(source)
	a := &audioStream{source: source, gen: s.next(), ids: make(map[string]string)}
	if s.cfg.ASR != nil {
		a.p = asr.NewPipeline(s.cfg.ASRConfig, s.cfg.ASR, s.profile.Lang, func(c asr.Caption) {
			s.post(ctx, captionEvent{a: a, c: c})
		}, *s.logger())
		a.p.Start(ctx)
	}
	if s.assist.streams == nil {
		s.assist.streams = map[string]*audioStream{}
	}
	s.assist.streams[source] = a
	s.audio = a
	s.audioOn = true
}

// stopAudio ends every audio stream.
func (s *Session) stopAudio() {
	for source := range s.assist.streams {
		s.stopStream(source)
	}
}

// stopStream ends the stream of source, if it runs. The pipeline flushes
// its open utterance from a worker goroutine, so run keeps draining the
// captions it emits.
func (s *Session) stopStream(source string) {
	a := s.assist.streams[source]
	if a == nil {
		return
	}
	delete(s.assist.streams, source)
	if s.audio == a {
		s.audio = nil
		for _, other := range s.assist.streams {
			s.audio = other
		}
	}
	s.audioOn = len(s.assist.streams) > 0
	if a.p != nil {
		s.workers.Go(a.p.Stop)
	}
}

// Stream tags of tagged binary frames: an odd-length frame whose first
// byte names its stream (PCM16 frames have an even length).
const (
	tagTab = 't'
	tagMic = 'm'
)

// onAudio validates one binary frame and feeds it to its stream: a tagged
// frame to the stream its tag names, an untagged one to the stream started
// last. Run only.
func (s *Session) onAudio(data []byte) {
	a := s.audio
	if len(data)%2 == 1 && len(data) > 1 && (data[0] == tagTab || data[0] == tagMic) {
		source := "tab"
		if data[0] == tagMic {
			source = "mic"
		}
		if a = s.assist.streams[source]; a == nil && s.audioOn {
			s.sendError(refuse(codeAudio, "tagged frame for the %s stream, which has no audio_start", source))
			return
		}
		data = data[1:]
	}
	switch {
	case !s.audioOn:
		s.sendError(refuse(codeAudio, "binary frame before audio_start"))
	case len(data) > maxAudioFrame:
		s.sendError(refuse(codeAudio, "audio frame of %d bytes is over %d", len(data), maxAudioFrame))
	case len(data)%2 != 0:
		s.sendError(refuse(codeAudio, "audio frame has an odd byte count (%d); pcm_s16le needs 2 bytes a sample", len(data)))
	default:
		s.feedAudio(a, data)
	}
}

// feedAudio counts a valid frame against audio_seconds_per_hour and feeds
// it to the pipeline. Over the limit the frame is dropped: captions pause
// until the hour ends, and the client hears why once (a limit message,
// never an error). Typed questions still work.
func (s *Session) feedAudio(a *audioStream, data []byte) {
	if v := s.hub.limiter.TakeAudio(s.subject, len(data)); !v.OK {
		s.limitHit(limitAudio, v.Until)
		return
	}
	if a != nil && a.p != nil {
		a.p.Feed(data)
	}
}

// speaker is who speaks on stream a now: the tab is the interviewer; the
// microphone is the candidate while a tab stream runs, else "" (one
// microphone hearing both, as before two streams).
func (s *Session) speaker(a *audioStream) string {
	switch {
	case a.source == "tab":
		return speakerInterviewer
	case s.assist.streams["tab"] != nil:
		return speakerCandidate
	}
	return ""
}

// onCaption sends a caption, labelled with its stream and speaker; a
// final that reads as a question is answered when the profile's
// auto_answer is on, unless the candidate said it. Partials are dropped
// when the client is behind or their stream is no longer running.
func (s *Session) onCaption(ctx context.Context, e captionEvent) {
	c, a := e.c, e.a
	if !c.Final && (s.assist.streams[a.source] != a || !s.sendsNow()) {
		return
	}
	s.captionsFirst()
	id := a.captionID(c.UttID, s.replay.last()+1)
	speaker := s.speaker(a)
	s.send(&captionMsg{head: head{Type: "caption"}, UttID: id, Text: c.Text, Final: c.Final, Source: c.Source,
		speakerFields: speakerFields{Stream: a.source, Speaker: speaker}})
	if !c.Final {
		return
	}
	delete(a.ids, c.UttID)
	text := asr.Unmarked(strings.TrimSpace(c.Text)) // what was said: a simulator's mark is for the page only
	if text == "" {
		return
	}
	s.remember(text, speaker)
	if speaker == speakerCandidate {
		return // the candidate's own words are context, never a question to answer
	}
	s.assist.lastHeard = text
	if s.autoAnswer && coach.Asks(text) {
		level := s.questionLevel()
		s.ask(ctx, s.questionID(""), text, level)
	}
}

// remember keeps the last minute of final captions for the prompt.
func (s *Session) remember(text, speaker string) {
	now := s.cfg.Now()
	s.transcript = append(s.transcript, line{at: now, text: text, speaker: speaker})
	keep := 0
	for keep < len(s.transcript) && now.Sub(s.transcript[keep].at) > transcriptWindow {
		keep++
	}
	s.transcript = s.transcript[keep:]
}

// speakerLabels name the speakers in the prompt's transcript.
var speakerLabels = map[string]string{speakerInterviewer: "Interviewer: ", speakerCandidate: "Candidate (you): "}

// recentTranscript is the last minute of captions, oldest first, each
// labelled with its speaker when the session knows it.
func (s *Session) recentTranscript() string {
	var b strings.Builder
	for _, l := range s.transcript {
		b.WriteString(speakerLabels[l.speaker])
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}
