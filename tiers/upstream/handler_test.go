package upstream

import (
	"strings"

	"github.com/openai/openai-go/v3"
)

// textHandler reads a stream as the answer engine does: choice 0's
// content, a refusal as ClassRefused, done at its finish_reason.
type textHandler struct {
	text     strings.Builder
	finished bool
}

func (h *textHandler) Chunk(ch openai.ChatCompletionChunk) (bool, string, error) {
	if h.finished || len(ch.Choices) == 0 {
		return false, "", nil
	}
	c := ch.Choices[0]
	if c.Delta.Refusal != "" {
		return false, "", &Error{Class: ClassRefused, Message: c.Delta.Refusal}
	}
	h.text.WriteString(c.Delta.Content)
	h.finished = c.FinishReason != ""
	return c.Delta.Content != "", c.FinishReason, nil
}

func (h *textHandler) Ended() string { return "" }
