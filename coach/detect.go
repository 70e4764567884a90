package coach

import (
	"slices"
	"strings"
	"unicode"
)

// enMatcher holds the English detection rules with every phrase split into
// words once, at Parse.
type enMatcher struct {
	fillers, starts, notStarts, contains phraseList
	wh, aux, subjects, near, restarts    map[string]bool
}

// whGap is how many words may stand between a wh word and the aux and
// near subject after it ("what kind of role do you …"); web/static/
// coach.js has the same bound.
const whGap = 3

// classifier is one classify rule with its English phrases split into words.
type classifier struct {
	typ       Type
	framework string
	en        phraseList
	zh        []string
}

func newENMatcher(r enRules) enMatcher {
	return enMatcher{
		fillers:   phrases(r.Fillers),
		starts:    phrases(r.Starts),
		notStarts: phrases(r.NotStarts),
		contains:  phrases(r.Contains),
		wh:        set(r.WH),
		aux:       set(r.Aux),
		subjects:  set(r.Subjects),
		near:      set(r.NearSubjects),
		restarts:  set(r.Restarts),
	}
}

// IsQuestion reports whether text asks the candidate something, by the rules
// documented on Script. Chinese and English rules both apply, whatever the
// session's language.
func (s *Script) IsQuestion(text string) bool {
	t := normalize(text)
	if strings.ContainsAny(t, s.questionMarks) {
		return true
	}
	for _, sentence := range split(t, s.sentenceBreaks) {
		if s.zhQuestion(sentence) {
			return true
		}
		for _, clause := range split(sentence, s.clauseBreaks) {
			if s.en.question(words(clause)) {
				return true
			}
		}
	}
	return false
}

// frameworkFor returns the frameworks key for a question of type typ and
// whether a classify rule (rather than the type's default) chose it.
func (s *Script) frameworkFor(text string, typ Type) (key string, matched bool) {
	t := normalize(text)
	w := words(t)
	for _, c := range s.classify {
		if c.typ == typ && (containsAnyPhrase(w, c.en) || containsAnySubstring(t, c.zh)) {
			return c.framework, true
		}
	}
	if e, ok := s.types[typ]; ok {
		return e.Framework, false
	}
	return s.defaultKey, false
}

// zhQuestion applies the Chinese rules to one sentence.
func (s *Script) zhQuestion(sentence string) bool {
	for _, ig := range s.zh.Ignore {
		sentence = strings.ReplaceAll(sentence, ig, " ")
	}
	if containsAnySubstring(sentence, s.zh.Markers) {
		return true
	}
	end := strings.TrimRightFunc(sentence, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	for _, p := range s.zh.FinalParticles {
		if strings.HasSuffix(end, p) {
			return true
		}
	}
	return s.zhAlternative(sentence) || s.zhANotA(sentence)
}

// zhAlternative reports whether sentence asks to choose: an alternatives
// word ("还是") after an opener earlier in the sentence ("是本地缓存还是
// Redis", "你更喜欢一个人干，还是团队一起"; "我们还是先开始吧" has none).
func (s *Script) zhAlternative(sentence string) bool {
	for _, a := range s.zh.Alternatives {
		if i := strings.Index(sentence, a); i > 0 && containsAnySubstring(sentence[:i], s.zh.AltOpeners) {
			return true
		}
	}
	return false
}

// zhANotA reports whether sentence holds a Chinese character, an a_not_a
// word and the character again ("冷不冷", "紧不紧张", "去没去").
func (s *Script) zhANotA(sentence string) bool {
	r := []rune(sentence)
	for i := 1; i+1 < len(r); i++ {
		if r[i-1] == r[i+1] && r[i-1] != r[i] && unicode.Is(unicode.Han, r[i-1]) && slices.Contains(s.zh.ANotA, string(r[i])) {
			return true
		}
	}
	return false
}

// question applies the English rules to the words of one clause.
func (m *enMatcher) question(w []string) bool {
	w = m.stripFillers(w)
	if len(w) == 0 {
		return false
	}
	if !hasAnyPrefix(w, m.notStarts) && (m.wh[w[0]] || hasAnyPrefix(w, m.starts)) {
		return true
	}
	if m.inverted(w) {
		return true
	}
	for i, word := range w {
		if m.wh[word] && m.invertedNear(w[i+1:]) || m.restarts[word] && m.asksNear(w[i+1:]) {
			return true
		}
	}
	return containsAnyPhrase(w, m.contains)
}

// invertedNear reports whether w, the words after a wh word, opens with an
// aux and a subject, or has an aux and a near subject after at most whGap
// words ("role do you", "good are you").
func (m *enMatcher) invertedNear(w []string) bool {
	if m.inverted(w) {
		return true
	}
	for gap := 1; gap <= whGap && gap < len(w); gap++ {
		if m.asksNear(w[gap:]) {
			return true
		}
	}
	return false
}

// asksNear reports whether w opens with an aux and a near subject ("is
// there", "have you").
func (m *enMatcher) asksNear(w []string) bool {
	return len(w) >= 2 && m.aux[w[0]] && m.near[w[1]]
}

// inverted reports whether w opens with an auxiliary and then a subject
// ("did you", "is there").
func (m *enMatcher) inverted(w []string) bool {
	return len(w) >= 2 && m.aux[w[0]] && m.subjects[w[1]]
}

// stripFillers drops filler phrases from the start of w, the longest match
// first, until none is left.
func (m *enMatcher) stripFillers(w []string) []string {
	for {
		n := 0
		for _, f := range m.fillers.all {
			if len(f) > n && hasPrefix(w, f) {
				n = len(f)
			}
		}
		if n == 0 {
			return w
		}
		w = w[n:]
	}
}

// apostrophes folds typographic apostrophes to '; a Replacer is read-only
// and safe for concurrent use.
var apostrophes = strings.NewReplacer("’", "'", "‘", "'")

// normalize lower-cases text and folds typographic apostrophes to '.
func normalize(text string) string {
	return apostrophes.Replace(strings.ToLower(text))
}

// split cuts s at every rune of breaks, dropping empty pieces.
func split(s, breaks string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(breaks, r) })
}

// words returns the English words of s: runs of a-z, 0-9 and ', with '
// trimmed from both ends. s must already be lower case.
func words(s string) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'')
	})
	w := fields[:0]
	for _, f := range fields {
		if f = strings.Trim(f, "'"); f != "" {
			w = append(w, f)
		}
	}
	return w
}

// phraseList is a lexicon of phrases (each a run of words) in its order,
// also indexed by first word, so that looking for any of them at a word
// costs one map lookup instead of a comparison with each phrase (the
// classifier runs once a question on the session goroutine).
type phraseList struct {
	all     [][]string
	byFirst map[string][][]string
}

func phrases(l []string) phraseList {
	out := phraseList{all: make([][]string, 0, len(l)), byFirst: make(map[string][][]string, len(l))}
	for _, p := range l {
		if w := words(p); len(w) > 0 {
			out.all = append(out.all, w)
			out.byFirst[w[0]] = append(out.byFirst[w[0]], w)
		}
	}
	return out
}

func set(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

func hasPrefix(w, p []string) bool {
	return len(p) > 0 && len(w) >= len(p) && slices.Equal(w[:len(p)], p)
}

func hasAnyPrefix(w []string, ps phraseList) bool {
	return len(w) > 0 && slices.ContainsFunc(ps.byFirst[w[0]], func(p []string) bool { return hasPrefix(w, p) })
}

func containsAnyPhrase(w []string, ps phraseList) bool {
	for i := range w {
		if hasAnyPrefix(w[i:], ps) {
			return true
		}
	}
	return false
}

func containsAnySubstring(s string, subs []string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
}
