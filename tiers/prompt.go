package tiers

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/coach"
)

// Prompt budgets, in runes: the full prompt for L1, the short one for the
// local model (L2), whose window and speed are smaller.
const (
	transcriptRunesFull  = 2000
	transcriptRunesShort = 600
	questionRunes        = 1000
)

// BuildPrompt returns the chat messages for req: a system message with the
// candidate's role and seniority, the answer's shape for the question's
// type (req.Type, else coach.Classify's), its length (readable in 20
// seconds, in the question's language), the job and résumé context
// (contextBlock) and an answer control's instruction (styleBlock), then
// the recent transcript and the question as the user message. short
// builds the briefer variant for the local model (L2).
func BuildPrompt(req Request, short bool) []openai.ChatCompletionMessageParamUnion {
	if req.Style == StyleReview {
		return reviewPrompt(req, short)
	}
	lang := questionLang(req.Question, req.Profile.Lang)
	typ := req.Type
	if typ == "" {
		typ = coach.Classify(req.Question, lang)
	}
	return []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(systemPrompt(req.Profile, typ, shapeFor(req.Question, typ), lang, short) + contextBlock(req, short) + styleBlock(req, lang)),
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

// systemPrompt is who the model helps, the shape s of the answer to a
// question of type typ, its length in lang, then the context blocks. A new
// context block (a job description, say) is one more writeBlock call in
// contextBlocks.
func systemPrompt(p Profile, typ coach.Type, s shape, lang string, short bool) string {
	var b strings.Builder
	role := orText(p.Role, "software engineer")
	seniority := orText(p.Seniority, "mid")
	if short {
		fmt.Fprintf(&b, "You help a %s %s candidate answer a live interview question. ", seniority, role)
	} else {
		fmt.Fprintf(&b, "You are a discreet interview copilot for a %s-level %s candidate in a live interview. ", seniority, role)
		b.WriteString("Suggest what the candidate could say, in the first person. ")
	}
	if short {
		b.WriteString(s.short)
	} else {
		b.WriteString(s.full)
		b.WriteString(" No preamble, no headings, no markdown.")
	}
	b.WriteString(" ")
	b.WriteString(s.length(lang))
	if strings.TrimSpace(p.Resume) == "" && typ == coach.Project {
		writeBlock(&b, "Candidate's resume", "(none given: stay general, invent no employer, project or number)")
	}
	return b.String()
}

// writeBlock appends one titled context block to a system prompt.
func writeBlock(b *strings.Builder, title, body string) {
	b.WriteString("\n\n")
	b.WriteString(title)
	b.WriteString(":\n")
	b.WriteString(body)
}

// shape is the answer a question type asks for: the instruction of the
// full prompt (L1), of the short one (L2), and how long it may be.
type shape struct {
	full, short string
	brief       bool // one line: small talk, logistics, a remark
}

// length is the answer's length rule in lang, with the answer language.
func (s shape) length(lang string) string {
	switch {
	case s.brief && lang == "zh":
		return "One or two short sentences, at most 40 Chinese characters. Answer in Chinese."
	case s.brief:
		return "One or two short sentences, at most 25 words. Answer in English."
	case lang == "zh":
		return "Readable aloud in 20 seconds: at most 200 Chinese characters. Answer in Chinese."
	}
	return "Readable aloud in 20 seconds: at most 120 words. Answer in English."
}

// shapes holds the answer shape of every question type; shapeFor falls
// back to the behavioural one.
var shapes = map[coach.Type]shape{
	coach.Behavioural: {
		full: "This is a behavioural question: answer as a short story in the candidate's own voice, shaped as STAR " +
			"(Situation, Task, Action, Result): concrete, what the candidate did themselves, one measurable result, " +
			"grounded in the resume when it fits.",
		short: "Give a short STAR answer (Situation, Task, Action, Result) in the first person.",
	},
	coach.Concept: {
		full: "This is a technical concept question: define it in one sentence, say how it works (the two or three key " +
			"mechanics), give one trade-off (when it is the wrong choice) and one concrete example. Knowledge, not a story.",
		short: "Define the concept in one sentence, say how it works, one trade-off, one example.",
	},
	coach.Design: {
		full: "This is a system design question: give a spoken outline, one short line each, in this order: " +
			"requirements (with one clarifying assumption on scale), API, data model and storage, the high-level design, " +
			"the hard part (the bottleneck and how to handle it), and the trade-offs. Not a story.",
		short: "Give a spoken design outline: requirements, API, data, high level, the hard part, trade-offs.",
	},
	coach.Coding: {
		full: "This is a coding question: say the approach (the simple one first, then the better one), its time and " +
			"space complexity, and the edge cases to test. Code is allowed only as a few plain lines after that, " +
			"no code fences.",
		short: "Say the approach, its time and space complexity, and the edge cases.",
	},
	coach.Project: {
		full: "This is a follow-up on the candidate's own project or words: answer from the resume below as the " +
			"candidate, naming the project and their own part; say what was decided, why, the alternative rejected " +
			"and the result. Invent no employer, project or number that the resume does not give.",
		short: "Answer as the candidate about their own project, from the resume below; invent nothing.",
	},
	coach.Smalltalk: {
		full:  "This is small talk or a check-in (\"can you hear me?\"): give one short, natural, friendly line to say, not a story.",
		short: "Small talk or a check-in: one short natural line.",
		brief: true,
	},
	coach.Logistics: {
		full: "This is a logistics question (process, pay, start date, location): a brief, polite answer, or one " +
			"clarifying question when the answer depends on details; commit to no number or date the candidate did not give.",
		short: "Logistics: one brief polite answer or one clarifying question.",
		brief: true,
	},
	coach.Remark: {
		full:  "The interviewer stated something and asked nothing: acknowledge it briefly, connect it to one thing the candidate did, and ask one short follow-up question.",
		short: "The interviewer made a remark: acknowledge it and ask one short follow-up question.",
		brief: true,
	},
}

// frameShapes are the shapes of the questions whose coach card uses a
// frame of its own (coach.Frame): among concept questions a comparison,
// troubleshooting, pros and cons; among behavioural ones a failure
// (CARL), a self-introduction, why leaving, why this job, strengths, a
// career plan. Any other question takes its type's shape.
var frameShapes = map[string]shape{
	"carl": {
		full: "This asks about a failure, a mistake or a weakness: answer as a short story in the candidate's own voice, " +
			"shaped as CARL (Context, Action, Result, Learning): own their part, give the real cost, and spend the most " +
			"on what they learned and do differently now.",
		short: "Give a short CARL answer (Context, Action, Result, Learning) in the first person; most on the learning.",
	},
	"intro": {
		full: "This asks the candidate to introduce themselves: in the first person, now (role, team, what they own), " +
			"before (the one or two steps that led here, with one result), next (why this role); from the resume, " +
			"about a minute spoken, not a STAR story.",
		short: "A short self-introduction in the first person from the resume: now, before, next.",
	},
	"leaving": {
		full: "This asks why the candidate is leaving: lead with what they are moving towards, give one or two concrete " +
			"reasons with no complaint about people, say what they want next and why this role offers it. First person, " +
			"not a STAR story.",
		short: "Why leaving: what you are moving towards, one or two reasons without complaints, why this role.",
	},
	"motivation": {
		full: "This asks why the candidate wants this job: a one-sentence headline, two or three concrete reasons (the " +
			"product, the team, the problems), what the candidate brings that the role needs, and what they would do " +
			"first. First person, not a STAR story.",
		short: "Why this job: a headline, two or three concrete reasons, the fit, what you would do first.",
	},
	"strengths": {
		full: "This asks about the candidate's strengths: name one strength in a few words, prove it with one short " +
			"example and its result, say how it shows day to day, and tie it to what the role needs. First person; a " +
			"short example, not a long STAR story.",
		short: "Strengths: name one, prove it with one short example, tie it to the role.",
	},
	"plan": {
		full: "This asks about the candidate's career plan: the direction in one sentence, what to master and own in the " +
			"next one or two years, where to go deep or lead in three to five, and how this role starts that path. " +
			"First person, not a STAR story.",
		short: "Career plan: the direction, the next one or two years, three to five years, and this role.",
	},
	"compare": {
		full: "This is a technical comparison: define each side in one sentence, give the two or three differences that " +
			"matter (how each works, what it guarantees, what it costs), say when to pick which, and one concrete example. " +
			"Knowledge, not a story.",
		short: "Define both in one sentence each, the key differences, when to pick which, one example.",
	},
	"troubleshoot": {
		full: "This is a troubleshooting question: say how the candidate would confirm the symptom and its scope, narrow " +
			"it down (metrics, logs, traces, recent changes first), find the root cause (a hypothesis and how to test it), " +
			"then fix it, verify with the same metric and prevent a repeat. Concrete steps and tools, not a story.",
		short: "Troubleshooting: confirm the symptom, narrow it down, find the root cause, fix it and prevent a repeat.",
	},
	"tradeoffs": {
		full: "This is a question about trade-offs: define it in one sentence, give two or three advantages and two or " +
			"three costs or limits, each with its reason, and say when to choose it and what to pick otherwise. " +
			"Knowledge, not a story.",
		short: "Define it, two or three pros, two or three cons, and when to choose it.",
	},
}

// shapeFor is the shape of the answer to question, of type t: its coach
// frame's when frameShapes has it, else its type's, else the behavioural
// one.
func shapeFor(question string, t coach.Type) shape {
	if s, ok := frameShapes[coach.Frame(question, t)]; ok {
		return s
	}
	if s, ok := shapes[t]; ok {
		return s
	}
	return shapes[coach.Behavioural]
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
