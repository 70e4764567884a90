package asr

import (
	"regexp"
	"strings"
)

// nonSpeech matches the tags whisper writes for what is not speech:
// [BLANK_AUDIO], [Music], (silence), [ Inaudible ], *cough* ...
var nonSpeech = regexp.MustCompile(`\[[^\]]*\]|\([^)]*\)|\*[^*]*\*`)

// SimulatedMark starts a transcript that a simulator made up (vendorsim's
// own mark): no speech was recognized. cleanText keeps it, so that the page
// can show such a caption as simulated.
const SimulatedMark = "[simulated]"

// cleanText trims a transcript and drops whisper's non-speech tags, so that
// a clip without speech yields "". A leading SimulatedMark stays.
func cleanText(s string) string {
	rest, simulated := strings.CutPrefix(strings.TrimSpace(s), SimulatedMark)
	rest = strings.Join(strings.Fields(nonSpeech.ReplaceAllString(rest, " ")), " ")
	if simulated && rest != "" {
		return SimulatedMark + " " + rest
	}
	return rest
}

// Unmarked is text without its SimulatedMark: what was "said", for the
// answer prompt and the question detector.
func Unmarked(text string) string {
	rest, ok := strings.CutPrefix(text, SimulatedMark)
	if !ok {
		return text
	}
	return strings.TrimSpace(rest)
}
