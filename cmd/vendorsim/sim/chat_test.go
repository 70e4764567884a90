package sim

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

func TestStreamWithAccumulator(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	p := chatParams("gpt-4o-mini", "Tell me about a time you resolved a conflict in your team.")
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}

	res := readStream(ctx, h, p)
	if res.err != nil {
		t.Fatalf("stream: %v", res.err)
	}
	if !res.allOK {
		t.Error("the accumulator rejected a chunk")
	}
	got := res.acc.Choices[0].Message.Content
	want := defaultReply("gpt-4o-mini", "Tell me about a time you resolved a conflict in your team.")
	if got != want || res.content != want {
		t.Errorf("content = %q (deltas %q), want %q", got, res.content, want)
	}
	if !strings.HasPrefix(got, "[simulated gpt-4o-mini] Situation:") {
		t.Errorf("reply is not marked simulated: %q", got)
	}
	if n := len(strings.Fields(got)); n < 45 || n > 80 {
		t.Errorf("reply has %d words, want about 60", n)
	}
	if fr := res.acc.Choices[0].FinishReason; fr != "stop" {
		t.Errorf("finish_reason = %q, want stop", fr)
	}
	if res.acc.Usage.CompletionTokens != int64(len(pieces(want))) || res.acc.Usage.PromptTokens <= 0 ||
		res.acc.Usage.TotalTokens != res.acc.Usage.PromptTokens+res.acc.Usage.CompletionTokens {
		t.Errorf("usage = %+v, want %d completion tokens", res.acc.Usage, len(pieces(want)))
	}
	// role chunk + one chunk per piece + the finish chunk
	if res.chunks != len(pieces(want))+2 {
		t.Errorf("got %d chunks with choices, want %d", res.chunks, len(pieces(want))+2)
	}
	c := h.waitCounters(t, "gpt-4o-mini", settled)
	if c != (Counters{Requests: 1, Completed: 1, Streams: 1}) {
		t.Errorf("counters = %+v", c)
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	resp, err := h.client.Chat.Completions.New(ctx, chatParams("local-qwen", "Why do you want this job?"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	want := defaultReply("local-qwen", "Why do you want this job?")
	if resp.Object != "chat.completion" || resp.Model != "local-qwen" || !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Errorf("envelope = object %q model %q id %q", resp.Object, resp.Model, resp.ID)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Message.Content != want || resp.Choices[0].FinishReason != "stop" ||
		resp.Choices[0].Message.Role != "assistant" {
		t.Fatalf("choices = %+v", resp.Choices)
	}
	if resp.Usage.CompletionTokens != int64(len(pieces(want))) {
		t.Errorf("completion tokens = %d, want %d", resp.Usage.CompletionTokens, len(pieces(want)))
	}
	c := h.waitCounters(t, "local-qwen", settled)
	if c != (Counters{Requests: 1, Completed: 1}) {
		t.Errorf("counters = %+v", c)
	}
}

func TestRepliesDependOnQuestionAndModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	answer := func(model, q string) string {
		t.Helper()
		resp, err := h.client.Chat.Completions.New(ctx, chatParams(model, q))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return resp.Choices[0].Message.Content
	}
	a1 := answer("m", "How do you handle tight deadlines?")
	a2 := answer("m", "Describe your biggest failure in production.")
	if a1 == a2 {
		t.Errorf("two questions got the same reply %q", a1)
	}
	if again := answer("m", "How do you handle tight deadlines?"); again != a1 {
		t.Errorf("the same question got %q, then %q", a1, again)
	}
	if subject := topicOf("Describe your biggest failure in production.").en; subject == defaultTopic.en || !strings.Contains(a2, subject) {
		t.Errorf("reply does not name the question's topic %q: %q", subject, a2)
	}
	zh := answer("m", "请介绍一下你最有挑战的项目？")
	if !strings.Contains(zh, "情境") || !strings.HasPrefix(zh, "[simulated m]") {
		t.Errorf("Chinese question got %q", zh)
	}

	h.sim.SetReply("m", "Scripted answer.")
	if got := answer("m", "anything"); got != "Scripted answer." {
		t.Errorf("after SetReply got %q", got)
	}
	h.sim.SetReply("m", "")
	if got := answer("m", "How do you handle tight deadlines?"); got != a1 {
		t.Errorf("after clearing the reply got %q, want the default", got)
	}
}

func TestMaxTokensCutsWithLength(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	p := chatParams("m", "What are your strengths?")
	p.MaxCompletionTokens = openai.Int(5)
	res := readStream(ctx, h, p)
	if res.err != nil {
		t.Fatalf("stream: %v", res.err)
	}
	want := strings.Join(pieces(defaultReply("m", "What are your strengths?"))[:5], "")
	if got := res.acc.Choices[0].Message.Content; got != want || res.acc.Choices[0].FinishReason != "length" {
		t.Errorf("got %q finish %q, want %q finish length", got, res.acc.Choices[0].FinishReason, want)
	}

	p = chatParams("m", "What are your strengths?")
	p.MaxTokens = openai.Int(3)
	resp, err := h.client.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if resp.Choices[0].FinishReason != "length" || resp.Usage.CompletionTokens != 3 {
		t.Errorf("max_tokens 3: finish %q, %d tokens", resp.Choices[0].FinishReason, resp.Usage.CompletionTokens)
	}
}

// TestPrefillContinuesAfterCut is the "continue after a cut" flow: a
// stream cut on one model is continued by another with the partial answer
// as assistant prefill, and the two parts make one whole answer.
func TestPrefillContinuesAfterCut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	const question = "Tell me about a project you are proud of."
	h.sim.SetFault("primary", Fault{CutAfter: 7})
	cut := readStream(ctx, h, chatParams("primary", question))
	if cut.err == nil {
		t.Fatal("the cut stream ended without an error")
	}

	p := chatParams("backup", question)
	p.Messages = append(p.Messages, openai.AssistantMessage(cut.content))
	rest := readStream(ctx, h, p)
	if rest.err != nil {
		t.Fatalf("continuation: %v", rest.err)
	}
	whole := defaultReply("backup", question)
	prefix := strings.Join(pieces(defaultReply("primary", question))[:7], "")
	if cut.content != prefix {
		t.Errorf("cut content = %q, want %q", cut.content, prefix)
	}
	if want := strings.Join(pieces(whole)[7:], ""); rest.content != want {
		t.Errorf("continuation = %q, want %q", rest.content, want)
	}
	if strings.Contains(rest.content, "[simulated") {
		t.Errorf("the continuation starts the answer again: %q", rest.content)
	}
}

func TestChatValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	tests := []struct {
		name, body, param string
	}{
		{"bad JSON", `{"model":`, ""},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"no messages", `{"model":"m","messages":[]}`, "messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, ctype, body := do(t, h.srv.Client(), jsonRequest(t, ctx, "POST", h.srv.URL+"/v1/chat/completions", tt.body))
			if status != 400 || ctype != "application/json" {
				t.Errorf("status %d type %q", status, ctype)
			}
			if !strings.Contains(body, `"type":"invalid_request_error"`) || (tt.param != "" && !strings.Contains(body, `"param":"`+tt.param+`"`)) {
				t.Errorf("body = %s", body)
			}
		})
	}
	c := h.waitCounters(t, AnyModel, settled)
	if c.Requests != 3 || c.Failed != 3 {
		t.Errorf("counters = %+v", c)
	}
}

func TestContentParts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	p := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("Why this company?")}),
	}}
	resp, err := h.client.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if want := defaultReply("m", "Why this company?"); resp.Choices[0].Message.Content != want {
		t.Errorf("got %q, want %q", resp.Choices[0].Message.Content, want)
	}
}
