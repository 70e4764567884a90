// Package load drives many concurrent Poise sessions over real WebSockets
// the way candidates' browsers do: each session streams a WAV clip as
// real-time PCM audio and/or types questions on a seeded schedule, sends
// heartbeats, and resumes on another node when its connection dies. It
// records what a candidate would feel: per question, the time to first
// useful content and the level and source of the answer; per utterance,
// the caption latency; every error message; every lost or doubled seq;
// and the number of sessions at each level over time.
//
// cmd/loadgen runs it from the command line and cmd/chaos runs it under
// injected faults.
package load
