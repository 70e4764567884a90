package load

import (
	"context"
	"time"
)

// audioState streams a clip in real time, looping. Owned by drive.
type audioState struct {
	clip        *Clip
	startFrames []int     // per utterance, the frame holding its first sample
	endFrames   []int     // per utterance, the frame holding its last sample
	startAt     time.Time // when frame 0 is due
	started     bool      // audio_start was sent on the current connection
	sent        int       // frames sent since startAt
	nextUtt     int       // the next utterance whose end is to be sent, in this loop of the clip
}

func newAudioState(clip *Clip, startAt time.Time) audioState {
	return audioState{clip: clip, startFrames: clip.startFrames(), endFrames: clip.endFrames(), startAt: startAt}
}

// restart begins the clip again at now, on a new connection.
func (a *audioState) restart(now time.Time) {
	if a.clip == nil {
		return
	}
	a.startAt, a.started, a.sent, a.nextUtt = now, false, 0, 0
}

// streamAudio sends every frame due by now (catching up after a late
// tick, as a browser's audio buffer does) and records each utterance end
// it sends.
func (c *client) streamAudio(ctx context.Context, now time.Time) {
	a := &c.audio
	if now.Before(a.startAt) {
		return
	}
	if !a.started {
		a.started = true
		if send(ctx, c.ws, map[string]any{"type": "audio_start", "sample_rate": 16000, "encoding": "pcm_s16le", "source": "tab"}) != nil {
			return // the reader sees the dead connection
		}
	}
	due := int(now.Sub(a.startAt)/frameDuration) + 1
	for a.sent < due {
		i := a.sent % len(a.clip.Frames)
		if i == 0 {
			a.nextUtt = 0
		}
		if sendAudio(ctx, c.ws, a.clip.Frames[i]) != nil {
			return
		}
		a.sent++
		if a.nextUtt < len(a.endFrames) && i == a.endFrames[a.nextUtt] {
			c.rec.uttEnded(a.nextUtt, time.Now())
			a.nextUtt++
		}
	}
}

// cutSpeech is how much of an utterance must have been sent for
// audio_stop to count as cutting it: less may be too short for the
// server's voice detection to have opened an utterance at all.
const cutSpeech = 200 * time.Millisecond

// speaking reports whether the last frame sent is inside an utterance, at
// least cutSpeech after its start and before its end: audio_stop then
// cuts it, and the server flushes what was said as its final.
func (a *audioState) speaking() bool {
	if a.clip == nil || a.sent == 0 || a.nextUtt >= len(a.startFrames) {
		return false
	}
	return (a.sent-1)%len(a.clip.Frames) >= a.startFrames[a.nextUtt]+int(cutSpeech/frameDuration)
}
