package sim

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers"
)

// promptLabels are the fixed parts of Poise's prompts that a simulated
// answer echoed once.
var promptLabels = []string{"Recent conversation", "oldest first", "Interviewer", "面试官的问题", "question", "STAR"}

// vocabulary is every token of the simulator's own reply phrases: Latin
// words (lower case) and Han runes.
func vocabulary() map[string]bool {
	v := map[string]bool{}
	lists := [][]string{situations, tasks, actions, results, techPoints, techExamples, intros, motivations, weaknesses,
		situationsZH, tasksZH, actionsZH, resultsZH, techPointsZH, techExamplesZH, introsZH, motivationsZH, weaknessesZH,
		{"Situation Task Action Result Key point Example 情境 任务 行动 结果 要点 例子", defaultTopic.en, defaultTopic.zh}}
	for _, r := range topicRules {
		lists = append(lists, []string{r.en, r.zh})
	}
	for _, l := range lists {
		for _, s := range l {
			for _, tok := range tokens(s) {
				v[tok] = true
			}
		}
	}
	return v
}

// tokens are s's Latin words, lower case, and its Han runes.
func tokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) || unicode.Is(unicode.Han, r) }) {
		out = append(out, w)
	}
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			out = append(out, string(r))
		}
	}
	return out
}

// userMessage is the user message of Poise's own prompt for req.
func userMessage(t *testing.T, req tiers.Request, short bool) string {
	t.Helper()
	for _, m := range tiers.BuildPrompt(req, short) {
		if m.OfUser != nil {
			return m.OfUser.Content.OfString.Value
		}
	}
	t.Fatal("BuildPrompt made no user message")
	return ""
}

// checkReply fails unless reply is marked and made of the simulator's own
// words only: none of the prompt's labels, none of its made-up words.
func checkReply(t *testing.T, vocab map[string]bool, model, prompt, reply string) {
	t.Helper()
	body, ok := strings.CutPrefix(reply, "[simulated "+model+"] ")
	if !ok {
		t.Fatalf("reply to %q is not marked: %q", prompt, reply)
	}
	for _, l := range promptLabels {
		if strings.Contains(body, l) {
			t.Fatalf("reply to %q echoes %q: %q", prompt, l, reply)
		}
	}
	for _, tok := range tokens(body) {
		if !vocab[tok] {
			t.Fatalf("reply to %q has %q, not one of the simulator's words: %q", prompt, tok, reply)
		}
	}
}

// TestReplyKeepsPromptOut is a property test over random prompts built
// the way Poise builds them: random transcripts and questions made of
// made-up words, Han runes outside the simulator's phrases, and real
// interview keywords. The reply never contains any of it.
func TestReplyKeepsPromptOut(t *testing.T) {
	vocab := vocabulary()
	rng := rand.New(rand.NewPCG(19, 3))
	keywords := []string{"stakeholder", "design", "database", "yourself", "weakness", "why", "deadline", "mistake", "冲突", "设计", "数据库", "自己", "缺点", "项目"}
	var rareHan []rune
	for r := rune(0x4E00); len(rareHan) < 200; r += 37 {
		if !vocab[string(r)] {
			rareHan = append(rareHan, r)
		}
	}
	word := func() string {
		switch rng.IntN(4) {
		case 0:
			return keywords[rng.IntN(len(keywords))]
		case 1:
			return string([]rune{rareHan[rng.IntN(len(rareHan))], rareHan[rng.IntN(len(rareHan))]})
		}
		b := []byte("zq")
		for range 3 + rng.IntN(5) {
			b = append(b, byte('a'+rng.IntN(26)))
		}
		return string(b)
	}
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	kinds := map[kind]bool{}
	for i := range 500 {
		req := tiers.Request{
			Question:   text(1+rng.IntN(12)) + "?",
			Transcript: text(rng.IntN(40)),
			Profile:    tiers.Profile{Lang: []string{"en", "zh"}[i%2], Role: text(2), Resume: text(20)},
		}
		prompt := userMessage(t, req, i%3 == 0)
		checkReply(t, vocab, "m", prompt, defaultReply("m", prompt))
		kinds[topicOf(questionOf(prompt)).kind] = true
	}
	if len(kinds) < 5 {
		t.Errorf("500 random prompts reached %d answer kinds, want all 5", len(kinds))
	}
}

// FuzzDefaultReply checks the same property on any prompt text.
func FuzzDefaultReply(f *testing.F) {
	f.Add("Recent conversation (oldest first):\nhello there\n\nInterviewer's question: How would you design a rate limiter?")
	f.Add("面试官的问题：请介绍一下你自己。")
	f.Add("Interviewer's question: zqfoo zqbar?")
	f.Add("")
	vocab := vocabulary()
	f.Fuzz(func(t *testing.T, prompt string) {
		reply := defaultReply("m", prompt)
		if reply != defaultReply("m", prompt) {
			t.Fatalf("two replies to %q", prompt)
		}
		checkReply(t, vocab, "m", prompt, reply)
	})
}

// TestRepliesFollowTheQuestion sends Poise's real prompts over the chat
// wire: each reply has its question's shape, in the question's language.
func TestRepliesFollowTheQuestion(t *testing.T) {
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	vocab := vocabulary()
	for _, c := range []struct {
		question, lang, want string
	}{
		{"Tell me about a time you had to deal with a difficult stakeholder.", "en", "Situation:"},
		{"How would you design a rate limiter for a public API?", "en", "Key point:"},
		{"Tell me about yourself.", "en", "backend"},
		{"What is your greatest weakness?", "en", "too"},
		{"讲一个你和同事意见不合的例子？", "zh", "情境："},
		{"如果让你设计一个限流系统，你会怎么做？", "zh", "要点："},
	} {
		req := tiers.Request{Question: c.question, Transcript: "Thanks for joining.\nLet's start.", Profile: tiers.Profile{Lang: c.lang}}
		resp, err := h.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: tiers.BuildPrompt(req, false)})
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Choices[0].Message.Content
		checkReply(t, vocab, "m", c.question, got)
		if !strings.Contains(got, c.want) {
			t.Errorf("reply to %q = %q, want it to contain %q", c.question, got, c.want)
		}
	}
	shapes := map[string]bool{}
	for _, l := range interviewerLines["en"] {
		shapes[strings.SplitN(defaultReply("m", l), " ", 3)[2][:12]] = true
	}
	if n := len(shapes); n < 4 {
		t.Errorf("the simulated interviewer's %d lines got %d reply openings, want at least 4: %v", len(interviewerLines["en"]), n, shapes)
	}
}
