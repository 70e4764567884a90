package upstream

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokensPerMessage is the per-message overhead of a prompt, as OpenAI
// counts it.
const tokensPerMessage = 4

// EstimateTokens is a rough token count for usage an endpoint did not
// report: about four bytes per token for Latin text, one per CJK rune.
// The gateway and the answer engine's Budget share it.
func EstimateTokens(text string) int {
	if text == "" {
		return 0
	}
	var bytes, cjk int
	for _, r := range text {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		} else {
			bytes += utf8.RuneLen(r)
		}
	}
	return max(1, (bytes+3)/4+cjk)
}

// MessageTokens estimates one chat message of a prompt from its JSON
// content (a string, or an array of parts whose text parts count), with
// the per-message overhead.
func MessageTokens(content json.RawMessage) int {
	return EstimateTokens(contentText(content)) + tokensPerMessage
}

// TextMessageTokens estimates one chat message whose content is text.
func TextMessageTokens(text string) int {
	return EstimateTokens(text) + tokensPerMessage
}

// contentText is a message content's text: the string, or its text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
