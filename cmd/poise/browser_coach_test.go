package main

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/poise-dev/poise/coach"
)

// coachParityInputs are utterances on both sides of every detection and
// classification rule of coach/scripts.json.
var coachParityInputs = []string{
	"Tell me about a time you failed", "So, uh, okay. Tell me about a time you failed",
	"um so like how do you handle pressure", "Why did you leave your last job",
	"How would you design a rate limiter", "What's your biggest weakness", "Walk me through your resume.",
	"Can you explain how Raft works", "Okay great, and could you give me an example of that",
	"Have you ever used Kafka in production", "Do you have any questions for us",
	"Describe a conflict with a teammate.", "We use Kafka a lot. How do you feel about event sourcing",
	"We use Kubernetes, what's your experience with it", "When you were at Google how did you handle on-call",
	"What I want to know is why you left", "I'd love to hear about your biggest project.",
	"Is there anything you'd like to ask", "And what about testing", "You built that alone?",
	"I’d like to hear how you scaled it", "Design a URL shortener.", "Thank you. Walk us through the architecture",
	"We use Kubernetes heavily here.", "That's what we do here.", "So what we do is mostly payments.",
	"I'll tell you how we work.", "Let me tell you about the team.", "Thank you for coming in today.",
	"Please have a seat.", "Which is why we moved to Go.", "We're glad you could join us.",
	"The team is about ten people, and we ship weekly.", "Okay, great. Um.", "When I joined we had three engineers.",
	"You know what, we should wrap up.", "We'd love to have you on the team.", "", "... ,,, 。。",
	"What did you learn from your biggest mistake?", "Tell me about a project you are proud of",
	"Describe a time you disagreed with your manager", "How do you grow as an engineer",
	"你为什么离开上一家公司", "讲讲你最有挑战的项目", "能否介绍一下你自己", "你用过 Redis 吗", "那你呢。",
	"嗯，好的。那个，说说你的优缺点", "你是怎么做容量规划的", "如何保证消息不丢", "你之前在哪个团队",
	"请你描述一下当时的情况", "你们用 Go？", "有没有遇到过线上故障", "我们主要做支付。你熟悉分布式事务吗",
	"那你们 use Kubernetes 吗", "Tell me about 你的项目", "我们团队主要做支付系统。", "我们什么都做。",
	"这就是为什么我们选了 Go。", "我先介绍一下我们团队。", "哪怕流量翻倍，系统也很稳。", "我们每秒处理十万请求。",
	"我们呢，主要做支付。", "我们不怎么加班。", "怎么说呢，我们的业务比较复杂。",
	"讲一个你失败的经历", "你从这次失误里学到了什么", "说说你带领团队的一次经历", "你最大的缺点是什么",
	"ＴＥＬＬ ME ABOUT YOURSELF", "Tell me about yourself\nand your last role", "what's… the hardest bug you fixed",
	// one or more of every question type, for the type rules
	"Can you hear me okay?", "你那边能听清楚吗？", "How's your day going?", "How are you", "What are your salary expectations?",
	"你期望的薪资是多少？", "What's the difference between TCP and UDP?", "Redis 的持久化是怎么实现的？",
	"How does a hash map work under the hood?", "HashMap 的底层原理是什么？", "Reverse a linked list, how would you do it?",
	"两数之和这道题你怎么做？", "How would you design a URL shortener?", "设计一个秒杀系统，你会怎么做？",
	"Why did you choose Kafka for that pipeline?", "你们项目里为什么用 Redis？", "有什么是简历上没写的？",
	"讲一个你失败的经历", "Explain eventual consistency.", "What is a mutex?",
	"What are your strengths?", "Why should we hire you?", "你为什么离职？", "Where do you see yourself in five years?",
	"线上 CPU 飙高怎么排查？", "微服务有什么优缺点？", "Kafka vs RabbitMQ, how do they compare?",
	// the choice, A-not-A, counting and task rules, and what they must not catch
	"你说的那个缓存，是本地缓存还是 Redis", "紧不紧张，放松一点就好", "团队几个人", "谁是你最好的导师",
	"设计一个抢红包的系统", "whats the approach for a maximum sub array sum", "am I coming through clearly",
	"given a grid of ones and zeros count the islands", "我们还是先开始吧。", "我们几乎每天都上线。",
	"很多大公司都这么做。", "我先简单说一下流程。",
	// topic turns, and remarks on a topic they must not catch
	"ACID", "Sliding window maximum.", "Cool. Okay warm up, reverse a linked list", "0-1 背包", "Top K 高频元素",
	"Okay technical. Stack versus heap memory", "the numbers look good", "Redis, nice.", "实现 memcpy，要考虑内存重叠的情况",
	"好，Redis 这块可以了", "我们用 Kafka",
	// terse prompts said as orders, and statements that share their words
	"Validate a BST. Approach.", "design dropbox file sync across devices", "Please walk through your design.",
	"Design reviews happen on Thursdays.", "I like your approach.", "嗯 最长递增子序列 说思路", "在线判题系统 你来设计", "嗯思路是对的。",
	// a greeting or a check-in, then a question of its own; then one more check-in
	"Hi, nice to meet you. Let's start, tell me about yourself.", "喂 能听到吗 好 那我们先聊技术 进程和线程有什么区别",
	"Hey, can you hear me? Is the video frozen?", "Can you hear Ravi okay? His mic is a bit quiet.",
	"你好你好 不用紧张 先讲一个你最有成就感的项目", "信号量和互斥锁有什么区别", "网络分区是什么意思",
	"Hi! nice to meet you, how are you", "喂 你好 能听到吗 好 那你先说说你自己吧", "你好 我先跟你说说我们这边的情况",
	// polite and scorecard asks
	"I'd be curious to hear what drew you to backend work.", "Next on my list: a time you missed a deadline.",
	"let's design a chat app for a small team",
	// confirmation asks in transcripts, and telling phrases that ask nothing
	"we are hybrid two days a week in the office does that work for you", "这个你能接受吧",
	"你对工作地点有要求吗 我们是在杭州", "我们组 code review 比较严格，这个先跟你说一下。",
	// a question a few words after its wh word, restarted mid-clause, or
	// after an opener; and what those rules must not catch
	"Nice so on a team like what role do you usually end up playing", "I know which team did it.",
	"looking back so far um is there anything you regret", "we split the array and do it twice",
	"In your view what makes someone a good leader", "ever um bitten off more than you could chew",
	"Ever since we moved to Go, builds are fast.", "你更喜欢自己一个人干，还是跟大家一起合作", "我想还是先从项目开始。",
	"这个岗位在深圳，你愿意过来吗，需要搬家的", "嗯 你给你自己 技术能力 打个分 十分制",
	// topic turns of up to eight words, side by side, and an order the
	// interviewer gives themself
	"Containers versus virtual machines", "B+ 树和 LSM 树 区别", "Okay coding-ish. Lowest common ancestor in a binary tree",
	"Number of islands in a grid", "最长递增子序列", "Let me paste the problem into the chat.",
	// kindly, numbered scorecard items, imperatives, 咋, 说下 and 给定 ask;
	// "given that", "kindly note", 不咋 and 我先说下 do not
	"kindly explain how your team ships a release", "question three describe a project you are proud of",
	"given coordinates of points find the closest pair", "given that we are short on time we will skip the design part",
	"kindly note the office is closed on fridays", "这个接口慢了你一般咋排查", "我们这边加班不咋多", "你说下这个模块的思路",
	"我先说下今天的安排", "给定一个字符串 找出最长的不重复子串",
	// the rules' behavioural default, where the model decides: a follow-up,
	// a concept, design questions without a design cue; and a personal
	// question it may not call technical
	"You said you rolled back rather than fixing forward, what made that the right call?",
	"um what's a saga pattern, have you come across that",
	"How would you make sure a customer never gets charged twice if the client retries?",
	"Where would you keep the audit log in this design so that nobody can tamper with it?",
	"How would your manager describe you in one word", "为什么要离职？",
}

// testCoachParity checks that the browser's coach (web/static/coach.js, run
// when the server is out of reach) gives exactly the server's cards, typed
// by coach.Classify (its rules and its naive Bayes model, both ported).
func testCoachParity(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	tb.do(chromedp.Navigate(s.url("/")))
	tb.waitFor("the coach scripts", `document.body.dataset.scripts === 'loaded'`)
	inputs, _ := json.Marshal(coachParityInputs)
	type pair struct{ EN, ZH coach.Card }
	got := js[[]pair](tb, `(async () => {
  const m = await import('/static/coach.js');
  const s = await m.loadScript();
  return `+string(inputs)+`.map((text) => ({EN: s.card(text, 'en'), ZH: s.card(text, 'zh')}));
})()`)
	if len(got) != len(coachParityInputs) {
		t.Fatalf("the page made %d card pairs for %d inputs", len(got), len(coachParityInputs))
	}
	questions := 0
	for i, text := range coachParityInputs {
		for _, c := range []struct {
			lang string
			got  coach.Card
		}{{"en", got[i].EN}, {"zh", got[i].ZH}} {
			want := coach.CardOf(text, coach.Classify(text, c.lang), c.lang)
			if !reflect.DeepEqual(c.got, want) {
				t.Errorf("%q in %s: the browser's card\n %+v\nthe server's\n %+v", text, c.lang, c.got, want)
			}
		}
		if got[i].EN.Kind == coach.Question {
			questions++
		}
	}
	if questions == 0 || questions == len(coachParityInputs) {
		t.Errorf("%d of %d inputs are questions; the table must hold both kinds", questions, len(coachParityInputs))
	}
	types := map[coach.Type]bool{}
	for i := range coachParityInputs {
		types[got[i].EN.QuestionType] = true
	}
	for _, typ := range coach.Types {
		if !types[typ] {
			t.Errorf("no input of type %s: the table must reach every type rule", typ)
		}
	}
	tb.requireClean()
}
