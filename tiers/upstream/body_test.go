package upstream

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/tidwall/sjson"
)

// openaiBody is what openai-go makes of call: its params, encoded by its
// own encoder, with the flags set as option.WithJSONSet sets them. It is
// the reference chatBody must agree with.
func openaiBody(t testing.TB, call Call) []byte {
	t.Helper()
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
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]any{"stream": true}
	if call.Prefill != "" {
		set["continue_final_message"], set["add_generation_prompt"] = true, false
	}
	for k, v := range set {
		if b, err = sjson.SetBytes(b, k, v); err != nil {
			t.Fatal(err)
		}
	}
	return b
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
			if g, w := decoded(t, got), decoded(t, want); !reflect.DeepEqual(g, w) {
				t.Errorf("chatBody:\n%s\nopenai-go:\n%s", got, want)
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

// BenchmarkChatBody compares chatBody with openai-go's encoder on an
// engine prompt of about 3 KiB.
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
			openaiBody(b, call)
		}
	})
}
