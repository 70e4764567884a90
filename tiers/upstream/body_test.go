package upstream

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// openaiParams is call as openai-go's params: what its encoder would send,
// before option.WithJSONSet adds the flags.
func openaiParams(call Call) openai.ChatCompletionNewParams {
	msgs := call.Messages
	if call.Prefill != "" {
		msgs = append(msgs[:len(msgs):len(msgs)], openai.AssistantMessage(call.Prefill))
	}
	p := openai.ChatCompletionNewParams{Model: call.Model, Messages: msgs}
	if call.Temperature != 0 {
		p.Temperature = openai.Float(call.Temperature)
	}
	if call.MaxTokens > 0 {
		p.MaxTokens = openai.Int(call.MaxTokens)
	}
	if call.Usage {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p
}

// openaiBody is what openai-go makes of call, decoded: its params, encoded
// by its own encoder, with the flags option.WithJSONSet would add. It is
// the reference chatBody must agree with.
func openaiBody(t *testing.T, call Call) map[string]any {
	t.Helper()
	b, err := json.Marshal(openaiParams(call))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	body["stream"] = true
	if call.Prefill != "" {
		body["continue_final_message"], body["add_generation_prompt"] = true, false
	}
	return body
}

func decoded(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// TestChatBodyMatchesOpenAI: chatBody's body says what openai-go's would,
// for text prompts (encoded by chatBody) and for the messages it leaves to
// openai-go (a screenshot's image, a named or assistant message).
func TestChatBodyMatchesOpenAI(t *testing.T) {
	named := openai.UserMessage("hello")
	named.OfUser.Name = openai.String("candidate")
	image := openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart("What does this code do?"),
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo="}),
	})
	prompt := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You help a candidate.\nAnswer in English: <b>\"short\"</b> & \u2028 clear.\t"),
		openai.UserMessage("讲一个你处理冲突的例子？"),
	}
	for name, call := range map[string]Call{
		"plain":        {Model: "gpt-4o-mini", Messages: prompt},
		"every field":  {Model: "m", Messages: prompt, MaxTokens: 400, Temperature: 0.4, Usage: true},
		"continuation": {Model: "m", Messages: prompt, MaxTokens: 200, Prefill: "Situation: at my last job"},
		"image":        {Model: "vision", Messages: []openai.ChatCompletionMessageParamUnion{prompt[0], image}},
		"named":        {Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{named}},
		"assistant":    {Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{prompt[1], openai.AssistantMessage("earlier answer"), prompt[1]}},
		"invalid utf8": {Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("bad \xff byte")}},
		"negative max": {Model: "m", Messages: prompt, MaxTokens: -1},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := chatBody(call)
			if err != nil {
				t.Fatal(err)
			}
			want := openaiBody(t, call)
			if g := decoded(t, got); !reflect.DeepEqual(g, any(want)) {
				w, _ := json.Marshal(want)
				t.Errorf("chatBody:\n%s\nopenai-go:\n%s", got, w)
			}
		})
	}
}

// TestWireMessageEncodesPlainTextOnly: only a system or user message of
// plain text is encoded by chatBody itself.
func TestWireMessageEncodesPlainTextOnly(t *testing.T) {
	named := openai.SystemMessage("x")
	named.OfSystem.Name = openai.String("n")
	for _, c := range []struct {
		m    openai.ChatCompletionMessageParamUnion
		text bool
	}{
		{openai.SystemMessage("x"), true},
		{openai.UserMessage("x"), true},
		{named, false},
		{openai.AssistantMessage("x"), false},
		{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("x")}), false},
	} {
		if _, ok := wireMessage(c.m).(textMessage); ok != c.text {
			t.Errorf("%s: encoded by chatBody %v, want %v", decodedString(t, c.m), ok, c.text)
		}
	}
}

func decodedString(t *testing.T, m openai.ChatCompletionMessageParamUnion) string {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkChatBody compares chatBody with openai-go's encoder of the same
// params (which then set stream in a second pass) on an engine prompt of
// about 3 KiB.
func BenchmarkChatBody(b *testing.B) {
	call := Call{Model: "gpt-4o-mini", MaxTokens: 400, Temperature: 0.4, Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(strings.Repeat("You help a candidate in a live interview; answer in their voice. ", 50)),
		openai.UserMessage("Tell me about a time you handled a conflict at work"),
	}}
	b.Run("chatBody", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := chatBody(call); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("openai-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(openaiParams(call)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
