package asr

import "encoding/binary"

// segEvent is an utterance edge found by the segmenter.
type segEvent struct {
	opened    bool    // an utterance opened at start; else one closed
	start     int64   // first sample of the utterance (pre-roll included)
	speechEnd int64   // closed: the sample after its last speech
	pcm       []int16 // closed: its audio, pre-roll and a short tail included
}

// segmenter turns a stream of PCM16LE bytes into utterances: it frames the
// samples for the VAD, keeps the recent audio for pre-roll and the open
// utterance's audio. Not safe for concurrent use: owned by the pipeline's
// run goroutine. The pcm of a closed utterance, and any prefix of the open
// one's audio (openAudio), are never written again, so decodes may read
// them while the segmenter goes on.
type segmenter struct {
	vad     *VAD
	preroll int64 // samples kept before the onset
	tail    int64 // samples kept after the end of speech
	room    int   // samples an utterance's buffer has room for beyond its pre-roll

	frame    []int16 // samples of the next frame, len < FrameSamples
	carry    byte    // first byte of a sample split across writes
	hasCarry bool
	recent   ring    // the last samples, for pre-roll
	pos      int64   // samples framed so far
	open     bool    // an utterance is open
	utt      []int16 // the open utterance's audio
	uttStart int64   // its first sample
	lastEnd  int64   // end of the previous utterance: pre-roll never overlaps it
	events   []segEvent
}

// tailMs of audio after the end of speech stay in an utterance, so a soft
// last consonant is not clipped.
const tailMs = 200

func newSegmenter(cfg Config) *segmenter {
	cfg = cfg.withDefaults()
	preroll := int64(cfg.PrerollMs) * SampleRate / 1000
	v := NewVAD(cfg)
	// Enough for the pre-roll before an onset that the VAD confirms
	// minSpeechFrames later.
	keep := int(preroll) + (v.minSpeechFrames+1)*FrameSamples
	return &segmenter{
		vad:     v,
		preroll: preroll,
		tail:    int64(min(tailMs, cfg.SilenceMs)) * SampleRate / 1000,
		room:    min(uttRoom, (cfg.MaxUtteranceMs+tailMs)*SampleRate/1000), // an utterance never grows past its cut
		frame:   make([]int16, 0, FrameSamples),
		recent:  newRing(keep),
	}
}

// write frames b (little-endian PCM16) and returns the edges it completes.
// The returned slice is reused by the next call.
func (s *segmenter) write(b []byte) []segEvent {
	s.events = s.events[:0]
	if s.hasCarry && len(b) > 0 {
		s.fill([]byte{s.carry, b[0]})
		b, s.hasCarry = b[1:], false
	}
	b = s.fill(b)
	if len(b) == 1 {
		s.carry, s.hasCarry = b[0], true
	}
	return s.events
}

// fill decodes the whole samples of b into frames, a frame at a time,
// processing each frame it completes, and returns the odd byte left (if
// any). Decoding in runs, not a sample per call: BenchmarkPipelineFraming
// 77 → 60 µs per second of audio.
func (s *segmenter) fill(b []byte) []byte {
	for len(b) >= 2 {
		n := min(FrameSamples-len(s.frame), len(b)/2)
		at := len(s.frame)
		s.frame = s.frame[:at+n] // within FrameSamples, the frame's capacity
		f := s.frame[at:]
		for i := range f {
			f[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		b = b[2*n:]
		if len(s.frame) == FrameSamples {
			s.process(s.frame)
			s.frame = s.frame[:0]
		}
	}
	return b
}

// flush ends the input: the partial frame is processed and an open
// utterance closes. The returned slice is reused by the next call.
func (s *segmenter) flush() []segEvent {
	s.events = s.events[:0]
	if len(s.frame) > 0 {
		s.process(s.frame)
		s.frame = s.frame[:0]
	}
	s.boundary(s.vad.Flush())
	return s.events
}

func (s *segmenter) process(frame []int16) {
	s.recent.push(frame)
	s.pos += int64(len(frame))
	if s.open {
		s.utt = append(s.utt, frame...)
	}
	s.boundary(s.vad.Process(frame))
}

func (s *segmenter) boundary(b Boundary) {
	switch b.Kind {
	case SpeechStart:
		start := max(b.At-s.preroll, s.lastEnd, s.pos-int64(s.recent.len()))
		s.utt = s.recent.last(int(s.pos-start), s.room)
		s.uttStart, s.open = start, true
		s.events = append(s.events, segEvent{opened: true, start: start})
	case SpeechEnd:
		end := min(b.At+s.tail, s.pos)
		s.closeUtt(end, b.At)
	case SpeechCut:
		s.closeUtt(b.At, b.At)
		s.utt, s.uttStart, s.open = nil, b.At, true
		s.events = append(s.events, segEvent{opened: true, start: b.At})
	}
}

func (s *segmenter) closeUtt(end, speechEnd int64) {
	pcm := s.utt[:end-s.uttStart]
	s.events = append(s.events, segEvent{start: s.uttStart, speechEnd: speechEnd, pcm: pcm[:len(pcm):len(pcm)]})
	s.utt, s.open, s.lastEnd = nil, false, end
}

// openAudio is the open utterance's audio so far (nil when none is open).
// Its capacity is clipped so that no append can write into what a reader
// holds.
func (s *segmenter) openAudio() []int16 {
	return s.utt[:len(s.utt):len(s.utt)]
}

// ring keeps the last samples written to it.
type ring struct {
	buf []int16
	w   int // next write index
	n   int // samples held
}

func newRing(size int) ring { return ring{buf: make([]int16, size)} }

func (r *ring) len() int { return r.n }

// push appends samples, forgetting the oldest beyond the ring's size.
func (r *ring) push(p []int16) {
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.w, r.n = 0, len(r.buf)
		return
	}
	k := copy(r.buf[r.w:], p)
	copy(r.buf, p[k:])
	r.w = (r.w + len(p)) % len(r.buf)
	r.n = min(r.n+len(p), len(r.buf))
}

// uttRoom is how much an utterance may grow before its buffer is copied
// into a larger one (at most max_utterance_ms): a spoken question usually
// takes two to four seconds, and every copy of a growing utterance is
// garbage.
const uttRoom = 4 * SampleRate

// last returns a new slice with the last k samples (k ≤ len), with room
// more samples of capacity for an utterance to grow.
func (r *ring) last(k, room int) []int16 {
	out := make([]int16, k, k+room)
	start := (r.w - k + len(r.buf)) % len(r.buf)
	n := copy(out, r.buf[start:min(start+k, len(r.buf))])
	copy(out[n:], r.buf[:k-n])
	return out
}
