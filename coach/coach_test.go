package coach

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// defaultCountdownS is the think time the scripts promise: an 8-second
// countdown before the frame.
const defaultCountdownS = 8

func TestCardForQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		text     string
		lang     string
		wantName string
	}{
		{"failure picks CARL", "Tell me about a time you failed", "en", "CARL"},
		{"led a team picks STAR", "tell me about a time you led a team", "en", "STAR"},
		{"behavioural without a cue defaults to STAR", "How do you handle pressure?", "en", "STAR"},
		{"zh failure picks CARL", "讲讲你犯过的最大的错误", "zh", "CARL"},
		{"zh team picks STAR", "说说你带领团队的经历", "zh", "STAR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CardFor(tt.text, tt.lang)
			if c.Kind != Question {
				t.Fatalf("kind = %q, want %q", c.Kind, Question)
			}
			if c.CountdownS != defaultCountdownS {
				t.Errorf("countdown_s = %d, want %d", c.CountdownS, defaultCountdownS)
			}
			if c.Framework.Name != tt.wantName {
				t.Errorf("framework = %q, want %q", c.Framework.Name, tt.wantName)
			}
			if len(c.Framework.Steps) != len(tt.wantName) {
				t.Errorf("steps = %q, want one per letter of %s", c.Framework.Steps, tt.wantName)
			}
		})
	}
}

func TestCardForRepeatTip(t *testing.T) {
	t.Parallel()
	tests := []struct{ lang, want string }{
		{"en", "repeat the last words"},
		{"zh", "重复问题的最后几个字"},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			c := CardFor("Why Go?", tt.lang)
			if len(c.Tips) == 0 || !strings.Contains(strings.ToLower(c.Tips[0]), tt.want) {
				t.Errorf("tips = %q, want the first to say %q", c.Tips, tt.want)
			}
		})
	}
}

func TestCardForStatement(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, lang string
		wantTips         []string
	}{
		{"en", "We use Kubernetes heavily here.", "en", []string{"concrete numbers", "why that choice"}},
		{"zh", "我们团队主要做支付系统。", "zh", []string{"追问具体数字", "追问为什么这样选择"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CardFor(tt.text, tt.lang)
			if c.Kind != Statement || c.CountdownS != 0 {
				t.Fatalf("kind, countdown = %q, %d; want %q, 0", c.Kind, c.CountdownS, Statement)
			}
			if len(c.Framework.Steps) == 0 {
				t.Errorf("statement frame has no steps")
			}
			for _, want := range tt.wantTips {
				if !slices.ContainsFunc(c.Tips, func(tip string) bool { return strings.Contains(tip, want) }) {
					t.Errorf("tips = %q, want one with %q", c.Tips, want)
				}
			}
		})
	}
}

func TestCardForLanguage(t *testing.T) {
	t.Parallel()
	const q = "Tell me about a time you led a team"
	tests := []struct {
		lang    string
		wantCJK bool
	}{
		{"zh", true},
		{"zh-CN", true},
		{"ZH", true},
		{"en", false},
		{"fr", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run("lang "+tt.lang, func(t *testing.T) {
			c := CardFor(q, tt.lang)
			text := strings.Join(append(slices.Clone(c.Framework.Steps), c.Tips...), "")
			if got := hasCJK(text); got != tt.wantCJK {
				t.Errorf("CJK wording = %v, want %v: %q", got, tt.wantCJK, text)
			}
		})
	}
	// Detection ignores lang: a Chinese question is a question in an en session.
	if c := CardFor("你为什么选择我们公司", "en"); c.Kind != Question || hasCJK(c.Framework.Steps[0]) {
		t.Errorf("zh question with lang en = %+v, want an en question card", c)
	}
}

func TestCardOwnsSlices(t *testing.T) {
	t.Parallel()
	c := CardFor("Why Go?", "en")
	want := c.Tips[0]
	c.Tips[0] = "changed"
	c.Framework.Steps[0] = "changed"
	again := CardFor("Why Go?", "en")
	if again.Tips[0] != want || again.Framework.Steps[0] == "changed" {
		t.Errorf("a card's edits leaked into the scripts: %+v", again)
	}
}

func TestCardJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(CardFor("我们团队主要做支付系统。", "zh"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"kind", "countdown_s", "framework", "tips"} {
		if _, ok := m[key]; !ok {
			t.Errorf("card JSON %s lacks %q (the coach message of docs/protocol.md)", b, key)
		}
	}
	var fw map[string]json.RawMessage
	if err := json.Unmarshal(m["framework"], &fw); err != nil || fw["name"] == nil || fw["steps"] == nil {
		t.Errorf("framework JSON %s, want name and steps (err %v)", m["framework"], err)
	}
}

func FuzzCardFor(f *testing.F) {
	for _, seed := range []string{
		"", "?", "So, uh, okay. Tell me about a time you failed", "我们团队主要做支付系统。",
		"'''", "what", "’", "吗", "\xff\xfe", "tell me关于", "İ̇?", strings.Repeat("so ", 50),
	} {
		f.Add(seed, "en")
		f.Add(seed, "zh")
	}
	f.Fuzz(func(t *testing.T, text, lang string) {
		c := CardFor(text, lang)
		if IsQuestion(text) && c.Kind != Question {
			t.Fatalf("kind %q disagrees with IsQuestion(%q)", c.Kind, text)
		}
		switch c.Kind {
		case Question:
			if c.CountdownS < 0 || c.CountdownS > defaultCountdownS || (c.CountdownS == 0) != (c.QuestionType == Smalltalk) {
				t.Fatalf("%s question countdown_s = %d", c.QuestionType, c.CountdownS)
			}
		case Statement:
			if c.CountdownS != 0 {
				t.Fatalf("statement countdown_s = %d", c.CountdownS)
			}
		default:
			t.Fatalf("kind = %q", c.Kind)
		}
		if c.Framework.Name == "" || len(c.Framework.Steps) == 0 || len(c.Tips) == 0 {
			t.Fatalf("incomplete card %+v", c)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkCardFor(b *testing.B) {
	texts := []string{
		"So, uh, okay. Tell me about a time you failed",
		"We use Kubernetes heavily here, and we ship to production every day.",
		"嗯，好的。那个，讲讲你最有挑战的一个项目",
		"我们团队主要做支付系统。",
	}
	Default() // parse outside the timed loop
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		CardFor(texts[i%len(texts)], "en")
	}
}

func hasCJK(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) })
}

// TestCardOfType checks that a question gets the frame of its type, in
// both languages: a design scaffold, a concept scaffold (a comparison's
// when it asks how two things differ, a troubleshooting one when it asks
// how to find or fix a fault, pros and cons when it asks for those), STAR
// or CARL for a story, a frame of its own for a self-introduction, why
// leaving, why this job, strengths and a career plan, a line to say for a
// check-in, a clarifying question for logistics, and no countdown for
// small talk.
func TestCardOfType(t *testing.T) {
	tests := []struct {
		text           string
		typ            Type
		wantEN, wantZH string // a part of the framework's name, or of its first step
		countdown      bool
	}{
		{"How would you design a rate limiter?", Design, "Requirements", "需求", true},
		{"设计一个短链系统，你会怎么做？", Design, "API", "接口", true},
		{"What's the difference between TCP and UDP?", Concept, "When to pick which", "怎么选", true},
		{"TCP 和 UDP 有什么区别？", Concept, "Define both", "分别定义", true},
		{"Kafka vs RabbitMQ, how do they compare?", Concept, "Key differences", "关键区别", true},
		{"进程和线程相比，有哪些不一样？", Concept, "Define both", "分别定义", true},
		{"Redis 的持久化是怎么实现的？", Concept, "Trade-off", "取舍", true},
		{"How does a B-tree index work?", Concept, "How it works", "原理", true},
		{"线上 CPU 飙高怎么排查？", Concept, "Narrow down", "定位", true},
		{"How would you debug a memory leak in production?", Concept, "Root cause", "根因", true},
		{"慢查询怎么优化？", Concept, "Fix and prevent", "修复", true},
		{"What are the pros and cons of microservices?", Concept, "Pros", "优点", true},
		{"TCP 的超时重传是怎么实现的？", Concept, "How it works", "原理", true},
		{"Why is Python slow compared to C?", Concept, "Key differences", "关键区别", true},
		{"Why is Python slow?", Concept, "How it works", "原理", true},
		{"How does a B-tree index actually speed up a lookup?", Concept, "How it works", "原理", true},
		{"WebAssembly 是什么，跟 JavaScript 比有什么优势？", Concept, "Define both", "分别定义", true},
		{"微服务有什么优缺点？", Concept, "When to choose it", "什么时候选", true},
		{"Kafka vs RabbitMQ, what are the trade-offs?", Concept, "Key differences", "关键区别", true},
		{"Can you hear me?", Smalltalk, "I can hear you well", "听得很清楚", false},
		{"你那边能听清楚吗？", Smalltalk, "I can hear you well", "听得很清楚", false},
		{"How's your day going?", Smalltalk, "doing well", "挺好的", false},
		{"What are your salary expectations?", Logistics, "Could you tell me a bit more", "具体说一下", true},
		{"Reverse a linked list in place, how would you do it?", Coding, "Complexity", "复杂度", true},
		{"Tell me about a time you led a team.", Behavioural, "STAR", "STAR", true},
		{"Tell me about yourself.", Behavioural, "Now → Before → Next", "现在 → 过去", true},
		{"先做个自我介绍吧", Behavioural, "Now → Before → Next", "现在 → 过去", true},
		{"Why are you leaving your current job?", Behavioural, "Towards, not away", "讲追求不讲逃离", true},
		{"你为什么离职？", Behavioural, "Towards, not away", "讲追求不讲逃离", true},
		{"Why do you want to work here?", Behavioural, "Headline", "一句话结论", true},
		{"你为什么想加入我们公司？", Behavioural, "Headline", "一句话结论", true},
		{"Where do you see yourself in five years?", Behavioural, "Direction", "方向", true},
		{"Why should we hire you?", Behavioural, "Headline", "一句话结论", true},
		{"What are your strengths?", Behavioural, "Claim → Proof", "结论 → 例证", true},
		{"你最大的优点是什么？", Behavioural, "Claim → Proof", "结论 → 例证", true},
		{"What's your biggest weakness?", Behavioural, "CARL", "CARL", true},
		{"讲讲你这五年做的最有成就感的项目", Behavioural, "STAR", "STAR", true},
		{"讲一个你失败的经历", Behavioural, "CARL", "CARL", true},
	}
	for _, tt := range tests {
		if got := Classify(tt.text, "en"); got != tt.typ {
			t.Errorf("Classify(%q) = %s, want %s", tt.text, got, tt.typ)
		}
		for lang, want := range map[string]string{"en": tt.wantEN, "zh": tt.wantZH} {
			c := CardFor(tt.text, lang)
			shown := c.Framework.Name + " " + strings.Join(c.Framework.Steps, " ")
			if c.Kind != Question || c.QuestionType != tt.typ || !strings.Contains(shown, want) {
				t.Errorf("%q in %s: %s card %q, want a %s card with %q", tt.text, lang, c.QuestionType, shown, tt.typ, want)
			}
			if (c.CountdownS > 0) != tt.countdown {
				t.Errorf("%q in %s: countdown_s %d", tt.text, lang, c.CountdownS)
			}
		}
	}
	if c := CardFor("We use Kubernetes heavily here.", "en"); c.Kind != Statement || c.QuestionType != Remark {
		t.Errorf("a statement got %s %s", c.Kind, c.QuestionType)
	}
}
