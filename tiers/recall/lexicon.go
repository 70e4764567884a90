package recall

import (
	"fmt"
	"slices"
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
intro = introduce yourself | introduce | introducing | introduction | tell me about yourself | tell us about yourself | a bit about yourself | little about yourself | talk about yourself | something about yourself | who you are | a bit about you | little about you | quick version | 自我介绍 | 介绍自己 | 介绍一下你 | 介绍下你 | 介绍一下自己 | 你是谁 | 了解一下你 | 说说你自己 | 讲讲你自己
resume = resume | cv | on paper | work history | 简历 | 履历 | 按时间顺序 | 从毕业到现在 | 都做了些什么
background = your background | background in | educational background | academic background | technical background | 背景
education = education | educational | degree | school | university | college | academic | studied | master's | masters | mba | 学历 | 学校 | 大学 | 教育 | 读书 | 毕业 | 学位 | 本科 | 研究生 | 读研 | 学的是
major = major | subject | what to study | what you studied | 专业
further_study = further education | further study | back to school | certification | certifications | certificate | qualification | qualifications | 深造 | 证书 | 考证 | 进修 | 在职学习
responsibility = responsibilities | responsible for | in charge of | duties | on your plate | involve | involves | 负责 | 职责 | 主要做 | 工作内容 | 做哪些事 | 具体做
typical_day = typical day | average day | workday | day to day | day-to-day | normal day | daily | each day | 一天 | 每天 | 日常 | 工作日 | 平常 | 上班到下班
three = three | top three | 三个 | 三项 | 三种
words_about_you = three words | adjectives | one word | sum you up | sum yourself up | 三个词 | 关键词 | 标签 | 概括自己 | 哪三个
perceive = describe you | describe yourself | say about you | see you | think of you | how would they describe | sum you up | 评价你 | 形容你 | 形容一下你 | 怎么看你 | 眼里 | 眼中 | 描述你 | 什么样的人
achievement = achievement | achievements | accomplishment | accomplishments | achieved | proud | proudest | biggest win | brag | 成就 | 骄傲 | 自豪 | 引以为傲 | 成绩 | 最得意
rewarding = rewarding | satisfaction | satisfying | fulfilling | worth it | enjoy the most | 成就感 | 满足 | 值了 | 回报 | 享受
get_started = get started | got started | get into | got into | end up doing | ended up | break into | started in | 入行 | 进入这个行业 | 走上这条路 | 开始做这一行 | 结缘 | 干这行 | 入这行 | 做这行 | 入了这行
hobby = hobby | hobbies | for fun | free time | spare time | outside of work | outside work | not working | get up to | 爱好 | 兴趣爱好 | 业余 | 空闲 | 下班以后 | 下班后 | 工作之外 | 不工作 | 周末都
not_on_resume = not on your resume | isn't on your resume | beyond what's on paper | doesn't show | wouldn't guess | not on paper | 简历上没有 | 简历之外 | 简历上没写 | 看不出来 | 简历上没
work_style = working style | work style | way you work | how you work | approach your work | get things done | work with you | 工作风格 | 工作方式 | 做事方式 | 开展工作 | 共事 | 推进手上 | 节奏不一样 | 节奏
role_model = role model | influenced you | biggest influence | shaped how you | shaped you | inspired you | made a big difference | 榜样 | 影响最大 | 对你影响 | 影响了你 | 帮助最大
relevant = relevant | relevance | fits | carries over | carry over | transfer | transferable | prepares you | 相关 | 对口 | 贴近 | 迁移 | 用在这份工作
why_us = why us | why our company | why this company | why here | work here | join us | join our | our company | this company | pick us | choose us | 我们公司 | 贵司 | 贵公司 | 加入我们 | 选择我们 | 来我们 | 选我们 | 偏偏是我们 | 投了我们
role = this role | this position | this job | the role | the position | this particular job | 这个岗位 | 这个职位 | 这份工作 | 岗位 | 职位
apply = apply | applied | applying | application | 申请 | 投递 | 应聘
attract = interest | interested | interests you | appeal | appeals | appealing | attract | attracts | drew you | draws you | drawn | drawing you | 感兴趣 | 吸引 | 看中 | 心动 | 动了心
industry = industry | industries | this field | your field | the field | new field | this space | the space | our space | sector | line of work | 行业 | 领域 | 这一行 | 赛道 | 同行
know_us = know about us | know about our | what you know | look into us | looked into | heard about | understanding of what we do | what we do | 了解我们 | 了解多少 | 研究过我们 | 对我们的 | 对我们公司 | 对我们的业务
motivation = motivate | motivates | motivated | motivation | motivating | drive you | drives you | driven | passion | out of bed | keeps you going | keep you going | energy | fired up | 动力 | 驱动 | 激励 | 干劲 | 热情 | 激情 | 士气 | 积极性 | 提不起劲
excite = excite | excited | excites | exciting | looking forward | 兴奋 | 期待 | 点燃
product = product | products | 产品
improve_it = improve it | change one thing | what's missing | do better | 改进 | 改善 | 做得更好 | 建议
next_job = next job | next role | new job | next position | job search | opportunities | 下一份工作 | 新工作 | 找工作 | 机会 | 求职 | 最想要的 | 最看重
culture = culture | cultures | environment | atmosphere | 文化 | 氛围 | 环境
competitor = competitor | competitors | competition | competitive | landscape | similar companies | 竞争对手 | 竞争 | 同类公司 | 同行比 | compare with others|in the market | 行业里的位置 | 在行业里
succeed = succeed | success | successful | top performer | do well | it takes | 成功 | 做好 | 成功要素
management_style = management style | like to be managed | being managed | how you are managed | manage you | ideal boss | kind of manager | 管理方式 | 管理你 | 什么样的领导 | 什么样的上级 | 直属上级 | 对上级
trend = trend | trends | heading | changes coming | 趋势 | 动向 | 动态 | 变化
boring = boring | dull | repetitive | routine | tedious | mundane | unglamorous | slog | 枯燥 | 重复 | 无聊 | 琐碎 | 没意思 | 不感兴趣
mission = mission | vision | purpose | resonate | believe in | 使命 | 愿景 | 价值观 | 认同 | 打动
impact = impact | make a difference | difference you | leave a mark | make a mark | mark on | contribution | contribute | 影响 | 改变 | 贡献 | hope to make|want to have changed|leave on | 推动
strength = strength | strengths | strong point | strong suit | strongest | good at | best at | really good | superpower | confident in | 优点 | 优势 | 长处 | 擅长 | 强项 | 拿手 | 突出 | 最强
weakness = weakness | weaknesses | weak point | weak spot | weakest | shortcoming | shortcomings | area to improve | areas to improve | areas for improvement | area for improvement | improve on | need to improve | needs improvement | could improve | get better at | working on | not good at | not so good at | struggle with | fall short | flaw | flaws | bad at | 缺点 | 不足 | 短板 | 弱点 | 劣势 | 需要改进 | 待提高 | 有待提高 | 需要提高 | 不擅长 | 不太行 | 不太会 | 毛病 | 坏习惯 | 待改进 | 不太擅长
boss = manager | managers | boss | bosses | supervisor | superior | higher-up | above you | senior management | 上司 | 领导 | 老板 | 经理 | 主管 | 上级 | 管理层
unique = unique | stand out | standing out | different from | set you apart | sets you apart | others can't | special | 与众不同 | 不同 | 特别 | 别人没有 | 特质 | 独特 | different about you | 别人不一定 | 能带来
hire = hire you | hiring you | hire | right person | the one | why should we | pick you | choose you | bring to | 录用 | 选你 | 胜任 | 凭什么 | 带来什么 | 选择你 | 要你
improve_self = improve | improvement | improving | change about yourself | fix | grow | 改进 | 改掉 | 加强 | 提高 | 提升 | 想改的
lack = lack | missing | requirements | need to learn | short of | 欠缺 | 差什么 | 不满足 | 需要补 | 短板在哪 | 对照我们的要求 | 还差
backfire = backfire | backfired | overused | overuse | worked against | became a weakness | 反而 | 用过头 | 负面 | 过度
go_to = come to you | go-to | rely on you | ask you about | ask you for | count on you | 找你 | 依赖你 | 请教 | 找你帮忙 | 哪方面的
hardest = hardest | most difficult | toughest | most challenging | struggle | don't come naturally | 最难 | 吃力 | 头疼 | 最不擅长
overcome = overcome | overcame | used to | turned around | turn around | worked through | 克服 | 改掉 | 扭转 | 曾经 | 过去的
hard_skill = hard skill | technical skill | professional skill | expertise | 专业技能 | 硬技能 | 专业能力 | 专业水平 | 专业上
soft_skill = soft skill | soft skills | interpersonal | people skills | 软技能 | 软实力 | 沟通协作 | beyond technical
big_picture = big picture | big-picture | detail-oriented | details person | forest | trees | strategic | vision | 全局 | 宏观 | 战略 | 大方向 | 抠细节
detail = detail | details | overlooked | overlook | careless | attention to detail | 细节 | 粗心 | 疏忽 | 漏掉 | 忽略
rate = rate yourself | rate your | scale of | out of ten | score yourself | 1 to 10 | one to ten | 打分 | 几分 | 十分 | 满分 | 打几分 | 处于什么位置 | 在同行里
review = performance review | review | appraisal | evaluation | 绩效 | 考核 | 绩效评估 | 绩效面谈
failure = failure | failures | fail | failed | went wrong | go wrong | screw up | screwed up | setback | setbacks | didn't go well | did not go well | didn't work out | blew it | flop | flopped | dropped the ball | didn't pan out | went sideways | 失败 | 搞砸 | 挫折 | 翻车 | 栽跟头 | 黄了 | 没做成 | 不理想 | 不顺 | 没成 | go as planned|went as planned|没按计划|不太成功
mistake = mistake | mistakes | error | errors | messed up | mess up | 错误 | 犯错 | 出错 | 失误 | 犯过 | 疏忽
wrong = wrong | wrong call | bad call | incorrect | 错了 | 不对 | 想错 | 选错 | 错的
fix_after = clean up | fix it | fixed it | make it right | 补救 | 收场 | 弥补
project = project | projects | 项目
deadline = deadline | deadlines | due date | timeline | late | on time | the date | racing the clock | 截止 | 期限 | 延期 | 延误 | 按时 | 按期 | 来不及 | 赶不完 | 赶
lesson = lesson | lessons | taught you | takeaway | hard way | 教训 | 收获 | 反思 | 启发 | 吃过亏 | 一课
learn = learn | learned | learnt | learning | 学会 | 学了 | 学东西 | 学到 | 学习
regret = regret | regrets | do differently | done differently | go back and change | 后悔 | 遗憾 | 重来 | 应该做却没做 | 当初应该
risk = risk | risky | gamble | bold move | out on a limb | 风险 | 冒险 | 赌 | 大胆
target = goal | goals | target | targets | kpi | kpis | objective | objectives | numbers | quota | 目标 | 指标 | 业绩 | 达标
let_down = let down | letting down | disappointed | disappoint | unhappy with your work | counting on you | 失望 | 辜负 | 期望 | let someone down|let them down|let people down|let a customer|fall short of what|unhappy with your work
admit = admit | admitted | own it | own up | changed your mind | 承认 | 认错
overcommit = overcommit | overcommitted | bit off more | bitten off more | underestimate | underestimated | said yes to too much | too much | 低估 | 承诺过多 | 答应了太多 | 揽活 | 做不过来 | 顾不过来 | 太简单
decision = decision | decisions | decide | decided | tough call | bad call | wrong call | make a call | made a call | judgment call | the call | judgment | 决策 | 决定 | 拍板 | 抉择 | 判断 | 拍了板
conflict = conflict | conflicts | disagree | disagreed | disagreement | disagreements | argument | argue | clash | clashed | friction | tension | tense | at odds | butt heads | butted heads | see eye to eye | saw things differently | tug-of-war | 矛盾 | 冲突 | 分歧 | 争执 | 意见不合 | 不同意 | 吵架 | 争论 | 不一致 | 闹僵 | 僵持 | 摩擦 | 闹别扭 | 吵起来 | 撞车
coworker = coworker | coworkers | co-worker | colleague | colleagues | teammate | teammates | peer | peers | people you work with | 同事 | 队友 | 伙伴 | 组员
difficult_person = difficult coworker | difficult colleague | difficult person | difficult people | someone difficult | hard to work with | tough to get along | hard to get along | hard to please | 难相处 | 难搞 | 不好相处 | 难合作 | 难沟通 | 难伺候 | 难缠 | 强势
go_along = go along | went along | commit | committed | overruled | supported it | support it | anyway | 执行 | 服从 | 保留意见 | 全力配合 | 不认可 | 不认同
mediate = mediate | mediator | stepped in | between two | between others | each other | 调解 | 和事佬 | 化解 | 协调 | 两个人 | 两个同事
customer = customer | customers | client | clients | stakeholder | stakeholders | 客户 | 用户 | 甲方 | 业务方 | 需求方 | 合作方 | 相关方 | 利益相关
slacker = not pulling their weight | pulling their weight | doing their share | their share | slacker | lazy | free rider | 偷懒 | 搭便车 | 不出力 | 拖后腿 | 不靠谱 | 出力
other_team = other team | other teams | another team | other department | other departments | another department | other function | other functions | other group | cross-functional | cross functional | 其他部门 | 别的部门 | 跨部门 | 兄弟团队 | 别的团队 | 其他团队 | 不同部门 | 跨团队 | 外部团队 | 两个部门 | 互不相让
credit = credit | unfair | unfairly | recognised | recognized | 功劳 | 抢功 | 不公平 | 委屈 | 成果说成 | 说成是他的
say_no = say no | said no | turn down | turning down | refuse | refused | decline | push back | pushed back | pushing back | unreasonable | unrealistic | 拒绝 | 说不 | 回绝 | 推回 | 不合理 | 做不了 | couldn't take|can't take on|take something on
opposed = shoot it down | resistance | opposed | challenge your | pushed back hard | 反对 | 质疑 | 挑战你的 | strongly disagreed|disagreed with your idea|disagree with your idea|met strong | 态度很坚决 | 不同意你的观点
heated = heated | angry | emotions | calm | keep your cool | 激烈 | 火药味 | 情绪 | 冷静 | 发火 | tense|tension | 吵起来
team = team | teams | teamwork | team player | collaborate | collaboration | work with others | cooperate | together | 团队 | 协作 | 合作 | 配合 | 一起
remote = remote | remotely | distributed | work from home | time zones | time zone | same location | 远程 | 居家 | 在家办公 | 异地 | 时区 | 海外
communication = communicate | communication | communicating | explain | convey | 沟通 | 交流 | 表达 | 解释 | 讲清楚 | 讲明白 | communicator
non_technical = non-technical | non technical | nontechnical | layman | layperson | non-expert | outside your field | without a technical background | 非技术 | 外行 | 不懂技术
complex = complex | complicated | simplify | 复杂 | 专业的东西
help = help | helped | helping | support | supported | struggling | 帮助 | 帮忙 | 帮
mentor = mentor | mentored | mentoring | coach | coached | coaching | up to speed | new person | junior | 带新人 | 指导 | 辅导 | 带人 | 新人 | 导师 | 带过 | helped grow|help someone grow|grow professionally
lead = lead | leading | led | leader | leaders | leadership | took the lead | take the lead | step up | in charge | running the show | 领导力 | 带领 | 带队 | 牵头 | 主导 | 负责人 | 领头 | 带头 | 站出来 | 当领导 | looked to you|look to you | 领导能力 | 领导才能
manage_people = manage people | managed people | managing people | management experience | team lead | direct reports | report to you | reporting to you | people manager | 管理 | 管过人 | 带团队 | 下属 | 团队管理 | 组长 | group you've been responsible|how many people|管过多少人
delegate = delegate | delegated | delegating | delegation | hand off | split up work | letting go | assign | 分配 | 授权 | 分派 | 委派 | 分工 | 交给别人
unpopular = unpopular | didn't like | wasn't popular | against what most people wanted | stood by | 不受欢迎 | 不太同意 | 没人支持 | 不开心 | 顶着
influence = influence | influenced | persuade | persuading | persuaded | convince | convinced | buy-in | win over | winning over | without authority | formal authority | don't report to you | 说服 | 影响他人 | 争取支持 | 说了不算 | 没有职权 | 管理权 | 让别人愿意 | without being|anyone's boss|weren't their boss|not their boss|don't report
initiative = initiative | proactive | above and beyond | beyond your role | beyond your job | outside your job | wasn't really your job | without being asked | nobody asked | took ownership | 主动 | 自发 | 分外 | 分内 | 职责以外 | 职责范围以外 | 没人要求 | 多做一步
underperform = underperform | underperforming | underperformer | underdelivering | low performer | poor performer | struggling to perform | missing the bar | falling behind | 表现不佳 | 表现不好 | 绩效差 | 不达标 | 跟不上
idea_upward = adopt your idea | your idea | pitching | pitch | back something | mind about something | 采纳 | 想法 | 建议 | 改变主意 | proposal|proposals|your plan
change = change | changes | changed | new process | new way | old way | rolled out | roll out | introduce a new | introduced a new | introducing a new | 变革 | 新流程 | 推行 | 新做法 | 老办法 | 改变 | 引入
trust = trust | credibility | respect | earn trust | earn respect | earn credibility | earn their | inherit | take over | new team | 信任 | 信服 | 接手 | 新团队 | 打开局面 | 戒心
uncertainty = without all the information | full picture | uncertainty | uncertain | information was missing | facts were missing | incomplete | data isn't there | ambiguity | ambiguous | 信息不完整 | 不确定 | 不明朗 | 信息不全 | 信息不够 | 数据不够 | 模糊
hard_times = setback | low point | tough stretch | difficult period | hard times | going badly | reorg | 困难时期 | 挫折 | 逆境 | 最艰难 | 士气很低 | 低谷
qualities = qualities | quality | traits | what makes | what separates | 特质 | 品质 | 素质 | 好领导 | what made them good|makes a good|best manager
senior_people = more experienced | more senior | know more than you | outranked | older | 更资深 | 资历老 | 经验多 | 比你强 | 年纪大 | 经验更丰富
pressure = pressure | pressures | stress | stressful | stressed | stresses | intense | under the gun | anxious | riding on you | 压力 | 紧张 | 焦虑 | 高压 | 抗压 | 压力山大 | under your skin|stress you out|stresses you out
tight_deadline = tight deadline | tight timeline | short timeline | impossible deadline | moved up | racing the clock | 很紧 | 时间紧 | 很赶 | 赶进度 | 提前了 | 时间特别紧
priority = prioritise | prioritize | prioritising | prioritizing | priority | priorities | competing | comes first | urgent | both seem important | 优先级 | 先后 | 排序 | 轻重缓急 | 先做哪个 | 急事 | 紧急任务 | 很急 | 撞车 | 夹在 | 两个需求方 | 两个领导 | 两个上级 | 怎么安排 | 压过来
multiple = multiple projects | several projects | juggle | juggled | juggling | multitasking | multitask | spinning plates | lot of plates | in parallel | at once | at the same time | on the go | 同时 | 多线程 | 并行 | 一心多用 | 兼顾 | 好几个 | 多个
slip = slipping | won't make | miss a deadline | missed a deadline | missed the deadline | miss the date | raise the flag | be late | delivered late | 保不住 | 要延期 | 赶不完 | 延期 | 错过截止
time_management = time management | manage your time | organised | organized | stay organized | stay organised | on top of things | plan your day | system for | 时间管理 | 管理时间 | 条理 | 规划每天 | 不乱
overwhelm = overwhelmed | overwhelming | workload | swamped | drowning | too much | more on your plate | at capacity | 应接不暇 | 忙不过来 | 工作量 | 撑不住 | 满负荷 | 被工作淹没 | 活太多
last_minute = last minute | last-minute | eleventh hour | suddenly | shift suddenly | late in the game | thrown out | disrupt | 临时 | 突然 | 打乱 | 突发 | 变更
crisis = emergency | emergencies | crisis | fire | put out | broke badly | paged | middle of the night | 紧急 | 危机 | 救火 | 半夜 | 突发事件
speed_quality = speed and quality | cut corners | shipping fast | getting it right | done yesterday | protect quality | keep quality | quality up | sacrifice quality | 质量 | 速度 | 又要快又要好 | 质量底线 | 牺牲质量
quick_decision = quick decision | on the spot | in minutes | think on your feet | thinking on your feet | fastest | decide quickly | 迅速做决定 | 当机立断 | 马上拍板 | 几分钟 | 最快
burnout = burnout | burn out | burning out | burned out | burnt out | look after yourself | relentless | crunch | 倦怠 | 透支 | 过劳 | 身心 | 高强度 | 耗干 | 保持状态 | 冲刺期 | 连续忙
five_years = five years | 5 years | five years from now | 五年
long_term = long term | long-term | long run | long game | ultimately | ten years | 10 years | big-picture goal | 长期 | 长远 | 终极 | 十年 | 从长远看
short_term = short term | short-term | immediate | next year | year or two | near term | a year from now | 短期 | 近期 | 一两年 | 未来一年
future = future | years out | down the road | see yourself | picture yourself | 未来 | 以后 | 将来 | 几年后 | 展望
goal = goal | goals | aim | aiming | aspiration | ambition | 目标 | 追求 | 抱负
plan = plan | plans | planning | concrete steps | concrete | achieve | reach your goals | reach those goals | reaching | 规划 | 计划 | 打算 | 落地 | 一步步 | 行动 | 实现 | 达成 | get there
up_to_date = up to date | stay current | keep up | keep learning | keep your skills | 与时俱进 | 跟上 | 不落伍 | 持续学习 | 充电 | 技术更新 | new trends | 新动态 | 关注行业 | go stale | stale | outdated | obsolete | 过时 | 落伍
learn_new = new skill | new skills | picked up | pick up | taught yourself | learned recently | learning lately | new thing | something new | 新技能 | 新知识 | 自学 | 新东西 | 学到的
recent = recently | lately | past few months | latest | 最近 | 近来 | 过去几个月
comfort_zone = comfort zone | stretched you | unfamiliar territory | weren't sure you could | outside your skill set | 舒适区 | 没把握 | 突破自己 | 挑战自己 | 不擅长的任务 | 主动接过
track = management track | technical track | individual contributor | ic | people management | manage people or | hands-on | go deep | going deep | expert | specialist | 管理路线 | 技术路线 | 走管理 | 走技术 | 技术专家 | 管理岗 | 专家岗 | 深耕 | 专家 | career paths|two paths
define_success = define success | success look like | measure whether | feel your career has been a success | 定义 | 算成功 | 衡量 | 标准 | 做成了什么
develop_next = develop next | next skill | grow in | get much better | capability | build up | build skills | build a capability | 下一步 | 重点提升 | 锻炼 | 下一个重点 | 想提升 | 最想提升 | 成长上
learning_approach = learning style | learn best | how you learn | get up to speed | approach learning | where do you start | 学习方法 | 学东西 | 怎么去学 | 从哪里入手 | 上手 | 陌生的领域 | 不熟悉的任务
dream = dream | dream job | ideal job | ideal job | ideal role | ideal position | ideal next | perfect role | any job | 理想 | 梦想 | 心目中 | 最想做什么工作 | 不考虑任何限制
gain = get out of | gain | hoping to get | expect to grow | beyond the paycheck | 获得 | 得到 | 带来什么 | 收获 | 成长
stay_long = how long | stay with us | stay with our | stay here | staying here | stay in this role | long you stay | stick around | leave after a year | 待多久 | 多长时间 | 稳定 | 长期打算 | 干多久 | 几年 | 多久 | long term here|something long term | 干一两年就走 | 待几年
plateau = plateau | stuck | stopped growing | stalled | stagnant | stagnate | 瓶颈 | 停滞 | 没有进步 | 学不到
leave = leave | leaving | left | quit | quitting | resign | resigned | resigning | resignation | move on | moving on | moved on | on the market | look around | looking around | 离职 | 离开 | 辞职 | 跳槽 | 走人 | 换工作 | 裸辞 | 看机会 | 出来看 | 想走 | 走的 | 换了 | 想换 | 外面的机会 | 看外面
current_job = current job | current company | current role | current employer | current position | where you are now | right now | 现在的工作 | 目前的工作 | 当前公司 | 现在的公司 | 目前的公司 | 现公司 | 现在公司 | 现在这份 | 现在这家
previous_job = last job | previous job | previous company | previous employer | previous role | last company | last position | former employer | 上一份工作 | 上家公司 | 前公司 | 上一家 | 原公司 | 之前那份 | 上家 | 上一段
gap = gap | gaps | break in | nothing listed | unaccounted | time off | sabbatical | between jobs | 空窗 | 空白期 | 空档 | 断档 | 没上班 | 断了一段 | 没有工作经历
job_hopping = job hopping | job-hopping | changed jobs | so often | short stints | quite a few roles | stayed anywhere | stick around | 跳槽频繁 | 频繁 | 换了好几 | 经常换 | 频率 | 稳定性 | 都不长 | 只待了 | 很快又走 | 不会很快
fired = fired | laid off | layoff | layoffs | let go | terminated | dismissed | company's decision | 被裁 | 裁员 | 开除 | 辞退 | 被优化 | 劝退 | 被动离职
switch_field = change careers | career change | changing careers | switch | why the switch | line of work | previous field | 转行 | 转型 | 换方向 | 跨行 | 转方向 | 跨度 | 转到 | 相关背景 | 原行业
counteroffer = counteroffer | counter offer | counter-offer | offered you more money to stay | make you stay | keep you | 挽留 | 留你 | 留下 | 加薪 | 涨薪
dislike = dislike | don't like | didn't like | frustrate | frustrated | frustrating | not working for you | don't enjoy | unhappy | 不喜欢 | 不满意 | 不满 | 不爽 | 不开心 | 受不了
long_tenure = one company | one place | same place | same company | so many years | so long | long time | 一家公司 | 这么久 | 这么多年 | 同一家 | 一段工作经历 | 待久了 | 一个地方
no_offer_yet = without another job | lined up | before you had something | without an offer | resigning first | still employed | 裸辞 | 先辞职 | 没找好 | 下家 | 骑驴找马 | 下一份
company_size = big company | large company | big tech | startup | startups | small company | company size | large org | size and stage | 大公司 | 小公司 | 创业公司 | 大厂 | 规模 | 小团队 | 大平台 | bigger company | smaller company | somewhere bigger | somewhere smaller | our stage | 大一点的公司 | 小一点的公司
so_soon = so soon | short time | few months | less than a year | early | 不到一年 | 几个月 | 这么快 | 没多久 | 很短 | only been there|months | 这么短
salary = salary | salaries | your pay | current pay | base pay | pay rise | pay cut | compensation | total comp | money | compensation package | salary package | paycheck | base and bonus | number in mind | that number | salary range | pay range | that figure | 薪资 | 薪水 | 工资 | 待遇 | 薪酬 | 收入 | 年薪 | 月薪 | 钱 | 年包 | 价位 | 拿多少
expectation = expectation | expectations | expect | expecting | had in mind | 期望 | 预期 | 希望拿到 | have in mind
current_now = current | currently | right now | today | at the moment | these days | 目前 | 现在 | 当前
notice = notice period | notice | handover | how long before you're free | 交接 | 离职流程 | 通知期 | 提前多久 | 离职手续
start_date = start date | when can you start | start working | could you start | you start | able to start | available to start | start at | how soon | available | earliest | could you join | can you join | next month | 到岗 | 入职 | 上岗 | 多久能来 | 什么时候能来 | 过来上班 | 下个月
relocate = relocate | relocating | relocation | move to | move there | willing to move | moving there | moving to | based in | another city | different city | new city | other city | 搬到 | 搬过来 | 搬家 | 外派 | 换城市 | 别的城市 | 其他城市 | 异地工作 | 搬过来 | allow you to move|able to move
overtime = overtime | long hours | extra hours | work weekends | working weekends | on weekends | evenings or weekends | weekend work | crunch periods | 加班 | 周末加班 | 周末也要 | 周末可能要来 | 高强度 | 比较忙
travel = travel | business travel | business trip | client sites | traveling | 出差 | 客户现场 | 每个月出去 | 出去一两次
work_mode = hybrid | into the office | in the office | to the office | office days | from the office | on-site | onsite | in person | working arrangement | days in | 混合办公 | 坐班 | 办公室 | 来公司 | 远程办公 | 到公司
ask_us = questions for us | any questions | questions for me | want to ask | like to ask | ask me | ask us | want to know about | anything you'd like to ask | 有什么问题 | 想问 | 问我们 | 有没有问题 | 反问 | 提问 | 想了解的 | 疑问 | tell you about us|what else can i tell | 想知道的 | 还有什么想
other_offers = other offers | other offer | other companies | interviewing elsewhere | job search | talking to other | offers on the table | 其他公司 | 其他机会 | 别的公司 | 别家 | 在面 | 求职进展 | 手上有 | 看哪些机会 | 除了我们 | 做决定
negotiable = below your expectations | lower | negotiable | flexibility | budget | firm | 低于 | 预算 | 商量 | 余地 | 少一点 | 给到
non_compete = non-compete | non compete | noncompete | contract | covenant | covenants | confidentiality | non-solicit | 竞业 | 协议 | 合同 | 保密 | 限制条款 | 法律上的冲突 | 法律
accept = accept | say yes | saying yes | top choice | 接受 | 答应 | 意向 | 会来吗 | 会不会来
reference = reference | references | background check | referee | contact your | former manager | 背调 | 背景调查 | 推荐人 | 证明人 | 联系他 | 联系你 | contact
team_role = role on a team | play on a team | role do you | part do you | 扮演 | 角色 | where do you fit|the doer|the organiser|the organizer
independent = independently | independent | on your own | by yourself | alone | 独立 | 一个人 | 单独
relationship = relationship | relationships | rapport | get along | get to know | 关系 | 处好 | 搞好 | 熟悉起来 | 默契 | 打交道
feedback = feedback | criticism | criticise | criticize | criticised | criticized | critique | 批评 | 反馈 | 意见
give_feedback = give feedback | gave feedback | give someone | tell a peer | didn't want to hear | constructive criticism | 提意见 | 提反馈 | 不好开口 | 指出
seek_feedback = receive feedback | prefer to get feedback | ask for feedback | actively | how you're doing | 接收反馈 | 寻求反馈 | 主动找 | 要反馈 | 对你工作的评价 | 了解别人
progress = progress | status | informed | status update | status updates | progress update | progress updates | updates on | up to date on | where a project stands | 进展 | 进度 | 同步 | 汇报 | 到哪一步 | 清楚项目
miscommunication = miscommunication | misunderstanding | communication breakdown | different assumptions | 误会 | 误解 | 沟通不到位 | 没对齐 | 不是一回事
depend = depend | depended | dependency | dependencies | blocked | need something from | 依赖 | 卡住
diversity = backgrounds | cultures | cultural | diverse | 文化 | 不同背景 | 文化背景 | 外籍 | 差异
team_first = team's goals | ahead of your own | sacrificed | sacrifice | set aside your own | individual goals | 团队目标 | 个人利益 | 牺牲 | 放弃 | 个人目标
tech_challenge = technical challenge | technically challenging | hardest technical | hardest problem | hardest project | toughest problem | complex system | most complex | 技术难题 | 技术挑战 | 最难的 | 棘手 | 难点 | 疑难 | 最复杂 | 技术难度
debug = bug | bugs | debug | debugging | troubleshoot | root cause | tracked down | tricky issue | 排查 | 调试 | 定位 | 根因 | 查了很久
tradeoff = trade-off | tradeoff | trade-offs | tradeoffs | trade off | gave up | weigh | pros and cons | 权衡 | 取舍 | 利弊
tech_decision = technical decision | technical decisions | technical call | design decision | two technical approaches | 技术决策 | 技术决定 | 技术方案
code_quality = code quality | good code | bad code | clean code | 代码质量 | 代码写得好
design = design | designed | architecture | architected | system design | whiteboard | 设计 | 架构
system = system | systems | service | services | 系统 | 服务
tech_direction = technical direction | architecture decision | tech lead | technical argument | disagrees with your design | 技术方向 | 技术负责人 | 技术争论 | 方案评审
tech_debt = technical debt | tech debt | pay down | refactor | refactoring | 技术债 | 重构 | 还技术债
incident = incident | incidents | outage | production issue | production incident | in production | breaks in production | paged | on call | on-call | 线上事故 | 故障 | 线上问题 | 事故 | 宕机 | 值班 | 挂了 | 线上故障
performance = performance | faster | speed up | latency | slow | resource usage | 性能 | 优化 | 调优 | 太慢 | 很慢 | 变快
testing = test | tests | testing | unit test | unit tests | test coverage | automated tests | 测试 | 单元测试 | 单测 | 测到
code_review = code review | code reviews | review someone's code | pull request | pull requests | reviewing | 代码评审 | 代码审查 | 评审 | code review
legacy = legacy | old code | messy code | fragile | rewrite | codebase nobody understands | 遗留 | 老代码 | 老系统 | 重写 | 烂
tech_choice = choose between technologies | build or buy | build-versus-buy | evaluate a new library | library | framework | picking a tool | stack | 技术选型 | 选框架 | 中间件 | 自研 | 开源 | 类似的库 | 开源库 | 第三方库
learn_tech = new technology | new tech | new framework | new tool | ramp up | ramping up | never used | thrown onto | 新技术 | 新框架 | 新工具 | 没接触过 | 不熟
codebase = codebase | large codebase | huge codebase | existing system | unfamiliar service | productive | 代码库 | 陌生的系统 | 熟悉代码 | 几十万行 | 独立干活 | 熟悉
scale = scale | scaled | scaling | load | traffic | high-load | high-concurrency | limits | ten times | 扩容 | 扩展 | 流量 | 高并发 | 规模 | 扛住 | 十倍
tech_stack = tech stack | technical stack | stack | languages | language | frameworks | technologies | 技术栈 | 语言 | 框架 | 用什么技术 | 技术上的核心竞争力 | 精通
migration = migration | migrate | migrated | migrating | moving a codebase | new database | new platform | 迁移 | 升级 | 换到
productivity = developer productivity | automation | automate | automated | tooling | ci/cd | ci | cd | pipeline | workflow | 自动化 | 工具链 | 开发效率 | 构建 | 部署 | 重复劳动 | team faster
security = security | secure | vulnerability | vulnerabilities | 安全 | 漏洞
estimate = estimate | estimates | estimation | estimating | how long will | how long would it take | how long it will take | how long a | size a new feature | 估算 | 工期 | 几天 | 多久能做完 | 给时间
reliability = reliable | reliability | monitor | monitoring | alerts | alert | alerting | before users tell you | 稳定 | 可靠 | 监控 | 告警
code = code | coding | programming | programmer | 编程 | 写代码 | 代码
experience = experience | experienced | 经验 | 经历
presentation = present | presented | presenting | presentation | presentations | speak in front | public speaking | large audience | executives | 演讲 | 展示 | 当众 | 分享会 | 大会 | 公开场合 | 高层 | 听众
redo = from scratch | start over | started over | rebuild | another way | 重新做 | 推倒重来 | 重来一次 | 从头再来 | 事后看
bad_news = bad news | something went wrong | communicate a problem | escalate | 坏消息 | 报告问题 | 汇报问题 | 不好的消息 | 进展不顺 | 第一时间说
design_process = requirements to | before you start coding | before coding | technical design | 写代码之前 | 动手之前 | 技术方案设计 | 新需求 | 技术设计 | 新功能
ask_help = ask for help | asked for help | and reached out | reached out for | reach out for help | couldn't solve | 求助 | 请教别人 | 寻求帮助 | 找人帮忙 | 请别人帮忙 | 靠别人帮忙 | 开口请
unclear_req = unclear | aren't sure what they want | vague | not sure what they want | 需求不明确 | 需求模糊 | 不清楚要什么 | 说不清
end_to_end = start to finish | end to end | end-to-end | kickoff | all the way to | 从头到尾 | 全程 | 立项 | 从零到一
lead_style = leadership style | style as a leader | kind of leader | way you lead | lead people | 领导风格 | 带人是什么风格 | 带团队的方式 | 哪种类型的领导 | 带人的风格
difficulty = challenge | challenges | challenging | difficult | hard | tough | obstacle | 困难 | 挑战 | 难题 | 不容易 | 艰难
handle = handle | handled | handling | deal with | dealt with | cope | respond | react | 处理 | 应对 | 怎么办 | 解决 | 应付
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
	names  []string
	hashes []uint64               // featureHash(kindConcept, name), by concept
	en     map[string][]lexTermEN // first stem → terms
	zh     map[rune][]lexTermZH   // first character → terms
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
		lx.hashes = append(lx.hashes, featureHash(kindConcept, name))
		for term := range strings.SplitSeq(terms, "|") {
			if err := lx.add(id, normalizeText(strings.TrimSpace(term))); err != nil {
				return nil, fmt.Errorf("recall: lexicon: %s: %w", name, err)
			}
		}
	}
	for _, ts := range lx.en {
		slices.SortStableFunc(ts, func(a, b lexTermEN) int { return len(b.stems) - len(a.stems) })
	}
	for _, ts := range lx.zh {
		slices.SortStableFunc(ts, func(a, b lexTermZH) int { return len(b.text) - len(a.text) })
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
// stems. Overlapping terms all count, but a concept counts once per starting
// word, with its longest term there ("manage" and "management" stem
// alike).
func (lx *lexicon) matchEN(stems []string, fn func(concept int)) {
	var fired []int
	for i, s := range stems {
		fired = fired[:0]
		for _, t := range lx.en[s] { // longest first
			if i+len(t.stems) <= len(stems) && equalStrings(stems[i:i+len(t.stems)], t.stems) && !slices.Contains(fired, t.concept) {
				fired = append(fired, t.concept)
				fn(t.concept)
			}
		}
	}
}

// matchZH calls fn with the concept of every term found in a run of
// Chinese characters. Overlapping terms all count, but a concept counts once per starting character, with its
// longest term there.
func (lx *lexicon) matchZH(text []rune, fn func(concept int)) {
	var fired []int
	for i, r := range text {
		fired = fired[:0]
		for _, t := range lx.zh[r] { // longest first
			if i+len(t.text) <= len(text) && equalRunes(text[i:i+len(t.text)], t.text) && !slices.Contains(fired, t.concept) {
				fired = append(fired, t.concept)
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
