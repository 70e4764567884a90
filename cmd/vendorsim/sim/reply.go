package sim

import (
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTopicWords is how many words of the question name the reply's topic.
const maxTopicWords = 4

// Reply phrases, picked by a hash of the question so that different
// questions get different replies and the same question the same one.
var (
	situations = []string{
		"on a recent project my team faced a real problem with %s under a tight deadline.",
		"in my last role we kept running into trouble with %s while the release date was fixed.",
		"at a previous company nobody owned %s and it was starting to hurt our customers.",
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
	situationsZH = []string{"最近的项目里，我们团队在“%s”上遇到了棘手的问题，而且工期很紧。", "在上一份工作中，“%s”一直没有人负责，已经开始影响客户。"}
	tasksZH      = []string{"我负责在不拖垮团队的前提下把事情拉回正轨。", "我需要找到根因，并和另外两个团队对齐方案。"}
	actionsZH    = []string{"我先收集数据，列出两个方案及其代价，再和大家一起做决定，每天跟进进度。", "我把问题拆成小步骤，和最了解情况的同事结对推进，并记录每个决定。"}
	resultsZH    = []string{"我们按时交付，下个季度的故障减少了一半。", "这个做法后来成了团队的默认流程，我也学会了更早暴露风险。"}
)

// stopWords are left out of a reply's topic.
var stopWords = map[string]bool{
	"about": true, "tell": true, "time": true, "when": true, "what": true, "your": true,
	"with": true, "have": true, "that": true, "this": true, "would": true, "could": true,
	"should": true, "there": true, "their": true, "describe": true, "please": true,
	"which": true, "where": true, "from": true, "were": true, "been": true, "does": true,
}

// defaultReply is the simulated answer of model to question: deterministic,
// about 60 words in STAR shape, clearly marked as simulated, and in Chinese
// when the question is.
func defaultReply(model, question string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(question))
	sum := h.Sum64()
	pick := func(list []string, shift uint) string { return list[(sum>>shift)%uint64(len(list))] }
	if hasHan(question) {
		return fmt.Sprintf("[simulated %s] 情境："+pick(situationsZH, 0)+"任务："+pick(tasksZH, 8)+"行动："+pick(actionsZH, 16)+"结果："+pick(resultsZH, 24),
			model, topicZH(question))
	}
	return fmt.Sprintf("[simulated %s] Situation: "+pick(situations, 0)+" Task: "+pick(tasks, 8)+" Action: "+pick(actions, 16)+" Result: "+pick(results, 24),
		model, topic(question))
}

// topic names what question is about, from its longer words.
func topic(question string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(question), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	}) {
		if utf8.RuneCountInString(w) >= 4 && !stopWords[w] {
			words = append(words, w)
		}
		if len(words) == maxTopicWords {
			break
		}
	}
	if len(words) == 0 {
		return "the question you asked"
	}
	return strings.Join(words, " ")
}

// topicZH is the first few runes of a Chinese question.
func topicZH(question string) string {
	q := []rune(strings.TrimSpace(strings.TrimRight(question, "？?。.!！")))
	if len(q) > 12 {
		q = q[:12]
	}
	return string(q)
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF) // CJK and full-width punctuation
}

// cjkPerPiece is how many CJK runes make one simulated token.
const cjkPerPiece = 2

// pieces splits text into the simulated tokens that are streamed one per
// chunk: a word with its leading spaces, or up to two CJK runes. Joining the
// pieces gives text back, and the pieces of a prefix made of whole pieces
// are that prefix's pieces, which is what continuation relies on.
func pieces(text string) []string {
	var (
		out       []string
		start     int // byte offset of the current piece
		cjkRun    int // CJK runes in the current piece
		prevSpace bool
	)
	cut := func(at int) {
		if at > start {
			out = append(out, text[start:at])
			start = at
		}
		cjkRun = 0
	}
	for i, r := range text {
		switch {
		case unicode.IsSpace(r):
			if !prevSpace {
				cut(i)
			}
			prevSpace = true
		case isCJK(r):
			if cjkRun == cjkPerPiece || (cjkRun == 0 && !prevSpace) {
				cut(i)
			}
			cjkRun++
			prevSpace = false
		default:
			if cjkRun > 0 {
				cut(i)
			}
			prevSpace = false
		}
	}
	cut(len(text))
	return out
}

// continuation is what follows prefill when the model would answer reply:
// the pieces of reply after as many pieces as prefill has. A prefill cut
// from the same reply (or another model's default reply to the same
// question) therefore continues seamlessly.
func continuation(reply, prefill string) []string {
	all := pieces(reply)
	n := len(pieces(prefill))
	if n >= len(all) {
		return nil
	}
	return all[n:]
}

// estimateTokens is a rough token count: about four bytes per token for
// Latin text, one rune per token for CJK.
func estimateTokens(text string) int {
	var n, cjk int
	for _, r := range text {
		if isCJK(r) {
			cjk++
		} else {
			n += utf8.RuneLen(r)
		}
	}
	return max(1, n/4+cjk)
}
