package coach

import "testing"

func TestIsQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want bool
	}{
		// English questions.
		{"en tell me about a time", "Tell me about a time you failed", true},
		{"en fillers and lead-in sentence", "So, uh, okay. Tell me about a time you failed", true},
		{"en fillers without commas", "um so like how do you handle pressure", true},
		{"en does that work for you", "we are hybrid two days a week in the office does that work for you", true},
		{"en design the", "Fine. Order book for one instrument. Design the data structures.", true},
		{"en it works for us", "that setup works for us and it has for years", false},
		{"en why", "Why did you leave your last job", true},
		{"en how would you design", "How would you design a rate limiter", true},
		{"en what contraction", "What's your biggest weakness", true},
		{"en walk me through", "Walk me through your resume.", true},
		{"en can you", "Can you explain how Raft works", true},
		{"en could you mid sentence", "Okay great, and could you give me an example of that", true},
		{"en have you", "Have you ever used Kafka in production", true},
		{"en do you", "Do you have any questions for us", true},
		{"en describe", "Describe a conflict with a teammate.", true},
		{"en statement then question", "We use Kafka a lot. How do you feel about event sourcing", true},
		{"en question after comma", "We use Kubernetes, what's your experience with it", true},
		{"en wh aux subject mid clause", "When you were at Google how did you handle on-call", true},
		{"en wh then aux after pseudo-cleft opener", "What I want to know is why you left", true},
		{"en i'd love to hear", "I'd love to hear about your biggest project.", true},
		{"en is there", "Is there anything you'd like to ask", true},
		{"en what about", "And what about testing", true},
		{"en question mark only", "You built that alone?", true},
		{"en curly apostrophe", "I’d like to hear how you scaled it", true},
		{"en design prompt", "Design a URL shortener.", true},
		{"en thank you then question", "Thank you. Walk us through the architecture", true},
		{"en kindly as a lead-in", "kindly explain how your team ships a release", true},
		{"en kindly mid clause", "apart from the coding part kindly tell us how you test", true},
		{"en numbered scorecard item", "question three describe a project you are proud of", true},
		{"en imperative compute", "compute the longest path in a grid of heights", true},
		{"en given without an article", "given coordinates of points find the closest pair", true},
		{"en given that stays a statement", "given that we are short on time we will skip the design part", false},
		{"en let us design", "let us design a parking garage system", true},
		{"en dropped aux", "got an example of a risky change you shipped", true},
		{"en is there anything mid clause", "thinking back on that role is there anything you would change", true},
		{"en how you feel about that", "the team is on call every sixth week how you feel about that", true},
		{"en any offers", "any offers in hand at the moment", true},
		{"en kindly note stays a statement", "kindly note the office is closed on fridays", false},
		{"zh 咋", "这个接口慢了你一般咋排查", true},
		{"zh 不咋 stays a statement", "我们这边加班不咋多", false},
		{"zh 说下", "你说下这个模块的思路", true},
		{"zh 我先说下 stays a statement", "我先说下今天的安排", false},
		{"zh 给定", "给定一个字符串 找出最长的不重复子串", true},
		{"zh 懂吧", "这个背压的概念你懂吧", true},
		// English statements.
		{"en kubernetes statement", "We use Kubernetes heavily here.", false},
		{"en what mid sentence", "That's what we do here.", false},
		{"en pseudo-cleft with filler", "So what we do is mostly payments.", false},
		{"en how mid sentence", "I'll tell you how we work.", false},
		{"en tell you about", "Let me tell you about the team.", false},
		{"en thank you", "Thank you for coming in today.", false},
		{"en please have a seat", "Please have a seat.", false},
		{"en which is why", "Which is why we moved to Go.", false},
		{"en could mid sentence", "We're glad you could join us.", false},
		{"en two plain clauses", "The team is about ten people, and we ship weekly.", false},
		{"en fillers only", "Okay, great. Um.", false},
		{"en when i joined", "When I joined we had three engineers.", false},
		{"en that's how it is", "That's how it is done here.", false},
		{"en you know what filler", "You know what, we should wrap up.", false},
		{"en have you on the team", "We'd love to have you on the team.", false},
		// A question a few words after its wh word, or restarted mid-clause,
		// and what those rules must not catch.
		{"en wh then noun then do you", "Nice so on a team like what role do you usually end up playing", true},
		{"en how good are you", "On a scale of one to ten how good are you at backend development", true},
		{"en which team did it", "I know which team did it.", false},
		{"en what kind of team we are", "That's what kind of team we are.", false},
		{"en um is there", "looking back on your career so far um is there anything you regret", true},
		{"en uh so have you", "you mentioned you're not a manager uh so have you ever led without authority", true},
		{"en and do it", "we split the array and do it twice", false},
		{"en in your view what", "In your view what makes someone a good leader", true},
		{"en ever", "ever um bitten off more than you could chew", true},
		{"en ever since", "Ever since we moved to Go, builds are fast.", false},
		{"empty", "", false},
		{"punctuation only", "... ,,, 。。", false},
		// Chinese questions.
		{"zh why", "你为什么离开上一家公司", true},
		{"zh 讲讲", "讲讲你最有挑战的项目", true},
		{"zh 能否 介绍", "能否介绍一下你自己", true},
		{"zh 吗 final", "你用过 Redis 吗", true},
		{"zh 呢 final", "那你呢。", true},
		{"zh fillers and lead-in", "嗯，好的。那个，说说你的优缺点", true},
		{"zh 怎么", "你是怎么做容量规划的", true},
		{"zh 如何", "如何保证消息不丢", true},
		{"zh 哪", "你之前在哪个团队", true},
		{"zh 请你", "请你描述一下当时的情况", true},
		{"zh full width question mark", "你们用 Go？", true},
		{"zh 有没有", "有没有遇到过线上故障", true},
		{"zh statement then question", "我们主要做支付。你熟悉分布式事务吗", true},
		{"mixed zh particle after english", "那你们 use Kubernetes 吗", true},
		{"mixed en question with zh", "Tell me about 你的项目", true},
		// Chinese statements.
		{"zh team statement", "我们团队主要做支付系统。", false},
		{"zh 什么都", "我们什么都做。", false},
		{"zh 这就是为什么", "这就是为什么我们选了 Go。", false},
		{"zh interviewer introduces team", "我先介绍一下我们团队。", false},
		{"zh 哪怕", "哪怕流量翻倍，系统也很稳。", false},
		{"zh 请求 is not 请", "我们每秒处理十万请求。", false},
		{"zh topic 呢 before comma", "我们呢，主要做支付。", false},
		{"zh 不怎么", "我们不怎么加班。", false},
		{"zh 怎么说呢 filler", "怎么说呢，我们的业务比较复杂。", false},
		// ASR spellings, choices, A-not-A, counting words and spoken tasks.
		{"en whats without apostrophe", "whats your biggest weakness", true},
		{"en hows", "hows it going", true},
		{"en am i", "am I coming through clearly", true},
		{"en given a task", "so uh given a string find the first character that appears only once", true},
		{"en write a function mid sentence", "um the question is write a function that reverses the words", true},
		{"en implement", "Implement softmax in a way that doesn't overflow", true},
		// Terse prompts: a task said as an order, with no question word.
		{"en validate", "Validate a BST. Approach.", true},
		{"en design with no article", "design dropbox file sync across devices", true},
		{"en design it", "Matching engine. Design it.", true},
		{"en walk through your", "Design prompt: a video-on-demand platform. Please walk through your design.", true},
		{"en count the", "Count the islands in a grid of ones and zeros.", true},
		{"en design reviews is a statement", "Design reviews happen on Thursdays.", false},
		{"en your approach is no ask", "I like your approach.", false},
		{"zh 说思路", "嗯 最长递增子序列 说思路", true},
		{"zh 你来设计", "好 在线判题系统 就是我们自己的业务 你来设计", true},
		{"zh 思路 in feedback", "嗯思路是对的。", false},
		{"zh 是…还是", "你说的那个缓存，是本地缓存还是 Redis", true},
		{"zh 还是 without 是", "我们还是先开始吧。", false},
		{"zh 喜欢…还是", "你更喜欢自己一个人干，还是跟大家一起合作", true},
		{"zh 想 is no opener", "我想还是先从项目开始。", false},
		{"zh 吗 before a comma", "这个岗位在深圳，你愿意过来吗，需要搬家的", true},
		{"zh 打个分", "嗯 你给你自己 技术能力 打个分 十分制", true},
		{"zh 写道题", "好 写道题 二叉树 按层打印", true},
		{"zh 做个设计", "下面做个设计：一个分布式的 KV 存储。", true},
		{"zh 冷不冷", "苏州今天下雪了，你那边冷不冷", true},
		{"zh 紧不紧张", "紧不紧张，放松一点就好", true},
		{"zh 去没去", "你去没去过现场", true},
		{"zh 不 between different characters", "我们一般不加班。", false},
		{"zh 几", "团队几个人", true},
		{"zh 几乎", "我们几乎每天都上线。", false},
		{"zh 好几", "我们一天会发好几次版", false},
		{"zh 谁", "谁是你最好的导师", true},
		{"zh 谁都", "谁都可以提需求。", false},
		{"zh 多大", "你们项目的数据量大概有多大", true},
		{"zh 很多大", "很多大公司都这么做。", false},
		{"zh 设计一个", "设计一个抢红包的系统", true},
		{"zh 给你一个", "嗯 给你一个数组 把所有的零移到末尾 其他数保持相对顺序", true},
		{"zh 我简单说一下", "我简单说一下，你要加入的团队是负责支付链路的", false},
		{"zh 跟你说一下", "我们组 code review 比较严格，这个先跟你说一下。", false},
		{"zh 跟我说一下", "你能跟我说一下你为什么离职吗", true},
		{"zh 能接受吧", "我们这边大促前会忙一点 这个你能接受吧", true},
		{"zh 吗 in a transcript", "你对工作地点有要求吗 我们是在杭州", true},
		{"zh 吗 in a word", "他们在查吗啡的事", false},
		{"zh 问几个", "那我问几个基础的问题。", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsQuestion(tt.text); got != tt.want {
				t.Errorf("IsQuestion(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestFrameworkFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		text        string
		wantKey     string
		wantMatched bool
	}{
		{"en failure", "Tell me about a time you failed", "carl", true},
		{"en mistake", "What's the biggest mistake you've made at work", "carl", true},
		{"en lesson learned", "What did you learn from that project", "carl", true},
		{"en weakness", "What is your greatest weakness", "carl", true},
		{"en do differently", "What would you do differently next time", "carl", true},
		{"en led a team", "Tell me about a time you led a team", "star", true},
		{"en conflict", "Describe a conflict with a teammate", "star", true},
		{"en proud", "Which achievement are you most proud of", "star", true},
		{"en technical falls to default", "How does a hash map work", "star", false},
		{"en failover is not failure", "How do you design failover for a database", "star", false},
		{"en machine learning is not a lesson", "Do you know machine learning", "star", false},
		{"zh failure beats experience", "讲讲你最失败的一次经历", "carl", true},
		{"zh growth", "这两年你最大的成长是什么", "carl", true},
		{"zh led a team", "讲讲你带领团队的一次经历", "star", true},
		{"zh technical falls to default", "Redis 的持久化怎么做", "star", false},
	}
	s := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, matched := s.frameworkFor(tt.text, Behavioural)
			if key != tt.wantKey || matched != tt.wantMatched {
				t.Errorf("frameworkFor(%q) = %q, %v; want %q, %v", tt.text, key, matched, tt.wantKey, tt.wantMatched)
			}
		})
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"contraction kept", "what's up", []string{"what's", "up"}},
		{"quotes trimmed", "'tell me' now", []string{"tell", "me", "now"}},
		{"cjk separates", "tell me关于项目go", []string{"tell", "me", "go"}},
		{"digits", "10x growth", []string{"10x", "growth"}},
		{"nothing", "？。 '' ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := words(tt.in)
			if len(got) != len(tt.want) {
				t.Fatalf("words(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("words(%q) = %q, want %q", tt.in, got, tt.want)
				}
			}
		})
	}
}

// TestAsksOnTypeSets measures Asks, the test for a spoken final worth an
// answer, on the classifier's labelled sets: an utterance of an asking type
// (behavioural, concept, design, coding, project) must ask, a statement must
// not; smalltalk and logistics hold both kinds and are left out. The rules
// were tuned on the train and dev halves; the test half was scored once
// they were final (97.1%; 93.1% before the ASR spellings, choice, A-not-A,
// counting and task rules). go test -run TestAsksOnTypeSets -v ./coach/
func TestAsksOnTypeSets(t *testing.T) {
	t.Parallel()
	for name, floor := range map[string]float64{"types_train.yaml": 0.98, "types_dev.yaml": 0.98, "types_test.yaml": 0.96} {
		acc := accuracy{}
		for _, l := range loadLabelled(t, name) {
			if l.Type == Smalltalk || l.Type == Logistics {
				continue
			}
			want := l.Type != Remark
			got := Asks(l.Text)
			acc.add([]string{"all", l.Lang}, got == want)
			if got != want && name != "types_test.yaml" {
				t.Logf("%s %s %-11s asks=%v %q", name, l.Lang, l.Type, got, l.Text)
			}
		}
		t.Logf("%s: %.1f%% (%d/%d; zh %.1f%%, en %.1f%%)", name, 100*acc.frac("all"), acc["all"][0], acc["all"][1], 100*acc.frac("zh"), 100*acc.frac("en"))
		if acc.frac("all") < floor {
			t.Errorf("%s: Asks right on %.1f%%, want at least %.0f%%", name, 100*acc.frac("all"), 100*floor)
		}
	}
}
