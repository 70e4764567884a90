package recall

import (
	"fmt"
	"strings"
)

// conceptTable is the hand-built bilingual lexicon of interview concepts:
// one concept per line, "name = term | term | ...". A term is either
// English (matched as a sequence of stemmed words, stop words included) or
// Chinese (matched as a substring of a run of Chinese characters), never
// mixed. Every match adds the concept as one feature, so "weakness",
// "area to improve" and "短板" meet in one dimension and paraphrases with
// little word overlap, or in the other language, still land near each
// other. Terms are general interview vocabulary, not copies of bank or
// evaluation sentences.
const conceptTable = `
intro = introduce yourself | introduce | introduction | about yourself | who you are | 自我介绍 | 介绍自己 | 介绍一下你 | 介绍下你 | 你是谁
background = background | resume | cv | career so far | your story | 背景 | 简历 | 履历 | 经历
education = education | degree | school | university | college | major | studied | graduate | 学历 | 学校 | 大学 | 专业 | 学位 | 读书 | 毕业 | 教育
responsibility = responsibilities | responsible for | day to day | typical day | main duties | your job involve | 负责 | 职责 | 日常工作 | 主要做 | 工作内容
describe_self = three words | describe yourself | describe you | friends describe | colleagues describe | how would others | 三个词 | 形容你 | 形容一下你 | 评价你 | 描述你 | 别人眼中 | 怎么看你
why_us = why our company | why us | why this company | why here | why do you want to work here | join us | join our | our company | this company | 我们公司 | 贵司 | 贵公司 | 加入我们 | 选择我们 | 来我们 | 我们这
this_role = this role | this position | this job | the role | the position | apply | applied | applying | 这个岗位 | 这个职位 | 这份工作 | 岗位 | 职位 | 应聘 | 申请 | 投递
interest = interest | interested | appeal | attract | excited about | 感兴趣 | 兴趣 | 吸引 | 看中 | 心动
motivation = motivate | motivation | motivates | drive you | drives you | passion | passionate | get out of bed | energize | 动力 | 驱动 | 热情 | 激情 | 热爱 | 激励
know_us = know about us | know about our | research | heard about | familiar with | 了解我们 | 了解多少 | 知道我们 | 对我们 | 了解贵司 | 了解我们公司
strength = strength | strengths | strong point | strong suit | good at | best at | superpower | advantage | 优势 | 优点 | 长处 | 擅长 | 强项 | 亮点
weakness = weakness | weaknesses | weak point | weak spot | shortcoming | shortcomings | area to improve | areas to improve | areas for improvement | area for improvement | improve on | need to improve | needs improvement | could improve | get better at | working on | not good at | not so good at | struggle with | flaw | flaws | 缺点 | 不足 | 短板 | 弱点 | 劣势 | 需要改进 | 待提高 | 有待提高 | 需要提高 | 还要提高 | 不擅长 | 不太行 | 不太会
hire_you = hire you | why should we | pick you | choose you | stand out | unique | different from other | other candidates | 录用你 | 要你 | 选你 | 凭什么 | 脱颖而出 | 与众不同 | 竞争力 | 其他候选人
skill = skill | skills | ability | abilities | competence | 能力 | 技能 | 本事
failure = failure | fail | failed | mistake | mistakes | went wrong | go wrong | screw up | screwed up | mess up | messed up | setback | didn't go well | did not go well | didn't work out | blew it | 失败 | 错误 | 犯错 | 犯过错 | 搞砸 | 挫折 | 失误 | 没做好 | 翻车 | 栽跟头 | 出错
lesson = learn | learned | learnt | lesson | lessons | takeaway | take away | 学到 | 教训 | 收获 | 反思 | 启发
regret = regret | regrets | do differently | do it differently | 后悔 | 遗憾 | 重来 | 再来一次
feedback = feedback | criticism | criticize | critique | negative comments | 批评 | 反馈 | 意见 | 指出问题
conflict = conflict | conflicts | disagree | disagreement | argument | argue | clash | friction | tension | butt heads | didn't see eye to eye | 矛盾 | 冲突 | 分歧 | 争执 | 意见不合 | 不同意 | 吵架 | 争论 | 不一致 | 闹僵
difficult_person = difficult coworker | difficult colleague | difficult person | difficult people | hard to work with | difficult teammate | 难相处 | 难搞 | 不好相处 | 难合作 | 不好打交道
boss = manager | boss | supervisor | superior | higher-up | 上司 | 领导 | 老板 | 经理 | 主管 | 上级
coworker = coworker | coworkers | co-worker | colleague | colleagues | teammate | teammates | peer | peers | 同事 | 队友 | 伙伴
customer = customer | customers | client | clients | stakeholder | stakeholders | user | users | 客户 | 用户 | 甲方 | 利益相关
team = team | teamwork | team player | collaborate | collaboration | work with others | cooperate | together | 团队 | 协作 | 合作 | 配合 | 一起
cross_team = cross-functional | cross functional | other teams | another team | other departments | 跨部门 | 跨团队 | 其他部门 | 别的团队 | 其他团队
remote = remote | distributed | work from home | time zones | time zone | 远程 | 居家 | 异地 | 时区
communication = communicate | communication | explain | convey | 沟通 | 交流 | 表达 | 解释 | 讲清楚
non_technical = non-technical | non technical | layman | layperson | 非技术 | 外行 | 不懂技术 | 业务方
help = help | helped | support | mentor | mentored | coach | coached | onboard | 帮助 | 帮忙 | 带新人 | 指导 | 辅导 | 带人 | 新人
lead = lead | leading | led | leader | leadership | took charge | take charge | take the lead | took the lead | in charge | 领导力 | 带领 | 带队 | 牵头 | 主导 | 负责人 | 领头 | 挑大梁
manage = manage | managing | management | direct reports | people manager | 管理 | 带团队 | 下属 | 团队管理
delegate = delegate | delegation | assign tasks | hand off | divide work | 分配 | 授权 | 分派 | 委派 | 分工
decision = decision | decide | decisions | judgment call | tough call | 决策 | 决定 | 拍板 | 抉择
unpopular = unpopular | not everyone agreed | pushback | push back | 不受欢迎 | 反对 | 不被认可 | 得罪人
influence = influence | persuade | persuaded | convince | convinced | buy-in | buy in | without authority | 说服 | 影响 | 争取支持 | 推动
initiative = initiative | proactive | above and beyond | beyond your role | beyond your job | outside your job | nobody asked | 主动 | 自发 | 分外 | 职责以外 | 职责范围以外 | 份外
underperform = underperform | underperforming | underperformer | low performer | poor performer | not pulling their weight | struggling team member | 表现不佳 | 表现不好 | 绩效差 | 拖后腿 | 不给力 | 跟不上
change = change | changes | adapt | adapted | adjust | ambiguity | ambiguous | uncertain | uncertainty | 变化 | 变动 | 适应 | 调整 | 不确定 | 模糊
pressure = pressure | stress | stressful | stressed | overwhelm | overwhelmed | burnout | burned out | burnt out | under the gun | 压力 | 紧张 | 焦虑 | 高压 | 抗压 | 扛不住 | 崩溃
deadline = deadline | deadlines | time crunch | short on time | due date | tight timeline | tight schedule | on time | 截止 | 期限 | 时间紧 | 赶工 | 工期 | 来不及 | 赶进度 | 延期 | 按时
priority = prioritize | priority | priorities | juggle | juggling | multiple tasks | competing | at the same time | many things | 优先级 | 先后 | 排序 | 多个任务 | 同时 | 多线程 | 轻重缓急 | 并行
overtime = overtime | long hours | weekends | weekend | late nights | work late | after hours | 996 | 加班 | 周末 | 熬夜 | 长时间工作 | 下班后
balance = work-life balance | work life balance | balance | personal life | 生活平衡 | 工作与生活 | 平衡 | 生活
incident = emergency | incident | outage | production issue | crisis | urgent | on call | on-call | fire | firefight | 线上事故 | 故障 | 紧急 | 突发 | 危机 | 事故 | 宕机 | 救火 | 线上问题
future = five years | 5 years | ten years | 10 years | long term | long-term | future | see yourself | down the road | years from now | 五年 | 十年 | 未来 | 以后 | 长期 | 将来 | 几年后
goal = goal | goals | plan | plans | aspiration | aspirations | ambition | path | 目标 | 规划 | 计划 | 打算 | 方向 | 路径
career = career | professional | 职业 | 事业 | 生涯
growth = grow | growth | develop | development | improve | progress | level up | 成长 | 提升 | 进步 | 发展 | 提高
learning = learn new | keep learning | new technology | new technologies | new tech | new skill | pick up | picked up | ramp up | up to date | keep up | 新技术 | 新技能 | 快速学习 | 跟上 | 学新东西 | 上手 | 学习
track = management track | technical track | individual contributor | ic track | people management | 管理路线 | 技术路线 | 走管理 | 走技术 | 技术专家 | 管理岗
achievement = achievement | accomplishment | proud | proudest | biggest success | greatest success | win | 成就 | 骄傲 | 自豪 | 最得意 | 成绩 | 得意
gap = gap | career gap | employment gap | time off | sabbatical | between jobs | 空窗 | 间隔 | 空档 | 断档 | 没工作
switch_field = switch careers | career change | change careers | changing careers | transition | new field | different field | 转行 | 转型 | 换方向 | 跨行 | 换行业
leave = leave | leaving | left | quit | quitting | resign | resigned | resignation | move on | moving on | looking for a new | 离职 | 离开 | 辞职 | 跳槽 | 走人 | 换工作 | 裸辞 | 看机会 | 找工作 | 出来看看
current_job = current job | current company | current role | current employer | current position | last job | previous job | previous company | previous employer | last company | 现在的工作 | 目前的工作 | 当前公司 | 现在的公司 | 目前的公司 | 上一份工作 | 上家公司 | 前公司 | 上一家 | 现公司 | 现在公司 | 原公司
job_hopping = job hopping | job-hopping | many jobs | so many jobs | changed jobs | short tenure | short stints | didn't stay long | 跳槽频繁 | 频繁 | 换了好几 | 经常换 | 待的时间短 | 都不长
fired = fired | laid off | layoff | layoffs | let go | terminated | 被裁 | 裁员 | 开除 | 辞退 | 被优化
counteroffer = counteroffer | counter offer | counter-offer | asked you to stay | convince you to stay | 挽留 | 留你 | 留下来
dislike = dislike | don't like | didn't like | frustrate | frustrated | frustrating | unhappy | least favorite | 不喜欢 | 不满意 | 不满 | 不开心 | 最不喜欢 | 受不了
salary = salary | pay | compensation | expected salary | money | paid | package | ctc | 薪资 | 薪水 | 工资 | 待遇 | 薪酬 | 期望薪资 | 收入 | 年薪 | 月薪 | 钱
start_date = start date | when can you start | how soon | available to start | join us | start working | earliest | 到岗 | 入职 | 上岗 | 多久能来 | 什么时候能来 | 最快
notice = notice period | notice | two weeks | handover | hand over | 交接 | 离职手续 | 通知期 | 提前通知
relocate = relocate | relocation | move to | moving to | commute | location | city | 搬家 | 搬迁 | 换城市 | 通勤 | 工作地点 | 城市 | 外地
travel = travel | business trip | business trips | traveling | 出差
other_offers = other offers | other offer | other companies | interviewing elsewhere | other interviews | other opportunities | 其他公司 | 其他机会 | 别的公司 | 别家 | 在面 | 其他面试
ask_us = questions for us | any questions | questions for me | anything you want to ask | ask us | ask me | anything for us | 有什么问题 | 想问 | 问我们 | 有没有问题 | 反问 | 要问的 | 问问我们
work_mode = hybrid | on site | onsite | office | in person | 坐班 | 办公室 | 现场办公 | 混合办公
reference = reference | references | background check | referee | 背调 | 背景调查 | 推荐人 | 证明人
visa = visa | sponsorship | work permit | 签证 | 工作许可
hours = schedule | shift | working hours | flexible | flexibility | 工作时间 | 作息 | 弹性
tech_challenge = technical challenge | hardest technical | hardest problem | hardest bug | toughest problem | challenging project | complex problem | 技术难题 | 技术挑战 | 最难的 | 棘手 | 难点 | 疑难 | 复杂问题
difficulty = challenge | challenging | difficult | hard | tough | obstacle | 困难 | 挑战 | 难题 | 不容易 | 艰难
debug = bug | bugs | debug | debugging | troubleshoot | root cause | diagnose | 排查 | 调试 | 定位问题 | 根因 | 修复
project = project | projects | 项目
design = design | architecture | system design | architect | 设计 | 架构 | 方案
code_review = code review | code reviews | reviewing code | pull request | review | 代码审查 | 代码评审 | 评审 | 审查
quality = test | testing | tests | quality | qa | 测试 | 质量 | 单测
performance = performance | optimize | optimization | optimise | slow | latency | speed up | faster | scale | scalability | 性能 | 优化 | 延迟 | 扩展 | 高并发 | 提速
tech_debt = technical debt | tech debt | legacy | refactor | refactoring | cleanup | 技术债 | 遗留 | 重构 | 老代码 | 历史包袱
tradeoff = trade-off | tradeoff | trade-offs | tradeoffs | trade off | pros and cons | speed and quality | 权衡 | 取舍 | 利弊 | 平衡速度
stack = tech stack | stack | tools | language | framework | programming language | 技术栈 | 工具 | 框架 | 编程语言 | 语言
estimate = estimate | estimation | estimates | how long | 评估 | 估算 | 预估 | 估时
documentation = document | documentation | docs | 文档
ai_tools = ai | artificial intelligence | chatgpt | copilot | llm | llms | 人工智能 | 大模型
code = code | coding | programming | programmer | 编程 | 写代码 | 代码 | 编码
ideal = ideal | perfect | dream | 理想 | 完美 | 梦想
culture = culture | environment | atmosphere | work style | working style | 文化 | 氛围 | 环境 | 工作方式 | 风格
values = value | values | care about | important to you | matters most | 价值观 | 看重 | 在意 | 重视 | 最重要
hobby = hobby | hobbies | free time | spare time | outside of work | outside work | for fun | weekends | 爱好 | 兴趣 | 业余 | 空闲 | 闲暇
experience = experience | experienced | years of experience | 经验 | 工作经验
first_days = first 90 days | 90 days | first three months | first month | first few months | first year | 前三个月 | 头三个月 | 入职后 | 第一个月 | 前几个月 | 第一年
risk = risk | risky | gamble | 风险 | 冒险
creative = creative | creativity | innovation | innovative | new idea | new ideas | 创新 | 创意 | 新点子 | 新想法
ethics = ethical | ethics | dishonest | cheat | integrity | unethical | cut corners | 道德 | 诚信 | 不诚实 | 违规 | 原则
boring = boring | repetitive | tedious | mundane | grunt work | 枯燥 | 重复 | 无聊 | 琐碎 | 杂活
organize = organize | organized | time management | manage your time | productive | productivity | 时间管理 | 安排时间 | 效率 | 条理
independent = independently | on your own | by yourself | alone | without supervision | 独立 | 一个人 | 单独 | 自己搞定
fit = fit | good fit | right fit | match | suit | suitable | qualified | 合适 | 适合 | 匹配 | 胜任
metric = kpi | kpis | okr | okrs | metrics | measure success | success look like | 指标 | 考核 | 绩效 | 衡量 | 成功的标准
product = product | products | feature | features | 产品 | 功能
deliver = deliver | delivered | ship | shipped | launch | launched | release | 交付 | 上线 | 发布 | 落地
data = data | data-driven | numbers | analytics | 数据 | 数据驱动
`

// concept is one compiled lexicon entry.
type concept struct {
	name string
	en   [][]string // English terms as stemmed word sequences
	zh   []string   // Chinese terms
}

// lexicon finds concept terms in text: English terms by their first stem,
// Chinese terms by their first character, so a text is scanned once.
type lexicon struct {
	names []string
	en    map[string][]lexTermEN // first stem → terms
	zh    map[rune][]lexTermZH   // first character → terms
}

type lexTermEN struct {
	stems   []string
	concept int
}

type lexTermZH struct {
	text    []rune
	concept int
}

// compileLexicon parses a concept table. A term that mixes scripts, an
// empty term or a repeated concept name is an error.
func compileLexicon(table string) (*lexicon, error) {
	lx := &lexicon{en: make(map[string][]lexTermEN), zh: make(map[rune][]lexTermZH)}
	seen := make(map[string]bool)
	for line := range strings.Lines(table) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, terms, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || seen[name] {
			return nil, fmt.Errorf("recall: lexicon: bad or repeated concept line %q", line)
		}
		seen[name] = true
		id := len(lx.names)
		lx.names = append(lx.names, name)
		for term := range strings.SplitSeq(terms, "|") {
			if err := lx.add(id, normalizeText(strings.TrimSpace(term))); err != nil {
				return nil, fmt.Errorf("recall: lexicon: %s: %w", name, err)
			}
		}
	}
	return lx, nil
}

// add compiles one term of concept id.
func (lx *lexicon) add(id int, term string) error {
	segs := splitSegments(term)
	if len(segs) != 1 {
		return fmt.Errorf("term %q must be one run of one script", term)
	}
	if s := segs[0]; s.han {
		if s.text != term {
			return fmt.Errorf("term %q mixes scripts", term)
		}
		rs := []rune(s.text)
		lx.zh[rs[0]] = append(lx.zh[rs[0]], lexTermZH{text: rs, concept: id})
		return nil
	}
	stems := make([]string, len(segs[0].words))
	for i, w := range segs[0].words {
		stems[i] = stem(w)
	}
	lx.en[stems[0]] = append(lx.en[stems[0]], lexTermEN{stems: stems, concept: id})
	return nil
}

// matchEN calls fn with the concept of every term found in a sequence of
// stems; overlapping terms all count.
func (lx *lexicon) matchEN(stems []string, fn func(concept int)) {
	for i, s := range stems {
		for _, t := range lx.en[s] {
			if i+len(t.stems) <= len(stems) && equalStrings(stems[i:i+len(t.stems)], t.stems) {
				fn(t.concept)
			}
		}
	}
}

// matchZH calls fn with the concept of every term found in a run of
// Chinese characters; overlapping terms all count.
func (lx *lexicon) matchZH(text []rune, fn func(concept int)) {
	for i, r := range text {
		for _, t := range lx.zh[r] {
			if i+len(t.text) <= len(text) && equalRunes(text[i:i+len(t.text)], t.text) {
				fn(t.concept)
			}
		}
	}
}

func equalStrings(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalRunes(a, b []rune) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
