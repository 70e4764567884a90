// Package asr turns a session's browser audio into live captions: 16 kHz
// mono PCM16 frames → voice activity detection → utterances → a shared
// recognizer chain (a pool of whisper.cpp servers, then an optional cloud
// speech-to-text) → partial and final captions. Captions have their own
// backend health and never share the answer levels of package tiers; given
// the health center's circuits (Config.Circuits), they route by those too
// and feed them their results.
package asr
