package coach

import (
	"encoding/json"
	"strings"
	"sync"
)

// lexiconFile is the classifier as JSON, for the browser's offline coach
// (web/static/coach.js) to type questions as Classify does: the lexicon
// (English phrases as words joined by single spaces, Chinese entries as
// substrings), the naive Bayes model's training counts and untermedLead.
type lexiconFile struct {
	Version      int                 `json:"version"`
	EN           map[string][]string `json:"en"`
	ZH           map[string][]string `json:"zh"`
	Model        *bayesCounts        `json:"model,omitempty"` // none when the training set does not decode
	UntermedLead float64             `json:"untermed_lead"`
}

// lexiconVersion changes whenever the rules or the model that read the
// file change, so a browser never applies a stale copy with new code.
const lexiconVersion = 6

// lexiconJSON is built once from the tables of classify.go.
var lexiconJSON = sync.OnceValue(func() []byte {
	en := func(ps phraseList) []string {
		out := make([]string, len(ps.all))
		for i, p := range ps.all {
			out[i] = strings.Join(p, " ")
		}
		return out
	}
	f := lexiconFile{
		Version: lexiconVersion,
		EN: map[string][]string{
			"smalltalk": en(smalltalkEN), "logistics": en(logisticsEN), "coding": en(codingEN), "design": en(designEN),
			"project": en(projectEN), "project_tech": en(projectTechEN), "concept": en(conceptEN),
			"concept_first": en(conceptFirstEN), "concept_weak": en(conceptWeakEN), "tech": en(techEN),
			"request": en(requestEN), "address": en(addressEN), "self": en(selfEN), "topic_ack": en(topicAckEN),
			"topic_cue": en(topicCueEN), "behavioural": en(behaviouralEN),
		},
		ZH: map[string][]string{
			"smalltalk": smalltalkZH, "logistics": logisticsZH, "coding": codingZH, "design": designZH,
			"project": projectZH, "project_tech": projectTechZH, "concept": conceptZH,
			"concept_first": conceptFirstZH, "concept_weak": conceptWeakZH, "tech": techZH,
			"request": requestZH, "address": addressZH, "self": selfZH, "topic_ack": topicAckZH,
			"topic_cue": topicCueZH, "behavioural": behaviouralZH,
		},
		Model:        counted(),
		UntermedLead: untermedLead,
	}
	b, err := json.Marshal(f)
	if err != nil {
		panic("coach: lexicon: " + err.Error()) // string slices always marshal
	}
	return b
})

// LexiconJSON returns the type classifier (see lexiconFile), served to
// browsers at /coach/types.json so that their offline coach types
// questions as Classify does. The caller may keep the slice.
func LexiconJSON() []byte { return append([]byte(nil), lexiconJSON()...) }
