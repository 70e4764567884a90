package gateway

import (
	"cmp"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
)

// answerAcc accumulates a streamed answer: per choice its content,
// refusal, tool calls and finish reason. Owned by one gatewayCall.
type answerAcc struct {
	choices []*accChoice // in order of first appearance
	bytes   int          // of content, refusals and tool calls: bounded by max_response_mb
}

type accChoice struct {
	index   int64
	content strings.Builder
	refusal strings.Builder
	tools   []*accTool
	finish  string
}

type accTool struct {
	index    int64
	id, typ  string
	name     string
	argument strings.Builder
}

// add takes one chunk's choices. payload reports content (text, refusal or
// a tool call); finish reports a finish_reason.
func (a *answerAcc) add(ch openai.ChatCompletionChunk) (payload, finish bool) {
	for _, c := range ch.Choices {
		ac := a.choice(c.Index)
		d := c.Delta
		if d.Content != "" || d.Refusal != "" || len(d.ToolCalls) > 0 || d.FunctionCall.Name != "" || d.FunctionCall.Arguments != "" {
			payload = true
		}
		ac.content.WriteString(d.Content)
		ac.refusal.WriteString(d.Refusal)
		a.bytes += len(d.Content) + len(d.Refusal)
		for _, tc := range d.ToolCalls {
			at := ac.tool(tc.Index)
			at.id = cmp.Or(tc.ID, at.id)
			at.typ = cmp.Or(string(tc.Type), at.typ)
			at.name += tc.Function.Name
			at.argument.WriteString(tc.Function.Arguments)
			a.bytes += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		if c.FinishReason != "" {
			ac.finish, finish = c.FinishReason, true
		}
	}
	return payload, finish
}

// addText takes choice 0's content and finish reason (empty: none) of
// one chunk; it reports whether there was content.
func (a *answerAcc) addText(content []byte, finish string) (payload bool) {
	ac := a.choice(0)
	ac.content.Write(content)
	a.bytes += len(content)
	if finish != "" {
		ac.finish = finish
	}
	return len(content) > 0
}

func (a *answerAcc) choice(index int64) *accChoice {
	for _, c := range a.choices {
		if c.index == index {
			return c
		}
	}
	c := &accChoice{index: index}
	a.choices = append(a.choices, c)
	return c
}

func (c *accChoice) tool(index int64) *accTool {
	for _, t := range c.tools {
		if t.index == index {
			return t
		}
	}
	t := &accTool{index: index}
	c.tools = append(c.tools, t)
	return t
}

// reset forgets the answer (a clean restart on another endpoint).
func (a *answerAcc) reset() { a.choices, a.bytes = a.choices[:0], 0 }

// size is the answer's bytes so far.
func (a *answerAcc) size() int { return a.bytes }

// empty reports whether no content has arrived.
func (a *answerAcc) empty() bool { return a.allText() == "" }

// plainText reports whether the answer is text of choice 0 only: the only
// kind of partial answer another endpoint can continue as a prefill.
func (a *answerAcc) plainText() bool {
	for _, c := range a.choices {
		if c.index != 0 || c.refusal.Len() > 0 || len(c.tools) > 0 {
			return false
		}
	}
	return true
}

// text is choice 0's content.
func (a *answerAcc) text() string {
	for _, c := range a.choices {
		if c.index == 0 {
			return c.content.String()
		}
	}
	return ""
}

// allText is every choice's content, refusal and tool call, for
// estimating completion tokens.
func (a *answerAcc) allText() string {
	var b strings.Builder
	for _, c := range a.choices {
		b.WriteString(c.content.String())
		b.WriteString(c.refusal.String())
		for _, t := range c.tools {
			b.WriteString(t.name)
			b.WriteString(t.argument.String())
		}
	}
	return b.String()
}

// finished reports whether n choices have a finish reason.
func (a *answerAcc) finished(n int) bool {
	done := 0
	for _, c := range a.choices {
		if c.finish != "" {
			done++
		}
	}
	return done >= max(n, 1)
}

// finishReason is choice 0's finish reason.
func (a *answerAcc) finishReason() string {
	for _, c := range a.choices {
		if c.index == 0 {
			return c.finish
		}
	}
	return ""
}

// choicesOut renders the choices of a non-streaming completion, by index.
func (a *answerAcc) choicesOut() []outChoice {
	out := make([]outChoice, 0, len(a.choices))
	for _, c := range a.choices {
		oc := outChoice{Index: c.index, FinishReason: c.finish}
		oc.Message.Role = "assistant"
		if s := c.content.String(); s != "" || len(c.tools) == 0 {
			oc.Message.Content = &s
		}
		if s := c.refusal.String(); s != "" {
			oc.Message.Refusal = &s
		}
		for _, t := range c.tools {
			tc := outToolCall{ID: t.id, Type: cmp.Or(t.typ, "function")}
			tc.Function.Name, tc.Function.Arguments = t.name, t.argument.String()
			oc.Message.ToolCalls = append(oc.Message.ToolCalls, tc)
		}
		out = append(out, oc)
	}
	slices.SortFunc(out, func(x, y outChoice) int { return cmp.Compare(x.Index, y.Index) })
	return out
}
