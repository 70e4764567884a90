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
// For a question, CountdownS is the think time and Tips[0] is the tip to
// show when the countdown ends ("repeat the last words of the question to
// buy time"). For a statement, CountdownS is 0 and Tips are follow-up
// questions the candidate can ask. A Card owns its slices: changing them
// does not change later cards.
type Card struct {
	Kind       Kind      `json:"kind"`
	CountdownS int       `json:"countdown_s"`
	Framework  Framework `json:"framework"`
	Tips       []string  `json:"tips"`
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

// CardFor returns the coach card for text, worded in lang ("zh" or "en";
// anything else is en). It never fails.
func CardFor(text, lang string) Card { return Default().Card(text, lang) }

// Card returns the coach card for text, worded in lang: a "zh…" tag (zh,
// zh-CN, zh-TW; any case) means zh, anything else en. Detection does not
// depend on lang.
func (s *Script) Card(text, lang string) Card {
	t := s.text[langKey(lang)]
	if !s.IsQuestion(text) {
		return Card{
			Kind:      Statement,
			Framework: cloneFramework(t.Frameworks[statementFramework]),
			Tips:      slices.Clone(t.StatementTips),
		}
	}
	key, _ := s.frameworkFor(text)
	return Card{
		Kind:       Question,
		CountdownS: s.countdownS,
		Framework:  cloneFramework(t.Frameworks[key]),
		Tips:       slices.Clone(t.QuestionTips),
	}
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
