package coach

import (
	"bytes"
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// Kind says whether an utterance asks the candidate something.
type Kind string

// The kinds of utterance.
const (
	Question  Kind = "question"
	Statement Kind = "statement"
)

// Framework is an answer frame: a short name and its steps, each phrased as
// a coaching prompt in the card's language.
type Framework struct {
	Name  string   `json:"name"`
	Steps []string `json:"steps"`
}

// Card is the coach content for one utterance; it marshals to the `coach`
// message body fields of docs/protocol.md (the session adds `type`, `id`, `seq`).
//
// For a question, CountdownS is the think time of its type (0 for small
// talk: no countdown), Framework the frame of its type (STAR or CARL for a
// behavioural question, a design scaffold for a design question, a line to
// say for a check-in …) and Tips[0] the tip to show when the countdown
// ends. For a statement, CountdownS is 0 and Tips are follow-up questions
// the candidate can ask. QuestionType is the utterance's type (Classify's,
// "statement" for a statement). A Card owns its slices: changing them does
// not change later cards.
type Card struct {
	Kind         Kind      `json:"kind"`
	CountdownS   int       `json:"countdown_s"`
	Framework    Framework `json:"framework"`
	Tips         []string  `json:"tips"`
	QuestionType Type      `json:"question_type"`
}

//go:embed scripts.json
var scriptsJSON []byte

// defaultScript parses the embedded scripts once, on first use. The file is
// checked by the package tests, so a parse failure is a build defect.
var defaultScript = sync.OnceValue(func() *Script {
	s, err := Parse(scriptsJSON)
	if err != nil {
		panic("coach: embedded scripts.json: " + err.Error())
	}
	return s
})

// Default returns the Script parsed from the embedded scripts.json. It is
// parsed on the first call and shared; a Script is safe for concurrent use.
func Default() *Script { return defaultScript() }

// ScriptsJSON returns a copy of the embedded scripts file, served to
// browsers at /coach/scripts.json so they can coach without the server.
func ScriptsJSON() []byte { return bytes.Clone(scriptsJSON) }

// IsQuestion reports whether text, in Chinese, English or both, asks the
// candidate something, by the rules of the embedded scripts.
func IsQuestion(text string) bool { return Default().IsQuestion(text) }

// Asks reports whether text asks the candidate something: IsQuestion, or
// a request IsQuestion misses ("讲一个你失败的经历"). A text that does not ask
// gets the statement card, and no template (tiers: L3).
func Asks(text string) bool { return IsQuestion(text) || newCues(text).question }

// CardFor returns the coach card for text, worded in lang ("zh" or "en";
// anything else is en). It never fails.
func CardFor(text, lang string) Card { return Default().Card(text, lang) }

// Frame returns the key of the answer frame that the coach card of text,
// a question of type typ, uses: a frame the scripts' classify rules pick
// for that type ("compare" for "X vs Y", "troubleshoot" for "how would you
// debug…", "tradeoffs" for "pros and cons", …), else the type's own. The
// prompts shape a model's answer by it, so that every level answers in
// the same frame.
func Frame(text string, typ Type) string {
	key, _ := Default().frameworkFor(text, typ)
	return key
}

// CardOf is CardFor for a question whose type the caller already has
// (Classify's, computed once per question).
func CardOf(text string, typ Type, lang string) Card { return Default().CardOf(text, typ, lang) }

// Card returns the coach card for text, worded in lang: a "zh…" tag (zh,
// zh-CN, zh-TW; any case) means zh, anything else en. Detection does not
// depend on lang. The type is Classify's.
func (s *Script) Card(text, lang string) Card { return s.CardOf(text, Classify(text, lang), lang) }

// CardOf returns the coach card for text of type typ, worded in lang.
// Text is a question when IsQuestion says so or it opens a request that
// IsQuestion misses ("讲一个你失败的经历"); a question typed as a statement,
// or of a type the scripts do not know, is coached as a behavioural one.
func (s *Script) CardOf(text string, typ Type, lang string) Card {
	t := s.text[langKey(lang)]
	if !s.IsQuestion(text) && !newCues(text).question { // Asks, by s's rules
		return Card{
			Kind:         Statement,
			Framework:    cloneFramework(t.Frameworks[statementFramework]),
			Tips:         slices.Clone(t.StatementTips),
			QuestionType: Remark,
		}
	}
	countdown := s.countdownS
	if e, ok := s.types[typ]; ok {
		countdown = e.CountdownS
	} else {
		typ = Behavioural
	}
	key, _ := s.frameworkFor(text, typ)
	return Card{
		Kind:         Question,
		CountdownS:   countdown,
		Framework:    cloneFramework(t.Frameworks[key]),
		Tips:         questionTips(t, typ, countdown),
		QuestionType: typ,
	}
}

// questionTips are the tips of a question of type typ: the countdown's tip
// (question_tips[0]) first, then the type's, then the other general ones;
// with no countdown (small talk) the type's alone, when it has some.
func questionTips(t langText, typ Type, countdown int) []string {
	if countdown == 0 && len(t.TypeTips[typ]) > 0 {
		return slices.Clone(t.TypeTips[typ])
	}
	out := append([]string{t.QuestionTips[0]}, t.TypeTips[typ]...)
	return append(out, t.QuestionTips[1:]...)
}

// langKey maps a caller's language tag to a key of the scripts' text.
func langKey(lang string) string {
	if strings.HasPrefix(strings.ToLower(lang), "zh") {
		return "zh"
	}
	return "en"
}

func cloneFramework(f Framework) Framework {
	return Framework{Name: f.Name, Steps: slices.Clone(f.Steps)}
}
