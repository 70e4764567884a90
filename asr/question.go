package asr

import (
	"strings"
	"unicode"
)

// Cues that make an utterance a question. Interviewers also ask with
// imperatives ("tell me about ...", "请介绍一下 ..."), so those count too.
var (
	enQuestionStarts = []string{
		"what", "why", "how", "when", "where", "who", "whom", "whose", "which",
		"can you", "could you", "would you", "will you", "do you", "did you", "does", "have you",
		"are you", "is there", "is it", "were you", "should", "tell me", "tell us", "describe",
		"walk me through", "walk us through", "explain", "give me an example", "share an example",
		"talk about", "talk me through",
	}
	zhQuestionWords = []string{
		"什么", "为什么", "怎么", "怎样", "如何", "哪", "多少", "几", "是否", "能不能", "可不可以",
		"有没有", "是不是", "会不会", "请介绍", "介绍一下", "请描述", "描述一下", "请谈谈", "谈谈",
		"说说", "讲讲", "举个例子", "举例", "分享一下",
	}
	zhQuestionEnds = []string{"吗", "呢", "么", "吧"}
)

// IsQuestion reports whether a final caption looks like a question to
// answer: a question mark, a question word or an interviewer's imperative
// ("tell me about...", "请介绍一下..."). lang is "zh" or "en"; anything else
// checks both. Meant for finals; short fillers ("okay", "嗯") are not.
func IsQuestion(text, lang string) bool {
	t := strings.TrimSpace(text)
	if t == "" {
		return false
	}
	if strings.ContainsAny(t, "?？") {
		return true
	}
	if lang != "en" && zhQuestion(t) {
		return true
	}
	return lang != "zh" && enQuestion(t)
}

func zhQuestion(t string) bool {
	t = strings.TrimRightFunc(t, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	for _, end := range zhQuestionEnds {
		if strings.HasSuffix(t, end) {
			return true
		}
	}
	for _, w := range zhQuestionWords {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

func enQuestion(t string) bool {
	words := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	})
	// Skip fillers the interviewer opens with: "so", "okay, so", "and".
	for len(words) > 0 && isFiller(words[0]) {
		words = words[1:]
	}
	head := strings.Join(words[:min(len(words), 5)], " ") + " "
	for _, s := range enQuestionStarts {
		if strings.HasPrefix(head, s+" ") {
			return true
		}
	}
	return false
}

func isFiller(w string) bool {
	switch w {
	case "so", "okay", "ok", "and", "well", "alright", "right", "now", "um", "uh", "great", "next", "then":
		return true
	}
	return false
}
