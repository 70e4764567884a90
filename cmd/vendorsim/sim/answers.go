package sim

import (
	"fmt"
	"hash/fnv"
	"strings"
	"unicode/utf8"
)

// maxLabelRunes is the longest label before a colon that questionOf skips
// ("Interviewer's question: …", "面试官的问题：…").
const maxLabelRunes = 40

// kind is the shape of a simulated answer.
type kind int

const (
	kindStory      kind = iota // STAR: situation, task, action, result
	kindTechnical              // key point, example, result
	kindIntro                  // a short pitch
	kindMotivation             // why this move
	kindWeakness               // a weakness and what is done about it
)

// topicRule maps words of a question to the answer's kind and subject.
// Subjects are the simulator's own words: a reply never quotes its prompt.
type topicRule struct {
	keys []string // lower-case English stems or Chinese words
	kind kind
	en   string // the subject, for kindStory and kindTechnical
	zh   string
}

// topicRules are tried in order; the first with a key in the question wins.
var topicRules = []topicRule{
	{[]string{"stakeholder", "conflict", "disagree", "difficult", "冲突", "分歧", "意见不合", "矛盾"}, kindStory,
		"a disagreement over priorities with another team's lead", "和另一个团队负责人在优先级上的分歧"},
	{[]string{"mistake", "fail", "wrong", "错误", "失败", "犯过"}, kindStory,
		"a release of mine that broke the checkout page", "我负责的一次发布导致下单页故障"},
	{[]string{"deadline", "pressure", "priorit", "scope", "工期", "截止", "压力", "优先级"}, kindStory,
		"a launch whose date could not move while the scope kept growing", "一次上线日期不能变、需求却不断增加的发布"},
	{[]string{"teammate", "mentor", "struggl", "同事", "带人", "新人"}, kindStory,
		"a new teammate who was struggling with our codebase", "一位刚加入、对代码库还不熟悉的同事"},
	{[]string{"leave", "five years", "see yourself", "hire you", "离开", "离职", "规划", "跳槽"}, kindMotivation, "", ""},
	{[]string{"weakness", "strength", "缺点", "优点", "不足"}, kindWeakness, "", ""},
	{[]string{"design", "architect", "scale", "limiter", "system", "设计", "架构", "限流", "系统"}, kindTechnical,
		"a service that has to stay fast under load", "一个在高负载下要保持稳定的服务"},
	{[]string{"database", "query", "sql", "index", "slow", "数据库", "查询", "变慢", "索引"}, kindTechnical,
		"a database query that got slow", "一条变慢的数据库查询"},
	{[]string{"yourself", "background", "introduce", "自己", "自我介绍"}, kindIntro, "", ""},
	{[]string{"why", "company", "role", "为什么", "公司", "岗位"}, kindMotivation, "", ""},
	{[]string{"project", "proud", "challeng", "项目", "成就", "挑战"}, kindStory,
		"the migration project I led last year", "我去年主导的一次系统迁移"},
}

// defaultTopic is the subject of a question no rule matches.
var defaultTopic = topicRule{kind: kindStory, en: "a recent project where I owned the outcome", zh: "最近一个由我负责结果的项目"}

// Reply phrases, picked by a hash of the question so that different
// questions get different replies and the same question the same one.
var (
	situations = []string{
		"on a recent project I had to deal with %s, under a tight deadline.",
		"in my last role I ran into %s while the release date was fixed.",
		"at a previous company I faced %s, and it was starting to hurt our customers.",
	}
	tasks = []string{
		"I was responsible for getting it back on track without burning out the team.",
		"I had to find the root cause and agree on a plan with two other teams.",
		"my goal was to fix it quickly while keeping every stakeholder informed.",
	}
	actions = []string{
		"I mapped the failure points, split the work into small steps and reviewed progress daily.",
		"I gathered data first, proposed two options with their costs, and we picked one together.",
		"I paired with the people closest to the problem and wrote down every decision we made.",
	}
	results = []string{
		"we shipped on time and incidents dropped by half in the next quarter.",
		"the fix held, and the process became our team's default.",
		"the customer renewed, and I learned to raise risks much earlier.",
	}
	techPoints = []string{
		"for %s I start from the numbers: the load, the latency budget and what may fail.",
		"with %s I measure first, change one thing at a time and keep the simplest design that works.",
	}
	techExamples = []string{
		"in my last role I profiled the hot path, added a short-lived cache and a queue in front of the slow part, and load-tested it before the launch.",
		"at my previous company I read the query plan, added the missing index, moved the heavy report to a replica and watched the p99 for a week.",
	}
	intros = []string{
		"I have spent the last few years building backend services, most recently owning the payments path end to end. I like turning vague problems into small, measurable steps, and my best work came from working closely with product and support. Next I want a team where I can own a larger area and help others grow.",
		"I started in support, moved into engineering and have shipped web and backend features for four years since. What I enjoy most is making a slow or fragile system dependable; last year that cut our on-call pages by half. I am looking for a role with more ownership of the product.",
	}
	motivations = []string{
		"I have learned a lot where I am, but the scope has stopped growing. This role gives me a product I care about and harder problems at a larger scale, and I want to bring what I learned about reliability to a team that is building something new.",
		"I am looking for a place where engineers own problems end to end. From what I have read about your team, that is how you work, and it matches how I did my best work: close to the users, with clear goals and room to improve the process.",
	}
	weaknesses = []string{
		"I used to take too much on myself instead of asking for help early. A release slipped because of it, so now I raise risks in the first week and split the work with the team. My manager pointed out the change in my last review.",
		"I can spend too long polishing details. I now agree on what good enough means before I start and time-box the rest, which kept my last two projects on schedule without cutting quality.",
	}

	situationsZH   = []string{"最近的项目里，我遇到了%s，而且工期很紧。", "在上一份工作中，我碰到了%s，已经开始影响客户。"}
	tasksZH        = []string{"我负责在不拖垮团队的前提下把事情拉回正轨。", "我需要找到根因，并和另外两个团队对齐方案。"}
	actionsZH      = []string{"我先收集数据，列出两个方案及其代价，再和大家一起做决定，每天跟进进度。", "我把问题拆成小步骤，和最了解情况的同事结对推进，并记录每个决定。"}
	resultsZH      = []string{"我们按时交付，下个季度的故障减少了一半。", "这个做法后来成了团队的默认流程，我也学会了更早暴露风险。"}
	techPointsZH   = []string{"面对%s，我先看数据：负载、延迟预算和可能出错的地方。", "处理%s时，我先测量，每次只改一处，保留最简单可行的方案。"}
	techExamplesZH = []string{"上一份工作中，我分析了热点路径，加了短时缓存，在慢的环节前加了队列，上线前做了压测。", "在之前的公司，我看了执行计划，补上缺失的索引，把重报表挪到只读副本，并观察了一周的 p99。"}
	introsZH       = []string{"我过去几年主要做后端服务，最近负责支付链路的端到端开发。我擅长把模糊的问题拆成可衡量的小步骤，和产品、客服紧密配合。接下来希望在一个能负责更大范围、也能带新人的团队里发展。"}
	motivationsZH  = []string{"在现在的公司我学到了很多，但成长空间变小了。这个岗位的产品我很认可，问题更有挑战，我希望把在稳定性上积累的经验带到新团队。"}
	weaknessesZH   = []string{"我以前习惯自己扛下太多事情，没有及早求助，导致一次发布延期。现在我会在第一周就暴露风险，并和团队分担工作，上次绩效评估里经理也肯定了这个变化。"}
)

// defaultReply is the simulated answer of model to a chat's last user
// message: deterministic, shaped by the question's kind (a STAR story, a
// technical point with an example, a pitch, a motivation, a weakness),
// marked as simulated, and in Chinese when the question is. It is made of
// the simulator's own phrases only: no word of the message is copied.
func defaultReply(model, message string) string {
	q := questionOf(message)
	h := fnv.New64a()
	_, _ = h.Write([]byte(q))
	sum := h.Sum64()
	pick := func(list []string, shift uint) string { return list[(sum>>shift)%uint64(len(list))] }
	rule := topicOf(q)
	mark := "[simulated " + model + "] "
	if hasHan(q) {
		switch rule.kind {
		case kindTechnical:
			return mark + "要点：" + fmt.Sprintf(pick(techPointsZH, 0), rule.zh) + "例子：" + pick(techExamplesZH, 8) + "结果：" + pick(resultsZH, 24)
		case kindIntro:
			return mark + pick(introsZH, 0)
		case kindMotivation:
			return mark + pick(motivationsZH, 0)
		case kindWeakness:
			return mark + pick(weaknessesZH, 0)
		}
		return mark + "情境：" + fmt.Sprintf(pick(situationsZH, 0), rule.zh) + "任务：" + pick(tasksZH, 8) + "行动：" + pick(actionsZH, 16) + "结果：" + pick(resultsZH, 24)
	}
	switch rule.kind {
	case kindTechnical:
		return mark + "Key point: " + fmt.Sprintf(pick(techPoints, 0), rule.en) + " Example: " + pick(techExamples, 8) + " Result: " + pick(results, 24)
	case kindIntro:
		return mark + pick(intros, 0)
	case kindMotivation:
		return mark + pick(motivations, 0)
	case kindWeakness:
		return mark + pick(weaknesses, 0)
	}
	return mark + "Situation: " + fmt.Sprintf(pick(situations, 0), rule.en) + " Task: " + pick(tasks, 8) + " Action: " + pick(actions, 16) + " Result: " + pick(results, 24)
}

// questionOf finds the interviewer's question in a user message: its last
// non-empty line, after a short label and colon when it has one. Prompts
// put the recent conversation first and the question last.
func questionOf(message string) string {
	lines := strings.Split(strings.TrimSpace(message), "\n")
	q := strings.TrimSpace(lines[len(lines)-1])
	if i := strings.IndexAny(q, ":："); i >= 0 && utf8.RuneCountInString(q[:i]) <= maxLabelRunes {
		_, w := utf8.DecodeRuneInString(q[i:])
		if rest := strings.TrimSpace(q[i+w:]); rest != "" {
			q = rest
		}
	}
	return q
}

// topicOf is the first rule with a key in q, or defaultTopic.
func topicOf(q string) topicRule {
	lower := strings.ToLower(q)
	for _, r := range topicRules {
		for _, k := range r.keys {
			if strings.Contains(lower, k) {
				return r
			}
		}
	}
	return defaultTopic
}
