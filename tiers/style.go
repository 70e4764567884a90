package tiers

import (
	"strings"

	"github.com/openai/openai-go/v3"
)

// Answer styles of Request.Style: the candidate's answer controls and the
// post-interview review. "" is a plain answer.
const (
	StyleRegenerate = "regenerate" // another answer to the same question
	StyleShorter    = "shorter"    // the current answer, shorter; the outline at L3
	StyleDeeper     = "deeper"     // the current answer, with more depth; the full template at L3
	StyleReview     = "review"     // a summary of the interview so far; models only (L1, L2)
)

// previousRunes bounds the earlier answer quoted back to the model.
const previousRunes = 1200

// styleBlock is what the system prompt adds for an answer control: how
// this answer differs from Previous, the answer shown before it.
func styleBlock(req Request, lang string) string {
	var b strings.Builder
	switch req.Style {
	case StyleShorter:
		b.WriteString("\n\nThe candidate asked for a shorter version of the answer below: keep its key point and one result, in at most 2 sentences")
		if lang == "zh" {
			b.WriteString(" (at most 60 Chinese characters)")
		} else {
			b.WriteString(" (at most 40 words)")
		}
		b.WriteString(". This replaces the length limit above.")
	case StyleDeeper:
		b.WriteString("\n\nThe candidate asked to go deeper on the answer below: keep its story, and add the reasoning, the trade-offs considered and one more concrete detail")
		if lang == "zh" {
			b.WriteString(", at most 350 Chinese characters")
		} else {
			b.WriteString(", at most 220 words")
		}
		b.WriteString(". This replaces the length limit above.")
	case StyleRegenerate:
		b.WriteString("\n\nThe candidate asked for a different answer: take another angle or another example than the answer below.")
	default:
		return ""
	}
	if p := clip(strings.TrimSpace(req.Previous), previousRunes, false); p != "" {
		b.WriteString("\n\nThe answer shown before:\n")
		b.WriteString(p)
	}
	return b.String()
}

// reviewPrompt is the prompt of a post-interview review: req.Question
// holds the interview's record as the session wrote it.
func reviewPrompt(req Request, short bool) []openai.ChatCompletionMessageParamUnion {
	lang := req.Profile.Lang
	var b strings.Builder
	b.WriteString("You review an interview that just happened, for the candidate. From the record below, write a short review in plain text, ")
	b.WriteString("no markdown headings: 1) the questions that were asked, one short line each; 2) where the suggested or given answers were thin ")
	b.WriteString("(no measurable result, vague, cut short, or only a template); 3) three follow-up questions to prepare. ")
	if lang == "zh" {
		b.WriteString("At most 250 Chinese characters. Answer in Chinese.")
	} else {
		b.WriteString("At most 160 words. Answer in English.")
	}
	limit := 6000
	if short {
		limit = 2000
	}
	return []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(b.String()),
		openai.UserMessage("Interview record:\n" + clip(strings.TrimSpace(req.Question), limit, true)),
	}
}
