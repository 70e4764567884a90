package sim

import (
	"hash/fnv"
	"strings"
)

// SimulatedMark starts every transcript the Server makes up (Options.Transcripts
// empty): no speech was recognized, and a page can say so. It sits inside the
// text, so the wire format stays whisper.cpp's and OpenAI's exactly.
const SimulatedMark = "[simulated]"

// pickBytes is how much of a clip's audio chooses its line: the first half
// second of 16 kHz PCM16. Every re-decode of one utterance (its growing
// partials, then its final) starts with the same audio, so it gets the same
// line.
const pickBytes = bytesPerSecond16 / 2

// interviewerLines are what the simulated recognizer "hears", by language:
// questions an interviewer plausibly asks.
var interviewerLines = map[string][]string{
	"en": {
		"Tell me about a time you had to deal with a difficult stakeholder.",
		"Walk me through a project you are proud of and your part in it.",
		"How would you design a rate limiter for a public API?",
		"What is the biggest mistake you made at work, and what did you learn?",
		"Why do you want to leave your current job?",
		"How do you handle a tight deadline when the scope keeps growing?",
		"Tell me about yourself.",
		"Describe a time you disagreed with your manager.",
		"How would you find the cause of a slow database query?",
		"What would your last team say is your greatest weakness?",
		"Tell me about a time you helped a struggling teammate.",
		"Where do you see yourself in five years?",
	},
	"zh": {
		"请先简单介绍一下你自己。",
		"讲一个你和同事意见不合的例子，你是怎么处理的？",
		"你最有成就感的项目是什么？你在里面负责什么？",
		"如果让你设计一个限流系统，你会怎么做？",
		"你工作中犯过最大的错误是什么？学到了什么？",
		"你为什么想离开现在的公司？",
		"在工期很紧、需求又不断增加的时候，你怎么安排优先级？",
		"你觉得自己最大的缺点是什么？",
		"线上数据库查询变慢了，你会怎么排查？",
		"你未来三到五年的职业规划是什么？",
	},
}

// simulatedTranscript is the made-up transcript of clip (a WAV, or any
// upload) in lang ("zh…" for Chinese, else English): a line chosen by a
// hash of the clip's first audio, marked with SimulatedMark. The same
// audio always gets the same line; different audio spreads over them all.
func simulatedTranscript(clip []byte, lang string) string {
	audio := clip
	if info, err := parseWAV(clip); err == nil {
		audio = info.data
	}
	audio = audio[:min(len(audio), pickBytes)]
	lines := interviewerLines["en"]
	if strings.HasPrefix(strings.ToLower(lang), "zh") {
		lines = interviewerLines["zh"]
	}
	h := fnv.New64a()
	_, _ = h.Write(audio)
	return SimulatedMark + " " + lines[h.Sum64()%uint64(len(lines))]
}
