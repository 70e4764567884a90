package upstream

import (
	"encoding/json"

	"github.com/openai/openai-go/v3"
)

// chatRequest is the body of a streaming chat completion, as every
// OpenAI-compatible server reads it.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []any  `json:"messages"` // textMessage, or an openai-go message
	// max_tokens rather than max_completion_tokens: every OpenAI-compatible
	// server we target accepts it.
	MaxTokens   int64   `json:"max_tokens,omitempty"`
	Temperature float64 `json:"temperature,omitempty"` // 0: the server's default
	Stream      bool    `json:"stream"`
	// Only when the usage chunk is asked for: an old server may reject it.
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	// A continuation's flags, for vLLM (servers that need none ignore them).
	ContinueFinal       *bool `json:"continue_final_message,omitempty"`
	AddGenerationPrompt *bool `json:"add_generation_prompt,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// textMessage is a message whose content is one string.
type textMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatBody encodes call (Messages with the fields beside them) as its
// request body. It encodes a system or user message of plain text itself,
// and any other message (a screenshot's image parts) with openai-go's
// encoder: that encoder works by reflection, and for the engine's prompts
// it was 2–3% of poise's CPU at 1,000 sessions (BenchmarkChatBody).
func chatBody(call Call) ([]byte, error) {
	msgs := make([]any, 0, len(call.Messages)+1)
	for _, m := range call.Messages {
		msgs = append(msgs, wireMessage(m))
	}
	req := chatRequest{Model: call.Model, MaxTokens: max(call.MaxTokens, 0), Temperature: call.Temperature, Stream: true}
	if call.Usage {
		req.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if call.Prefill != "" {
		msgs = append(msgs, textMessage{Role: "assistant", Content: call.Prefill})
		yes, no := true, false
		req.ContinueFinal, req.AddGenerationPrompt = &yes, &no
	}
	req.Messages = msgs
	return json.Marshal(req)
}

// wireMessage is m as chatBody encodes it: a textMessage when m is a system
// or user message of plain text and nothing else (as openai.SystemMessage
// and openai.UserMessage make them), else m itself.
func wireMessage(m openai.ChatCompletionMessageParamUnion) any {
	if m.OfDeveloper != nil || m.OfAssistant != nil || m.OfTool != nil || m.OfFunction != nil {
		return m
	}
	switch {
	case m.OfSystem != nil && m.OfUser == nil:
		s := m.OfSystem
		if s.Content.OfString.Valid() && s.Content.OfArrayOfContentParts == nil && !s.Name.Valid() && len(s.ExtraFields()) == 0 {
			return textMessage{Role: "system", Content: s.Content.OfString.Value}
		}
	case m.OfUser != nil && m.OfSystem == nil:
		u := m.OfUser
		if u.Content.OfString.Valid() && u.Content.OfArrayOfContentParts == nil && !u.Name.Valid() && len(u.ExtraFields()) == 0 {
			return textMessage{Role: "user", Content: u.Content.OfString.Value}
		}
	}
	return m
}
