package recall

import (
	"slices"
	"strings"
)

// asksCandidate reports whether text reads as a question or a request: a
// question mark, an interrogative ("why", "为什么", "吗"), an auxiliary
// before "you" ("have you"), or a sentence that opens with a request verb
// ("tell me", "describe", "请", "讲讲").
func asksCandidate(text string) bool {
	if isQuestion(text) {
		return true
	}
	for _, sentence := range splitSentences(normalizeText(text)) {
		for i, seg := range splitSegments(sentence) {
			if seg.han {
				if askZH(seg.text, i == 0) {
					return true
				}
			} else if askEN(seg.words, i == 0) {
				return true
			}
		}
	}
	return false
}

// askEN reports whether English words ask something: an interrogative or
// an auxiliary before "you" among the first askWindow words (after leading
// fillers), or a request verb first. Later words do not count: "that's
// what our platform runs on" is a remark. opening says whether the words
// open their sentence; a later run never asks.
func askEN(words []string, opening bool) bool {
	if !opening {
		return false
	}
	for len(words) > 0 && leadFillersEN[words[0]] {
		words = words[1:]
	}
	for i, w := range words[:min(len(words), askWindow)] {
		if interrogativesEN[w] {
			return true
		}
		if i+1 < len(words) && words[i+1] == "you" && auxiliariesEN[w] {
			return true
		}
	}
	return len(words) > 0 && requestVerbsEN[words[0]]
}

const askWindow = 3 // words at the start of a sentence that may ask

// askZH reports whether a Chinese run asks something: an interrogative
// ("为什么", "吗"), a request that opens the sentence ("请", "讲"), or,
// unless the speaker talks about themselves ("我先介绍一下我们团队"), a
// request word anywhere ("讲讲", "一下") or a closing "吧".
func askZH(run string, opening bool) bool {
	if containsAnyString(run, interrogativesZH) {
		return true
	}
	if opening && hasAnyPrefix(run, requestOpenersZH) {
		return true
	}
	if strings.HasPrefix(run, "我") {
		return false
	}
	return containsAnyString(run, requestWordsZH) || strings.HasSuffix(run, "吧")
}

// Question and request markers, read-only.
var (
	interrogativesEN = setOf(strings.Fields("what why how when where who whom whose which"))
	auxiliariesEN    = setOf(strings.Fields("do did does have has are were is was can could would will should"))
	requestVerbsEN   = setOf(strings.Fields("tell describe walk talk explain give share name introduce please list take pick help convince paint imagine picture suppose say think show run go start summarize sum rate compare teach"))
	requestAuxEN     = setOf(strings.Fields("can could"))
	leadFillersEN    = setOf(strings.Fields("ok okay so um uh umm er erm well and alright right great thanks thank cool now then also but anyway oh yeah"))
	interrogativesZH = strings.Fields("吗 呢 什么 怎么 为什么 为啥 哪 如何 是否 有没有 有什么 能不能 会不会 是不是 多少 多久 啥")
	requestOpenersZH = strings.Fields("请 讲 说 谈 聊 介绍 描述 举 分享 列举 给我们 跟我们 和我们 挑")
	requestWordsZH   = strings.Fields("讲讲 说说 聊聊 谈谈 列举 举例 举个 描述 分享 说点 讲一 说一 谈一 介绍 一下")
)

// asksKnowledge reports whether text is a technical knowledge question
// ("What is a B-tree?", "How does TCP work?", "Explain X", "How would you
// design a rate limiter?", "什么是死锁？") rather than a question about
// the candidate. Template recall answers questions about the candidate's
// own experience, motivation and plans; a knowledge question that shares
// a word with one of them ("dependency injection", "dependencies") must not
// be answered with it. A design or implementation exercise counts even
// when it says "you"; any other cue only when the text never addresses the
// candidate (you, your, 你, 您, 自己).
func asksKnowledge(text string) bool {
	var words []string
	var han strings.Builder
	for _, seg := range splitSegments(normalizeText(text)) {
		if seg.han {
			han.WriteString(seg.text)
			han.WriteRune(' ')
		} else {
			words = append(words, seg.words...)
			words = append(words, "")
		}
	}
	zh := han.String()
	if containsSeq(words, exerciseCuesEN) || containsAnyString(zh, exerciseCuesZH) {
		return true
	}
	if addressesEN(words) || containsAnyString(zh, secondPersonZH) {
		return false
	}
	return containsSeq(words, knowledgeCuesEN) || containsAnyString(zh, knowledgeCuesZH) || hasAnyPrefix(zh, knowledgeOpenZH)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// addressesEN reports whether English words are about the candidate:
// "your", "yourself", or a "you" other than the subject of a request that
// opens the sentence ("Can you explain ...?").
func addressesEN(words []string) bool {
	for i, w := range words {
		switch {
		case w == "your" || w == "yours" || w == "yourself":
			return true
		case w == "you":
			request := i == 1 && requestAuxEN[words[0]] && i+1 < len(words) && requestVerbsEN[words[i+1]]
			if !request {
				return true
			}
		}
	}
	return false
}

// containsSeq reports whether words contain one of the word sequences.
func containsSeq(words []string, seqs [][]string) bool {
	for i := range words {
		for _, seq := range seqs {
			if i+len(seq) <= len(words) && slices.Equal(words[i:i+len(seq)], seq) {
				return true
			}
		}
	}
	return false
}

func containsAnyString(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func wordSeqs(phrases string) [][]string {
	var out [][]string
	for p := range strings.SplitSeq(phrases, "|") {
		out = append(out, strings.Fields(p))
	}
	return out
}

// Knowledge-question cues, read-only. English cues are matched on words
// with contractions expanded ("what's" → "what").
var (
	exerciseCuesEN  = wordSeqs("would you design a|would you design an|would you implement a|would you implement an|would you build a|would you write a|design a|implement a|write a function|write a program")
	exerciseCuesZH  = strings.Fields("设计一个 实现一个 写一个 写一段")
	knowledgeCuesEN = wordSeqs("what is|what the difference|difference between|differences between|how does|how is|how are|explain|define|complexity|why does|why is the|when should")
	knowledgeCuesZH = strings.Fields("原理 区别 机制 底层 复杂度 算法 实现 如何设计 如何保证 怎么保证 讲一下 说一下 解释一下什么")
	knowledgeOpenZH = strings.Fields("什么是")
	secondPersonZH  = strings.Fields("你 您 自己")
)
