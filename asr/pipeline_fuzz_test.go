package asr

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

// Limits of the audio fuzz targets.
const (
	fuzzEnvelopeMs   = frameMs   // audio made from one envelope byte (FuzzSegmenter)
	pipelineStepMs   = 100       // audio made from one envelope byte in FuzzAudioFrames: short inputs minimize fast
	sessionMaxFrame  = 64 << 10  // bytes: the largest binary frame the session passes on (session.maxAudioFrame)
	segmenterFuzzCap = 20 * 1000 // ms of audio one FuzzSegmenter input may make: room for one 15 s cut
	pipelineFuzzCap  = 2500      // ms for FuzzAudioFrames: room for two of its cuts
	pipelineFuzzCut  = 1000      // ms: FuzzAudioFrames' max_utterance_ms, so that a short input reaches the cut
	pipelineMinFrame = 320       // bytes (10 ms): smaller frames only cost time here; FuzzSegmenter takes any size
)

// fuzzAudio builds the byte stream of a fuzz input: raw as it came (any
// bytes: PCM16LE, odd lengths, garbage), then envelope, each byte of which
// is stepMs of synthetic audio: its low 7 bits the amplitude (0 is digital
// silence), its high bit a voiced sound (harmonics, as speech) rather than
// noise. The envelope lets a short input describe long speech, long enough
// for a cut. The stream is cut at capMs of audio.
func fuzzAudio(raw, envelope []byte, stepMs, capMs int) []byte {
	capBytes := capMs * SampleRate / 1000 * bytesPerFrame
	out := slices.Clone(raw[:min(len(raw), capBytes)])
	n := stepMs * SampleRate / 1000
	wave := voicedStep()
	var seed uint32 = 1
	for _, e := range envelope {
		if len(out)+n*bytesPerFrame > capBytes {
			break
		}
		amp := float64(e&0x7f) * 250
		for i := range n {
			var v float64
			if e&0x80 != 0 {
				v = wave[i%len(wave)]
			} else {
				seed = seed*1664525 + 1013904223
				v = float64(int32(seed)) / math.MaxInt32
			}
			out = binary.LittleEndian.AppendUint16(out, uint16(int16(max(-32768, min(32767, amp*v)))))
		}
	}
	return out
}

// voicedStep is 20 ms of the voiced sound: 150 Hz and 300 Hz repeat every
// 320 samples, so the sound is this wave over and over.
var voicedStep = sync.OnceValue(func() []float64 {
	w := make([]float64, fuzzEnvelopeMs*SampleRate/1000)
	for i := range w {
		ts := float64(i) / SampleRate
		w[i] = math.Sin(2*math.Pi*150*ts) + 0.5*math.Sin(2*math.Pi*300*ts)
	}
	return w
})

// fuzzFrames cuts stream into frames whose sizes come from sizes (two
// bytes a frame, cycling), each between least and most bytes (the last
// may be shorter); even rounds the sizes up to whole samples, as the
// session requires. No sizes: one frame.
func fuzzFrames(stream, sizes []byte, least, most int, even bool) [][]byte {
	var frames [][]byte
	for i := 0; len(stream) > 0; i++ {
		n := len(stream)
		if len(sizes) >= 2 {
			j := 2 * i % (len(sizes) - len(sizes)%2)
			n = least + (int(sizes[j])<<8|int(sizes[j+1]))%(most-least+1)
		}
		if even {
			n = min(n+n%2, most-most%2)
		}
		n = min(n, len(stream))
		frames = append(frames, stream[:n])
		stream = stream[n:]
	}
	return frames
}

// samplesOf decodes a PCM16LE stream as the segmenter does across frames
// (a trailing odd byte is no sample).
func samplesOf(stream []byte) []int16 {
	out := make([]int16, len(stream)/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(stream[2*i:]))
	}
	return out
}

// utt is a closed utterance as the fuzz targets compare them.
type utt struct{ start, speechEnd, end int64 }

// FuzzSegmenter writes arbitrary audio, cut into arbitrary frames (odd
// sizes included), to the segmenter. Properties: no panic; the open
// utterance never holds more than pre-roll plus the 15 s cut; edges
// alternate open, close; utterances are monotonic and never overlap; each
// closes with at most pre-roll + 15 s + tail of audio, and that audio is
// exactly the input's samples at its offsets; and the frame sizes do not
// change the utterances.
func FuzzSegmenter(f *testing.F) {
	voicedSec := slices.Repeat([]byte{0xff}, 1000/fuzzEnvelopeMs)
	quietSec := slices.Repeat([]byte{0x01}, 1000/fuzzEnvelopeMs)
	f.Add([]byte{}, slices.Concat(quietSec, voicedSec, quietSec), []byte{0x02, 0x81})
	f.Add([]byte{}, slices.Concat(quietSec, slices.Repeat(voicedSec, 17), quietSec), []byte{})
	f.Add([]byte{1, 2, 3}, slices.Concat(voicedSec, quietSec[:20], voicedSec), []byte{0, 0, 0xff, 0xff, 0, 3})
	f.Add(pcmBytes(voiced(SampleRate)), []byte{}, []byte{0x01, 0x41})
	f.Fuzz(func(t *testing.T, raw, envelope, sizes []byte) {
		stream := fuzzAudio(raw, envelope, fuzzEnvelopeMs, segmenterFuzzCap)
		cfg := Config{}.withDefaults()
		s := newSegmenter(cfg)
		maxSpeech := int64(cfg.MaxUtteranceMs) * SampleRate / 1000
		maxOpen := s.preroll + maxSpeech
		var got []utt
		open := false
		var lastEnd int64
		check := func(evs []segEvent) {
			t.Helper()
			for _, ev := range evs {
				got = append(got, checkEdge(t, ev, &open, &lastEnd, s, maxSpeech)...)
			}
			if int64(len(s.utt)) > maxOpen {
				t.Fatalf("open utterance holds %d samples, over pre-roll + cut (%d)", len(s.utt), maxOpen)
			}
		}
		for _, fr := range fuzzFrames(stream, sizes, 1, sessionMaxFrame, false) {
			check(s.write(fr))
		}
		check(s.flush())
		if open {
			t.Fatal("an utterance is open after flush")
		}
		samples := samplesOf(stream)
		for i, u := range got {
			if u.end > int64(len(samples)) {
				t.Fatalf("utterance %d ends at %d, after the input's %d samples", i, u.end, len(samples))
			}
		}
		if whole := segmentUtts(cfg, stream); !slices.Equal(got, whole) {
			t.Fatalf("frame sizes changed the utterances:\nframed %v\n whole %v", got, whole)
		}
	})
}

// checkEdge checks one edge against the state before it and returns the
// utterance it closes, if any.
func checkEdge(t *testing.T, ev segEvent, open *bool, lastEnd *int64, s *segmenter, maxSpeech int64) []utt {
	t.Helper()
	if ev.opened {
		if *open {
			t.Fatalf("utterance opened at %d while one is open", ev.start)
		}
		if ev.start < *lastEnd || ev.start > s.pos {
			t.Fatalf("utterance opens at %d, before the last end %d or after the input (%d)", ev.start, *lastEnd, s.pos)
		}
		*open = true
		return nil
	}
	if !*open {
		t.Fatal("utterance closed while none is open")
	}
	end := ev.start + int64(len(ev.pcm))
	switch {
	case ev.start < *lastEnd:
		t.Fatalf("utterance starts at %d, inside the previous one (ends %d)", ev.start, *lastEnd)
	case ev.speechEnd < ev.start || ev.speechEnd > end:
		t.Fatalf("speech ends at %d, outside its utterance [%d, %d)", ev.speechEnd, ev.start, end)
	case ev.speechEnd-ev.start > s.preroll+maxSpeech:
		t.Fatalf("utterance has %d samples of speech, over pre-roll + the cut (%d)", ev.speechEnd-ev.start, s.preroll+maxSpeech)
	case int64(len(ev.pcm)) > s.preroll+maxSpeech+s.tail:
		t.Fatalf("utterance of %d samples, over pre-roll + cut + tail", len(ev.pcm))
	case end > s.pos:
		t.Fatalf("utterance ends at %d, after the input seen (%d)", end, s.pos)
	}
	*open, *lastEnd = false, end
	return []utt{{ev.start, ev.speechEnd, end}}
}

// segmentUtts is the utterances of stream written in one piece, with
// their audio checked against the stream's samples.
func segmentUtts(cfg Config, stream []byte) []utt {
	samples := samplesOf(stream)
	var out []utt
	for _, ev := range segment(cfg, stream, max(len(stream), 1)) {
		end := ev.start + int64(len(ev.pcm))
		if end > int64(len(samples)) || !slices.Equal(ev.pcm, samples[ev.start:end]) {
			// An impossible utterance: mark it so that the comparison fails.
			return append(out, utt{-1, -1, -1})
		}
		out = append(out, utt{ev.start, ev.speechEnd, end})
	}
	return out
}

// FuzzAudioFrames drives the path of the session's binary frames: frames
// of the sizes the session passes on (even, at most 64 KiB; here at least
// 10 ms, as smaller ones only make an input slow), at real-time pace (fake
// time in a synctest bubble), into Pipeline.Feed, with an in-process
// recognizer that takes decode time as whisper does; then Stop. Its
// utterances end after 300 ms of silence and are cut at 1 s, and partials
// come every 100 ms, so that inputs of at most 2.5 s (cheap to run, and
// to minimize: the fuzzer minimizes every new input before it counts
// another exec) reach every edge.
// Properties: no panic and no goroutine left (synctest); paced audio is
// never dropped; captions come in utterance order (u1, u2, ...), each
// utterance's partials before its final, nothing after a final; and there
// is exactly one final per utterance the segmenter finds in the same
// audio. The pool and its HTTP are fuzzed by neither: they cost far more
// per input than the pipeline, and their own tests cover them.
func FuzzAudioFrames(f *testing.F) {
	voicedSec := slices.Repeat([]byte{0xff}, 1000/pipelineStepMs)
	quietSec := slices.Repeat([]byte{0x01}, 1000/pipelineStepMs)
	f.Add([]byte{}, slices.Concat(quietSec, voicedSec, quietSec, voicedSec, quietSec), []byte{0x02, 0x80})
	f.Add([]byte{}, slices.Concat(quietSec, slices.Repeat(voicedSec, 4)), []byte{0xff, 0xff})
	f.Add([]byte{0x7f, 0xff, 0x00, 0x80}, []byte{}, []byte{})
	cfg := Config{MaxUtteranceMs: pipelineFuzzCut, SilenceMs: 300, PartialEveryMs: 100}
	if err := cfg.Validate(); err != nil {
		f.Fatal(err)
	}
	cfg = cfg.withDefaults()
	f.Fuzz(func(t *testing.T, raw, envelope, sizes []byte) {
		stream := fuzzAudio(raw, envelope, pipelineStepMs, pipelineFuzzCap)
		stream = stream[:len(stream)&^1] // the session refuses an odd frame
		synctest.Test(t, func(t *testing.T) {
			var captions []Caption // written by the pipeline's goroutine; read after Stop
			p := newPipeline(cfg, fakeWhisper{}, nil, "en", func(c Caption) { captions = append(captions, c) }, zerolog.Nop())
			p.Start(t.Context())
			for _, fr := range fuzzFrames(stream, sizes, pipelineMinFrame, sessionMaxFrame, true) {
				p.Feed(fr)
				time.Sleep(time.Duration(len(fr)/bytesPerFrame) * time.Second / SampleRate)
			}
			p.Stop()
			if d := p.Dropped(); d != 0 {
				t.Fatalf("dropped %d bytes of audio fed in real time", d)
			}
			finals := checkCaptionOrder(t, captions)
			if want := len(segment(cfg, stream, max(len(stream), 1))); finals != want {
				t.Fatalf("%d finals for %d utterances", finals, want)
			}
		})
	})
}

// fakeWhisper is an in-process recognizer for FuzzAudioFrames: it takes
// 40 ms plus 5 ms a second of audio to decode (fake time), as a whisper
// server would, and says one sentence; it gives up when ctx ends.
type fakeWhisper struct{}

func (fakeWhisper) Recognize(ctx context.Context, pcm []int16, _ string, _ bool) (string, string, error) {
	t := time.NewTimer(40*time.Millisecond + time.Duration(len(pcm))*5*time.Millisecond/SampleRate)
	defer t.Stop()
	select {
	case <-t.C:
		return "tell me about yourself", SourceWhisper, nil
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
}

// checkCaptionOrder checks the order of captions and returns the number
// of finals: finals come in utterance order, one each; partials never go
// back to an older utterance; nothing of an utterance follows its final.
func checkCaptionOrder(t *testing.T, captions []Caption) int {
	t.Helper()
	closed := map[int]bool{}
	finals, lastPartial := 0, 0
	for _, c := range captions {
		n, err := strconv.Atoi(strings.TrimPrefix(c.UttID, "u"))
		if err != nil || !strings.HasPrefix(c.UttID, "u") {
			t.Fatalf("caption with utterance id %q", c.UttID)
		}
		switch {
		case closed[n]:
			t.Fatalf("caption %+v after that utterance's final", c)
		case c.Final:
			finals++
			if n != finals {
				t.Fatalf("final of u%d comes as final number %d: %+v", n, finals, captions)
			}
			closed[n] = true
		case n < lastPartial:
			t.Fatalf("partial of u%d after one of u%d", n, lastPartial)
		default:
			lastPartial = n
		}
	}
	return finals
}
