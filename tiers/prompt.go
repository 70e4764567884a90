package tiers

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
)

// Prompt budgets, in runes: the full prompt for L1, the short one for the
// local model (L2), whose window and speed are smaller.
const (
	transcriptRunesFull  = 2000
	transcriptRunesShort = 600
	questionRunes        = 1000
)

// BuildPrompt returns the chat messages for req: a system message with the
// candidate's role and seniority, the answer's shape, the job and résumé
// context (contextBlock) and an answer control's instruction (styleBlock)
// (a concise STAR-shaped suggestion, readable in 20 seconds, in the
// question's language), then the recent transcript and the question as the
// user message. short builds the briefer variant for the local model.
func BuildPrompt(req Request, short bool) []openai.ChatCompletionMessageParamUnion {
	if req.Style == StyleReview {
		return reviewPrompt(req, short)
	}
	lang := questionLang(req.Question, req.Profile.Lang)
	return []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(systemPrompt(req.Profile, lang, short) + contextBlock(req, short) + styleBlock(req, lang)),
		openai.UserMessage(userPrompt(req, lang, short)),
	}
}

// questionLang is "zh" when the question contains Han characters, else
// "en" when it contains Latin letters, else the profile's language.
func questionLang(question, profileLang string) string {
	latin := false
	for _, r := range question {
		if unicode.Is(unicode.Han, r) {
			return "zh"
		}
		if r < utf8.RuneSelf && unicode.IsLetter(r) {
			latin = true
		}
	}
	if latin {
		return "en"
	}
	if profileLang == "zh" {
		return "zh"
	}
	return "en"
}

func systemPrompt(p Profile, lang string, short bool) string {
	var b strings.Builder
	role := orText(p.Role, "software engineer")
	seniority := orText(p.Seniority, "mid")
	if short {
		fmt.Fprintf(&b, "You help a %s %s candidate answer a live interview question. ", seniority, role)
		b.WriteString("Give a short STAR answer (Situation, Task, Action, Result) in the first person, ")
	} else {
		fmt.Fprintf(&b, "You are a discreet interview copilot for a %s-level %s candidate in a live interview. ", seniority, role)
		b.WriteString("Suggest what the candidate could say: a concise answer shaped as STAR (Situation, Task, Action, Result), ")
		b.WriteString("in the first person, concrete, with one measurable result, grounded in the resume when it fits. ")
		b.WriteString("For a technical question, lead with the key point and one example instead of STAR. ")
		b.WriteString("No preamble, no headings, no markdown; ")
	}
	if lang == "zh" {
		b.WriteString("readable aloud in 20 seconds: at most 200 Chinese characters. Answer in Chinese.")
	} else {
		b.WriteString("readable aloud in 20 seconds: at most 120 words. Answer in English.")
	}
	return b.String()
}

func userPrompt(req Request, lang string, short bool) string {
	limit := transcriptRunesFull
	if short {
		limit = transcriptRunesShort
	}
	var b strings.Builder
	if t := clip(strings.TrimSpace(req.Transcript), limit, true); t != "" {
		b.WriteString("Recent conversation (oldest first):\n")
		b.WriteString(t)
		b.WriteString("\n\n")
	}
	if lang == "zh" {
		b.WriteString("面试官的问题：")
	} else {
		b.WriteString("Interviewer's question: ")
	}
	b.WriteString(clip(strings.TrimSpace(req.Question), questionRunes, false))
	return b.String()
}

// clip keeps at most n runes of s: the tail when keepTail (recent
// transcript matters most), else the head.
func clip(s string, n int, keepTail bool) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if keepTail {
		return "…" + string(r[len(r)-n:])
	}
	return string(r[:n]) + "…"
}

func orText(s, def string) string {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return def
}
