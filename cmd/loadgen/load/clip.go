package load

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/poise-dev/poise/asr"
)

// Audio framing of the WebSocket protocol.
const (
	frameDuration   = 100 * time.Millisecond                                      // one binary frame, as the browser sends (web/static/pcm-worklet.js)
	samplesPerFrame = asr.SampleRate * int(frameDuration/time.Millisecond) / 1000 // 1600 at 16 kHz
)

// Clip is a 16 kHz mono recording cut into 100 ms frames, with the spans of
// its utterances.
type Clip struct {
	Name       string
	Frames     [][]byte    // little-endian PCM16, samplesPerFrame samples each (the last may be shorter)
	Utterances []Utterance // in order
}

// Utterance is one spoken span of a clip.
type Utterance struct {
	StartMS int    `json:"start_ms"`
	EndMS   int    `json:"end_ms"`
	Text    string `json:"text"`
}

// Duration is the clip's length.
func (c *Clip) Duration() time.Duration { return time.Duration(len(c.Frames)) * frameDuration }

// endFrames returns, per utterance, the index of the frame that holds its
// last sample.
func (c *Clip) endFrames() []int { return c.frames(func(u Utterance) int { return u.EndMS }) }

// startFrames returns, per utterance, the index of the frame that holds
// its first sample.
func (c *Clip) startFrames() []int { return c.frames(func(u Utterance) int { return u.StartMS }) }

func (c *Clip) frames(at func(Utterance) int) []int {
	out := make([]int, len(c.Utterances))
	for i, u := range c.Utterances {
		out[i] = min(max(at(u)/int(frameDuration/time.Millisecond), 0), len(c.Frames)-1)
	}
	return out
}

// LoadClip reads a 16 kHz mono PCM16 WAV and its utterances from a
// boundaries file (a JSON list of {"file", "utterances": [{start_ms,
// end_ms, text}]}, as asr/testdata/boundaries.json), matched by the WAV's
// base name.
func LoadClip(wavPath, boundariesPath string) (*Clip, error) {
	raw, err := os.ReadFile(wavPath)
	if err != nil {
		return nil, fmt.Errorf("load: clip: %w", err)
	}
	pcm, rate, err := asr.DecodeWAV(raw)
	if err != nil {
		return nil, fmt.Errorf("load: clip %s: %w", wavPath, err)
	}
	if rate != asr.SampleRate {
		return nil, fmt.Errorf("load: clip %s: sample rate %d, want %d", wavPath, rate, asr.SampleRate)
	}
	utts, err := readBoundaries(boundariesPath, filepath.Base(wavPath))
	if err != nil {
		return nil, err
	}
	c := &Clip{Name: filepath.Base(wavPath), Utterances: utts}
	for off := 0; off < len(pcm); off += samplesPerFrame {
		chunk := pcm[off:min(off+samplesPerFrame, len(pcm))]
		b := make([]byte, 2*len(chunk))
		for i, s := range chunk {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
		}
		c.Frames = append(c.Frames, b)
	}
	if len(c.Frames) == 0 {
		return nil, fmt.Errorf("load: clip %s has no samples", wavPath)
	}
	return c, nil
}

func readBoundaries(path, file string) ([]Utterance, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load: boundaries: %w", err)
	}
	var all []struct {
		File       string      `json:"file"`
		Utterances []Utterance `json:"utterances"`
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("load: boundaries %s: %w", path, err)
	}
	for _, f := range all {
		if f.File == file {
			return f.Utterances, nil
		}
	}
	return nil, fmt.Errorf("load: boundaries %s: no entry for %s", path, file)
}
