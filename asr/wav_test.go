package asr

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

func TestWAVRoundTrip(t *testing.T) {
	t.Parallel()
	pcm := []int16{0, 1, -1, 32767, -32768, 1234}
	got, rate, err := DecodeWAV(EncodeWAV(pcm, 8000))
	if err != nil {
		t.Fatal(err)
	}
	if rate != 8000 || !slices.Equal(got, pcm) {
		t.Fatalf("got %d Hz %v, want 8000 Hz %v", rate, got, pcm)
	}
}

func TestWAVHeaderIsCanonical(t *testing.T) {
	t.Parallel()
	b := EncodeWAV(make([]int16, 10), SampleRate)
	if len(b) != wavHeaderLen+20 {
		t.Fatalf("len %d", len(b))
	}
	checks := []struct {
		off  int
		want uint32
	}{
		{4, 36 + 20}, {16, 16}, {24, SampleRate}, {28, 2 * SampleRate}, {40, 20},
	}
	for _, c := range checks {
		if got := binary.LittleEndian.Uint32(b[c.off:]); got != c.want {
			t.Errorf("offset %d: %d, want %d", c.off, got, c.want)
		}
	}
}

func TestDecodeWAVSkipsChunksAndReadsStreamingSizes(t *testing.T) {
	t.Parallel()
	pcm := []int16{5, -5, 7}
	plain := EncodeWAV(pcm, SampleRate)
	// Insert a LIST chunk (odd size, padded) between fmt and data, and mark
	// the data size as unknown (0xFFFFFFFF) as streaming writers do.
	list := []byte{'L', 'I', 'S', 'T', 3, 0, 0, 0, 'a', 'b', 'c', 0}
	b := slices.Concat(plain[:36], list, plain[36:])
	binary.LittleEndian.PutUint32(b[36+len(list)+4:], 0xFFFFFFFF)
	got, _, err := DecodeWAV(b)
	if err != nil || !slices.Equal(got, pcm) {
		t.Fatalf("got %v, %v; want %v", got, err, pcm)
	}
}

func TestDecodeWAVRejects(t *testing.T) {
	t.Parallel()
	stereo := EncodeWAV([]int16{1, 2}, SampleRate)
	binary.LittleEndian.PutUint16(stereo[22:], 2)
	float := EncodeWAV([]int16{1, 2}, SampleRate)
	binary.LittleEndian.PutUint16(float[20:], 3)
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"not riff", []byte("RIFX0000WAVEfmt ")},
		{"stereo", stereo},
		{"float", float},
		{"no data", EncodeWAV(nil, SampleRate)[:36]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := DecodeWAV(tt.b); !errors.Is(err, ErrWAV) {
				t.Fatalf("err = %v, want ErrWAV", err)
			}
		})
	}
}

func FuzzDecodeWAV(f *testing.F) {
	f.Add(EncodeWAV([]int16{1, -1}, SampleRate))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEdata\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		pcm, _, err := DecodeWAV(b)
		if err == nil && len(pcm) > len(b)/2 {
			t.Fatalf("%d samples from %d bytes", len(pcm), len(b))
		}
	})
}
