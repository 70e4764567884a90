package asr

import (
	"encoding/binary"
	"slices"
	"testing"
)

func pcmBytes(pcm []int16) []byte {
	b := make([]byte, 2*len(pcm))
	for i, s := range pcm {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
	}
	return b
}

// segment writes b in chunks of the given size and flushes; it returns
// the closed utterances.
func segment(cfg Config, b []byte, chunk int) []segEvent {
	s := newSegmenter(cfg)
	var closed []segEvent
	keep := func(evs []segEvent) {
		for _, ev := range evs {
			if !ev.opened {
				closed = append(closed, ev)
			}
		}
	}
	for off := 0; off < len(b); off += chunk {
		keep(s.write(b[off:min(off+chunk, len(b))]))
	}
	keep(s.flush())
	return closed
}

func TestSegmenterKeepsPreroll(t *testing.T) {
	t.Parallel()
	quiet := noise(int(samplesAt(1000)), 30, 1)
	pcm := concat(quiet, voiced(int(samplesAt(800))), quiet)
	got := segment(Config{}, pcmBytes(pcm), 640)
	if len(got) != 1 {
		t.Fatalf("got %d utterances, want 1", len(got))
	}
	u := got[0]
	checkNear(t, "start", u.start, samplesAt(1000-250))
	checkNear(t, "end of speech", u.speechEnd, samplesAt(1800))
	end := u.start + int64(len(u.pcm))
	if want := u.speechEnd + samplesAt(tailMs); end != want {
		t.Errorf("audio ends at %d, want end of speech + %d ms tail (%d)", end, tailMs, want)
	}
	if !slices.Equal(u.pcm, pcm[u.start:end]) {
		t.Error("utterance audio differs from the input at its offsets")
	}
}

func TestSegmenterPrerollNeverOverlapsPreviousUtterance(t *testing.T) {
	t.Parallel()
	quiet := func(ms int) []int16 { return noise(int(samplesAt(ms)), 30, uint64(ms)) }
	pcm := concat(quiet(1000), voiced(int(samplesAt(500))), quiet(400), voiced(int(samplesAt(500))), quiet(1000))
	got := segment(Config{SilenceMs: 300}, pcmBytes(pcm), 3200)
	if len(got) != 2 {
		t.Fatalf("got %d utterances, want 2", len(got))
	}
	firstEnd := got[0].start + int64(len(got[0].pcm))
	if got[1].start != firstEnd {
		t.Fatalf("second starts at %d, want right after the first (%d)", got[1].start, firstEnd)
	}
}

func TestSegmenterChunkingDoesNotMatter(t *testing.T) {
	t.Parallel()
	b := pcmBytes(loadWAV(t, "en_questions.wav"))
	want := segment(Config{}, b, len(b))
	for _, chunk := range []int{1, 3, 641, 64 << 10} {
		got := segment(Config{}, b, chunk)
		if len(got) != len(want) {
			t.Fatalf("chunk %d: %d utterances, want %d", chunk, len(got), len(want))
		}
		for i := range got {
			if got[i].start != want[i].start || !slices.Equal(got[i].pcm, want[i].pcm) {
				t.Fatalf("chunk %d: utterance %d differs", chunk, i)
			}
		}
	}
}

func TestSegmenterCutContinuesWithoutGap(t *testing.T) {
	t.Parallel()
	quiet := noise(int(samplesAt(500)), 30, 1)
	pcm := concat(quiet, voiced(int(samplesAt(7000))), quiet)
	got := segment(Config{MaxUtteranceMs: 3000}, pcmBytes(pcm), 3200)
	if len(got) != 3 {
		t.Fatalf("got %d utterances, want 3 (cut at 3 s twice)", len(got))
	}
	for i := 1; i < len(got); i++ {
		if prevEnd := got[i-1].start + int64(len(got[i-1].pcm)); got[i].start != prevEnd {
			t.Fatalf("utterance %d starts at %d, previous ended at %d", i, got[i].start, prevEnd)
		}
	}
}

func TestRingKeepsTheLastSamples(t *testing.T) {
	t.Parallel()
	r := newRing(5)
	r.push([]int16{1, 2, 3})
	r.push([]int16{4, 5, 6, 7})
	if got := r.last(5, 0); !slices.Equal(got, []int16{3, 4, 5, 6, 7}) {
		t.Fatalf("last(5) = %v", got)
	}
	r.push([]int16{8, 9, 10, 11, 12, 13})
	if got := r.last(2, 0); !slices.Equal(got, []int16{12, 13}) {
		t.Fatalf("last(2) = %v", got)
	}
}

// BenchmarkPipelineFraming measures the pipeline's own work per second of
// audio: byte decoding, framing, VAD, pre-roll and utterance buffers.
func BenchmarkPipelineFraming(b *testing.B) {
	raw := pcmBytes(loadWAV(b, "en_questions.wav"))
	second := SampleRate * bytesPerFrame
	seconds := len(raw) / second
	s := newSegmenter(Config{})
	b.SetBytes(int64(second))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		off := (i % seconds) * second
		for c := off; c < off+second; c += 3200 { // 100 ms WebSocket frames
			s.write(raw[c : c+3200])
		}
	}
}
