package asr

import (
	"regexp"
	"strings"
)

// nonSpeech matches the tags whisper writes for what is not speech:
// [BLANK_AUDIO], [Music], (silence), [ Inaudible ], *cough* ...
var nonSpeech = regexp.MustCompile(`\[[^\]]*\]|\([^)]*\)|\*[^*]*\*`)

// cleanText trims a transcript and drops whisper's non-speech tags, so that
// a clip without speech yields "".
func cleanText(s string) string {
	s = nonSpeech.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}
