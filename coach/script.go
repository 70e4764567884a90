package coach

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// scriptsVersion is the only scripts.json version this package reads.
const scriptsVersion = 1

// statementFramework is the frameworks key used for statements; it is never
// chosen for a question.
const statementFramework = "statement"

// Script is a parsed, checked scripts file: the rules that tell a question
// from a statement, pick a framework, and the wording of every card. Build
// one with Parse (or use Default); it is read-only and safe for concurrent
// use.
//
// # scripts.json
//
// One JSON object; every field is required and every list non-empty, and
// unknown fields are rejected:
//
//	version            1
//	countdown_s        think time of a question card, seconds (> 0)
//	default_framework  frameworks key for a behavioural question no classify
//	                   rule matches
//	types              {type: {framework, countdown_s}} for every question
//	                   type but behavioural and statement (concept, design,
//	                   coding, project, smalltalk, logistics): the framework
//	                   of a question of that type no classify rule of its
//	                   type matches, and its think time (0: no countdown)
//	detect
//	  question_marks   string; each character marks a question ("?？")
//	  sentence_breaks  string; each character ends a sentence
//	  clause_breaks    string; each character ends a clause
//	  en               English phrases, lower case words of [a-z0-9'] joined
//	                   by single spaces:
//	    fillers        dropped from the start of a clause ("uh", "so", "okay")
//	    wh             question words ("why", "what's")
//	    aux            auxiliaries that open a question ("do", "isn't")
//	    subjects       words that follow an opening auxiliary ("you", "there")
//	    starts         requests that open a question ("tell me", "describe")
//	    not_starts     clause openings that are not questions ("what we")
//	    contains       phrases that make a question anywhere ("can you")
//	    near_subjects  subjects an aux may open a question with a few words
//	                   after a wh word or after a restart ("you", "there")
//	    restarts       words after which a speaker starts a question afresh
//	                   mid-clause ("um", "so": "… so far um is there …")
//	  zh               Chinese strings, matched as substrings:
//	    ignore         cut out before markers are looked for ("什么都", "哪怕")
//	    markers        make a question anywhere ("为什么", "讲讲")
//	    final_particles make a question at the end of a sentence ("吗", "呢")
//	    alternatives   make a question after an alternative_opener earlier
//	                   in the sentence ("是本地缓存还是 Redis")
//	    alternative_openers ("是", "喜欢": "你更喜欢一个人干，还是团队一起")
//	    a_not_a        make a question between a character and its repeat
//	                   ("冷不冷", "吃没吃")
//	classify           ordered list of {type, framework, en, zh}: the first
//	                   rule of the question's type (type absent: behavioural)
//	                   with an en phrase (whole words) or zh substring in the
//	                   question picks framework
//	text               {"en": …, "zh": …}, each:
//	  frameworks       {key: {name, steps}}; holds default_framework, every
//	                   classify framework and "statement"
//	  question_tips    tips for a question; the first is shown when the
//	                   countdown ends
//	  type_tips        optional {type: tips}: a question of that type gets
//	                   these tips first, then question_tips
//	  statement_tips   follow-ups the candidate can ask after a statement
//
// # Rules
//
// The text is lower-cased and ’ ‘ become '. It is a question if it holds a
// question mark. Otherwise it is cut into sentences and a sentence is a
// question if, after every zh.ignore string is replaced by a space, it holds
// a zh.marker or ends (trailing non-letters aside) with a zh.final_particle.
// Otherwise each sentence is cut into clauses and each clause into words
// (runs of a-z, 0-9 and ', with ' trimmed from both ends); leading fillers
// are dropped, the longest first, repeatedly. The clause is a question if
//   - it does not open with a not_starts phrase and opens with a wh word or
//     a starts phrase; or
//   - it opens with an aux followed by a subject, or has anywhere a wh word
//     followed by an aux and a subject ("…, how did you …"), or by up to
//     whGap other words, an aux and a near_subject ("what role do you …",
//     "how good are you …"); or
//   - it has a restart followed by an aux and a near_subject ("… so far um
//     is there anything …"); or
//   - it holds a contains phrase.
//
// Everything else is a statement. A question's type comes from Classify
// (or the caller, see CardOf); its framework from the classify rules of
// that type, else types[type].framework (default_framework for a
// behavioural one). Wording comes from text[lang].
type Script struct {
	countdownS     int
	defaultKey     string
	types          map[Type]typeEntry
	questionMarks  string
	sentenceBreaks string
	clauseBreaks   string
	en             enMatcher
	zh             zhRules
	classify       []classifier
	text           map[string]langText
}

// scriptFile mirrors scripts.json.
type scriptFile struct {
	Version          int                 `json:"version"`
	CountdownS       int                 `json:"countdown_s"`
	DefaultFramework string              `json:"default_framework"`
	Types            map[Type]typeEntry  `json:"types"`
	Detect           detectRules         `json:"detect"`
	Classify         []classifyRule      `json:"classify"`
	Text             map[string]langText `json:"text"`
}

type detectRules struct {
	QuestionMarks  string  `json:"question_marks"`
	SentenceBreaks string  `json:"sentence_breaks"`
	ClauseBreaks   string  `json:"clause_breaks"`
	EN             enRules `json:"en"`
	ZH             zhRules `json:"zh"`
}

type enRules struct {
	Fillers   []string `json:"fillers"`
	WH        []string `json:"wh"`
	Aux       []string `json:"aux"`
	Subjects  []string `json:"subjects"`
	Starts    []string `json:"starts"`
	NotStarts []string `json:"not_starts"`
	Contains  []string `json:"contains"`
	// NearSubjects and Restarts: see the Rules in Script's doc.
	NearSubjects []string `json:"near_subjects"`
	Restarts     []string `json:"restarts"`
}

type zhRules struct {
	Ignore         []string `json:"ignore"`
	Markers        []string `json:"markers"`
	FinalParticles []string `json:"final_particles"`
	Alternatives   []string `json:"alternatives"`
	AltOpeners     []string `json:"alternative_openers"`
	ANotA          []string `json:"a_not_a"`
}

// typeEntry is the card of a question type: its framework key and think
// time.
type typeEntry struct {
	Framework  string `json:"framework"`
	CountdownS int    `json:"countdown_s"`
}

type classifyRule struct {
	Type      Type     `json:"type"` // empty: behavioural
	Framework string   `json:"framework"`
	EN        []string `json:"en"`
	ZH        []string `json:"zh"`
}

type langText struct {
	Frameworks    map[string]Framework `json:"frameworks"`
	QuestionTips  []string             `json:"question_tips"`
	StatementTips []string             `json:"statement_tips"`
	TypeTips      map[Type][]string    `json:"type_tips"`
}

// languages are the text keys every scripts file must hold.
var languages = []string{"en", "zh"}

// Parse decodes and checks a scripts file (schema on Script).
func Parse(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f scriptFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("coach: decode scripts: %w", err)
	}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("coach: check scripts: %w", err)
	}
	s := &Script{
		countdownS:     f.CountdownS,
		defaultKey:     f.DefaultFramework,
		types:          f.Types,
		questionMarks:  f.Detect.QuestionMarks,
		sentenceBreaks: f.Detect.SentenceBreaks,
		clauseBreaks:   f.Detect.ClauseBreaks,
		en:             newENMatcher(f.Detect.EN),
		zh:             f.Detect.ZH,
		text:           f.Text,
	}
	for _, r := range f.Classify {
		typ := r.Type
		if typ == "" {
			typ = Behavioural
		}
		s.classify = append(s.classify, classifier{typ: typ, framework: r.Framework, en: phrases(r.EN), zh: r.ZH})
	}
	return s, nil
}

// check reports the first missing or unusable field of f.
func (f *scriptFile) check() error {
	if f.Version != scriptsVersion {
		return fmt.Errorf("version %d, want %d", f.Version, scriptsVersion)
	}
	if f.CountdownS <= 0 {
		return errors.New("countdown_s must be > 0")
	}
	if err := f.Detect.check(); err != nil {
		return err
	}
	if f.DefaultFramework == "" || f.DefaultFramework == statementFramework {
		return fmt.Errorf("default_framework %q is not a question framework", f.DefaultFramework)
	}
	needed := []string{f.DefaultFramework, statementFramework}
	typed, err := f.checkTypes()
	if err != nil {
		return err
	}
	classified, err := f.checkClassify()
	if err != nil {
		return err
	}
	needed = append(append(needed, typed...), classified...)
	for _, lang := range languages {
		if err := f.Text[lang].check(needed); err != nil {
			return fmt.Errorf("text.%s: %w", lang, err)
		}
	}
	return nil
}

// check reports the first empty or malformed field of the question
// detector's lists.
func (d detectRules) check() error {
	for name, v := range map[string]string{
		"question_marks": d.QuestionMarks, "sentence_breaks": d.SentenceBreaks, "clause_breaks": d.ClauseBreaks,
	} {
		if v == "" {
			return fmt.Errorf("detect.%s is empty", name)
		}
	}
	lists := map[string][]string{
		"en.fillers": d.EN.Fillers, "en.wh": d.EN.WH, "en.aux": d.EN.Aux, "en.subjects": d.EN.Subjects,
		"en.starts": d.EN.Starts, "en.not_starts": d.EN.NotStarts, "en.contains": d.EN.Contains,
		"en.near_subjects": d.EN.NearSubjects, "en.restarts": d.EN.Restarts,
		"zh.ignore": d.ZH.Ignore, "zh.markers": d.ZH.Markers, "zh.final_particles": d.ZH.FinalParticles,
		"zh.alternatives": d.ZH.Alternatives, "zh.alternative_openers": d.ZH.AltOpeners, "zh.a_not_a": d.ZH.ANotA,
	}
	for name, l := range lists {
		kind := zhPhrases
		if strings.HasPrefix(name, "en.") {
			kind = enPhrases
		}
		if err := checkList(name, l, kind); err != nil {
			return fmt.Errorf("detect.%w", err)
		}
	}
	return nil
}

// checkTypes reports the first wrong entry of the per-type frameworks, or
// the frameworks they name.
func (f *scriptFile) checkTypes() ([]string, error) {
	var named []string
	for _, t := range Types {
		e, ok := f.Types[t]
		switch {
		case t == Behavioural || t == Remark:
			if ok {
				return nil, fmt.Errorf("types.%s: set by default_framework and countdown_s", t)
			}
			continue
		case !ok || e.Framework == "" || e.Framework == statementFramework:
			return nil, fmt.Errorf("types.%s: missing, or not a question framework", t)
		case e.CountdownS < 0:
			return nil, fmt.Errorf("types.%s.countdown_s must be >= 0", t)
		}
		named = append(named, e.Framework)
	}
	if len(f.Types) != len(Types)-2 {
		return nil, errors.New("types: an entry names no question type")
	}
	return named, nil
}

// checkClassify reports the first wrong rule of the classifier's phrase
// rules, or the frameworks they name.
func (f *scriptFile) checkClassify() ([]string, error) {
	if len(f.Classify) == 0 {
		return nil, errors.New("classify is empty")
	}
	var named []string
	for i, r := range f.Classify {
		if r.Type != "" && (!slices.Contains(Types, r.Type) || r.Type == Remark) {
			return nil, fmt.Errorf("classify[%d]: type %q is not a question type", i, r.Type)
		}
		if r.Framework == "" || r.Framework == statementFramework {
			return nil, fmt.Errorf("classify[%d]: framework %q is not a question framework", i, r.Framework)
		}
		if err := checkList("en", r.EN, enPhrases); err != nil {
			return nil, fmt.Errorf("classify[%d].%w", i, err)
		}
		if err := checkList("zh", r.ZH, zhPhrases); err != nil {
			return nil, fmt.Errorf("classify[%d].%w", i, err)
		}
		named = append(named, r.Framework)
	}
	return named, nil
}

// check reports the first missing field of one language's text.
func (t langText) check(frameworks []string) error {
	for _, key := range frameworks {
		fw, ok := t.Frameworks[key]
		if !ok {
			return fmt.Errorf("frameworks.%s is missing", key)
		}
		if fw.Name == "" {
			return fmt.Errorf("frameworks.%s.name is empty", key)
		}
		if err := checkList("frameworks."+key+".steps", fw.Steps, wording); err != nil {
			return err
		}
	}
	if err := checkList("question_tips", t.QuestionTips, wording); err != nil {
		return err
	}
	for typ, tips := range t.TypeTips {
		if !slices.Contains(Types, typ) {
			return fmt.Errorf("type_tips.%s: not a question type", typ)
		}
		if err := checkList("type_tips."+string(typ), tips, wording); err != nil {
			return err
		}
	}
	return checkList("statement_tips", t.StatementTips, wording)
}

// listKind says how checkList checks the entries of a list.
type listKind int

const (
	wording   listKind = iota // shown to the candidate: any non-empty text
	zhPhrases                 // matched as substrings of lower-cased text
	enPhrases                 // matched as words of lower-cased text
)

// checkList reports an empty list or entry, and a matching phrase that could
// never match a lower-cased, tokenized text.
func checkList(name string, l []string, kind listKind) error {
	if len(l) == 0 {
		return fmt.Errorf("%s is empty", name)
	}
	for i, p := range l {
		switch {
		case strings.TrimSpace(p) == "":
			return fmt.Errorf("%s[%d] is empty", name, i)
		case kind != wording && p != strings.ToLower(p):
			return fmt.Errorf("%s[%d] %q is not lower case", name, i, p)
		case kind == enPhrases && strings.Join(words(p), " ") != p:
			return fmt.Errorf("%s[%d] %q is not words of [a-z0-9'] joined by single spaces", name, i, p)
		}
	}
	return nil
}
