package asr

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// boundaryTolerance is how far a detected edge may sit from the generated one.
const boundaryTolerance = 150 * SampleRate / 1000 // samples

type clipTruth struct {
	File       string `json:"file"`
	Utterances []struct {
		StartMs int    `json:"start_ms"`
		EndMs   int    `json:"end_ms"`
		Text    string `json:"text"`
	} `json:"utterances"`
}

func loadTruth(t testing.TB) []clipTruth {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "boundaries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var clips []clipTruth
	if err := json.Unmarshal(b, &clips); err != nil {
		t.Fatal(err)
	}
	if len(clips) == 0 {
		t.Fatal("boundaries.json lists no clips")
	}
	return clips
}

func loadWAV(t testing.TB, name string) []int16 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	pcm, rate, err := DecodeWAV(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if rate != SampleRate {
		t.Fatalf("%s: %d Hz, want %d", name, rate, SampleRate)
	}
	return pcm
}

// runVAD feeds pcm in 20 ms frames and returns every boundary.
func runVAD(cfg Config, pcm []int16) []Boundary {
	v := NewVAD(cfg)
	var out []Boundary
	for off := 0; off < len(pcm); off += FrameSamples {
		if b := v.Process(pcm[off:min(off+FrameSamples, len(pcm))]); b.Kind != NoBoundary {
			out = append(out, b)
		}
	}
	return out
}

func samplesAt(msec int) int64 { return int64(msec) * SampleRate / 1000 }

func TestVADFindsQuestionBoundaries(t *testing.T) {
	t.Parallel()
	for _, clip := range loadTruth(t) {
		t.Run(clip.File, func(t *testing.T) {
			got := runVAD(Config{}, loadWAV(t, clip.File))
			if len(got) != 2*len(clip.Utterances) {
				t.Fatalf("got %d boundaries %v, want start+end for %d utterances", len(got), got, len(clip.Utterances))
			}
			for i, u := range clip.Utterances {
				start, end := got[2*i], got[2*i+1]
				if start.Kind != SpeechStart || end.Kind != SpeechEnd {
					t.Fatalf("utterance %d: kinds %v, %v", i, start.Kind, end.Kind)
				}
				checkNear(t, "start", start.At, samplesAt(u.StartMs))
				checkNear(t, "end", end.At, samplesAt(u.EndMs))
			}
		})
	}
}

func checkNear(t *testing.T, what string, got, want int64) {
	t.Helper()
	if d := got - want; d < -boundaryTolerance || d > boundaryTolerance {
		t.Errorf("%s at %d ms, want %d ms ± 150", what, got*1000/SampleRate, want*1000/SampleRate)
	}
}

func TestVADIgnoresNoiseAndSilence(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"noise_only.wav", "silence_only.wav"} {
		t.Run(name, func(t *testing.T) {
			if got := runVAD(Config{}, loadWAV(t, name)); len(got) != 0 {
				t.Fatalf("got boundaries %v, want none", got)
			}
		})
	}
}

func TestVADSilenceSetting(t *testing.T) {
	t.Parallel()
	// Gaps of 1.5 s, and enough quiet at the end for the longest setting.
	pcm := concat(loadWAV(t, "en_questions.wav"), noise(int(samplesAt(2500)), 30, 3))
	tests := []struct {
		name      string
		silenceMs int
		want      int // utterances
	}{
		{"default 600 ms splits", 0, 3},
		{"2 s merges", 2000, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runVAD(Config{SilenceMs: tt.silenceMs}, pcm)
			if len(got) != 2*tt.want {
				t.Fatalf("got %v, want %d utterances", got, tt.want)
			}
		})
	}
}

// voiced returns n samples of a buzzy 150 Hz voice-like tone at about
// -20 dBFS, modulated like syllables but never silent, faded in and out
// over 5 ms as natural sounds are.
func voiced(n int) []int16 {
	out := make([]int16, n)
	fade := float64(samplesAt(5))
	for i := range out {
		ts := float64(i) / SampleRate
		env := 0.6 + 0.4*math.Sin(2*math.Pi*4*ts)
		env *= min(1, float64(i)/fade, float64(n-1-i)/fade)
		v := math.Sin(2*math.Pi*150*ts) + 0.5*math.Sin(2*math.Pi*300*ts) + 0.25*math.Sin(2*math.Pi*450*ts)
		out[i] = int16(2500 * env * v)
	}
	return out
}

// noise returns n samples of white noise with the given peak amplitude.
func noise(n int, peak float64, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, seed+1))
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(peak * (2*r.Float64() - 1))
	}
	return out
}

func concat(parts ...[]int16) []int16 {
	var out []int16
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestVADCutsLongSpeech(t *testing.T) {
	t.Parallel()
	bed := func(ms int) []int16 { return noise(int(samplesAt(ms)), 30, uint64(ms)) }
	pcm := concat(bed(1000), voiced(int(samplesAt(20000))), bed(2000))
	speech := func(a, b []int16) []int16 {
		out := make([]int16, len(a))
		for i := range a {
			out[i] = a[i] + b[i]
		}
		return out
	}
	pcm = speech(pcm, noise(len(pcm), 30, 7))
	got := runVAD(Config{}, pcm)
	want := []Boundary{
		{SpeechStart, samplesAt(1000)},
		{SpeechCut, samplesAt(16000)},
		{SpeechEnd, samplesAt(21000)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind {
			t.Fatalf("boundary %d: got %v, want %v", i, got[i], want[i])
		}
		checkNear(t, want[i].Kind.String(), got[i].At, want[i].At)
	}
}

func TestVADNeedsMinimumSpeech(t *testing.T) {
	t.Parallel()
	quiet := make([]int16, samplesAt(1000))
	tests := []struct {
		name    string
		burstMs int
		want    int
	}{
		{"40 ms click ignored", 40, 0},
		{"100 ms word kept", 100, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runVAD(Config{}, concat(quiet, voiced(int(samplesAt(tt.burstMs))), quiet))
			if len(got) != tt.want {
				t.Fatalf("got %v, want %d boundaries", got, tt.want)
			}
		})
	}
}

func TestVADZeroCrossingGate(t *testing.T) {
	t.Parallel()
	quiet := noise(int(samplesAt(1000)), 20, 1)
	hiss := noise(int(samplesAt(1000)), 8000, 2) // loud but all zero crossings
	pcm := concat(quiet, hiss, quiet, voiced(int(samplesAt(1000))), quiet)
	if got := runVAD(Config{}, pcm); len(got) != 4 {
		t.Fatalf("without the gate: got %v, want hiss and voice", got)
	}
	got := runVAD(Config{MaxZCR: 0.25}, pcm)
	if len(got) != 2 || got[0].Kind != SpeechStart {
		t.Fatalf("with the gate: got %v, want the voice only", got)
	}
	checkNear(t, "start", got[0].At, samplesAt(3000))
}

func TestVADLearnsLastingNoise(t *testing.T) {
	t.Parallel()
	// A fan starts 25 dB above the room: at first it looks like speech,
	// but the floor creeps up under it and the "utterance" ends.
	pcm := concat(noise(int(samplesAt(1000)), 60, 1), noise(int(samplesAt(60000)), 1100, 2))
	got := runVAD(Config{}, pcm)
	if len(got) == 0 || got[len(got)-1].Kind != SpeechEnd {
		t.Fatalf("got %v, want the noise step to end", got)
	}
	if last := got[len(got)-1].At; last > samplesAt(45000) {
		t.Fatalf("noise counted as speech until %d ms", last*1000/SampleRate)
	}
}

func BenchmarkVADFrame(b *testing.B) {
	pcm := loadWAV(b, "en_questions.wav")
	frames := len(pcm) / FrameSamples
	v := NewVAD(Config{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		off := (i % frames) * FrameSamples
		v.Process(pcm[off : off+FrameSamples])
	}
}
