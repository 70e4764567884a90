package asr

import "math"

// VAD framing and tuning constants.
const (
	frameMs      = 20                          // one VAD frame
	FrameSamples = SampleRate * frameMs / 1000 // samples in one 20 ms frame
	highPassHz   = 80.0                        // removes DC and mains hum before measuring
	floorFall    = 0.5                         // per quiet frame: share of the way down to a quieter frame
	floorRise    = 0.1                         // per quiet frame: share of the way up to a louder one
	speechRiseDB = 0.02                        // per speech frame (1 dB/s), so a lasting noise step is learned
	silenceDB    = -150.0                      // level of an all-zero frame
	fullScale    = 32768.0
)

// BoundaryKind says what a Boundary marks.
type BoundaryKind uint8

// Boundary kinds. NoBoundary is the zero value: nothing happened.
const (
	NoBoundary BoundaryKind = iota
	// SpeechStart: an utterance opened; At is the first sample of its
	// speech onset (pre-roll is the caller's business).
	SpeechStart
	// SpeechEnd: the utterance closed after enough silence; At is the
	// sample just after its last speech frame.
	SpeechEnd
	// SpeechCut: the utterance reached the maximum length while speech
	// went on; it closes at At and a new one opens at At.
	SpeechCut
)

func (k BoundaryKind) String() string {
	switch k {
	case SpeechStart:
		return "start"
	case SpeechEnd:
		return "end"
	case SpeechCut:
		return "cut"
	}
	return "none"
}

// Boundary is one utterance edge, as a sample offset from the first sample
// the VAD was given.
type Boundary struct {
	Kind BoundaryKind
	At   int64
}

// VAD is an energy voice activity detector with an adaptive noise floor,
// after whisper.cpp's vad_simple (high-pass, then energy against a
// reference) but per frame and streaming: a frame is speech when its
// energy is ThresholdDB above the noise floor (never below FloorDBFS) and,
// if MaxZCR is set, its zero-crossing rate is low enough. The floor follows
// quiet frames (quickly down, more slowly up) and creeps up by 0.5 dB/s
// within an utterance, so a lasting noise step is learned. The first frame seeds it.
//
// A VAD is not safe for concurrent use; its owner feeds it frames in order.
type VAD struct {
	// Settings, fixed by NewVAD.
	thresholdDB     float64
	minFloorDB      float64
	maxZCR          float64
	minSpeechFrames int
	silenceFrames   int
	maxSamples      int64
	hpAlpha         float64

	// State.
	pos       int64   // samples seen so far
	floorDB   float64 // noise floor estimate, dB of mean square (full scale = 0)
	seeded    bool    // floorDB has been set from a first frame
	hpIn      float64 // last input sample, for the high-pass filter
	hpOut     float64 // last filter output
	speaking  bool    // an utterance is open
	run       int     // consecutive speech frames while not speaking
	runStart  int64   // first sample of that run
	quiet     int     // consecutive non-speech frames while speaking
	onset     int64   // start of the open utterance's speech
	speechEnd int64   // sample after the last speech frame of the open utterance
}

// NewVAD returns a detector for cfg's VAD and timing fields (zero fields
// take their defaults).
func NewVAD(cfg Config) *VAD {
	cfg = cfg.withDefaults()
	rc := 1 / (2 * math.Pi * highPassHz)
	dt := 1.0 / SampleRate
	return &VAD{
		thresholdDB:     cfg.ThresholdDB,
		minFloorDB:      cfg.FloorDBFS,
		maxZCR:          cfg.MaxZCR,
		minSpeechFrames: framesFor(cfg.MinSpeechMs),
		silenceFrames:   framesFor(cfg.SilenceMs),
		maxSamples:      int64(cfg.MaxUtteranceMs) * SampleRate / 1000,
		hpAlpha:         rc / (rc + dt),
	}
}

// framesFor rounds a duration up to whole frames, at least one.
func framesFor(msec int) int {
	return max(1, (msec+frameMs-1)/frameMs)
}

// Process takes the next frame (FrameSamples long for the documented
// timings; any length works) and returns the boundary it completes, if any.
// It does not allocate.
func (v *VAD) Process(frame []int16) Boundary {
	if len(frame) == 0 {
		return Boundary{}
	}
	start := v.pos
	v.pos += int64(len(frame))
	level, zcr := v.measure(frame)
	if !v.seeded {
		v.floorDB, v.seeded = max(level, v.minFloorDB), true
	}
	speech := level > max(v.floorDB, v.minFloorDB)+v.thresholdDB &&
		(v.maxZCR <= 0 || zcr <= v.maxZCR)
	v.trackFloor(level, speech || v.speaking)
	if !v.speaking {
		return v.whileIdle(speech, start)
	}
	return v.whileSpeaking(speech)
}

// Flush ends the input: an open utterance closes where its speech ended
// (SpeechEnd), else NoBoundary. The VAD may then go on with new input.
func (v *VAD) Flush() Boundary {
	if !v.speaking {
		v.run = 0
		return Boundary{}
	}
	v.speaking, v.quiet = false, 0
	return Boundary{Kind: SpeechEnd, At: v.speechEnd}
}

func (v *VAD) whileIdle(speech bool, frameStart int64) Boundary {
	if !speech {
		v.run = 0
		return Boundary{}
	}
	if v.run == 0 {
		v.runStart = frameStart
	}
	v.run++
	if v.run < v.minSpeechFrames {
		return Boundary{}
	}
	v.speaking, v.run, v.quiet = true, 0, 0
	v.onset, v.speechEnd = v.runStart, v.pos
	return Boundary{Kind: SpeechStart, At: v.onset}
}

func (v *VAD) whileSpeaking(speech bool) Boundary {
	if speech {
		v.quiet = 0
		v.speechEnd = v.pos
	} else {
		v.quiet++
		if v.quiet >= v.silenceFrames {
			v.speaking = false
			return Boundary{Kind: SpeechEnd, At: v.speechEnd}
		}
	}
	if v.pos-v.onset < v.maxSamples {
		return Boundary{}
	}
	if v.quiet > 0 { // already trailing off: end where the speech ended
		v.speaking = false
		return Boundary{Kind: SpeechEnd, At: v.speechEnd}
	}
	v.onset = v.pos
	return Boundary{Kind: SpeechCut, At: v.pos}
}

// trackFloor moves the noise floor quickly down to quieter frames; up, it
// follows quiet frames between utterances, and only creeps within one (the
// softer frames of speech are not noise).
func (v *VAD) trackFloor(level float64, inSpeech bool) {
	switch {
	case level < v.floorDB:
		v.floorDB += floorFall * (level - v.floorDB)
	case inSpeech:
		v.floorDB += min(speechRiseDB, level-v.floorDB)
	default:
		v.floorDB += floorRise * (level - v.floorDB)
	}
	v.floorDB = max(v.floorDB, v.minFloorDB)
}

// measure high-passes the frame and returns its mean-square level in dB
// relative to full scale and its zero-crossing rate.
func (v *VAD) measure(frame []int16) (levelDB, zcr float64) {
	var sum float64
	crossings := 0
	a, xPrev, y := v.hpAlpha, v.hpIn, v.hpOut
	prevNeg := y < 0
	for _, s := range frame {
		x := float64(s)
		y = a * (y + x - xPrev)
		xPrev = x
		sum += y * y
		neg := y < 0
		if neg != prevNeg {
			crossings++
		}
		prevNeg = neg
	}
	v.hpIn, v.hpOut = xPrev, y
	n := float64(len(frame))
	ms := sum / n / (fullScale * fullScale)
	if ms <= 0 {
		return silenceDB, 0
	}
	return 10 * math.Log10(ms), float64(crossings) / n
}
