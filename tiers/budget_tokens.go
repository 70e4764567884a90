package tiers

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
)

// tokensPerMessage is the per-message overhead of a prompt, as OpenAI
// counts it.
const tokensPerMessage = 4

// estimateTokens is a rough token count for usage an endpoint did not
// report: about four bytes per token for Latin text, one per CJK rune.
// The gateway and the answer engine's Budget share it.
func estimateTokens(text string) int {
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

// promptTokens estimates the prompt of a call: its messages and, for a
// continuation, the assistant prefill.
func promptTokens(msgs []openai.ChatCompletionMessageParamUnion, prefill string) int {
	n := 0
	for _, m := range msgs {
		raw, err := json.Marshal(m)
		if err != nil {
			continue
		}
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(raw, &msg)
		n += estimateTokens(contentText(msg.Content)) + tokensPerMessage
	}
	if prefill != "" {
		n += estimateTokens(prefill) + tokensPerMessage
	}
	return n
}
