package recall

import (
	"strings"
	"unicode"
)

// normalizeText lower-cases s and folds full-width ASCII, the ideographic
// space and curly apostrophes to their plain forms, so that input methods
// and ASR engines that differ only there produce the same features.
func normalizeText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
			r -= 0xFEE0
		case r == 0x3000:
			r = ' '
		case r == '\u2018' || r == '\u2019' || r == '`':
			r = '\''
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// isHan reports whether r is a Chinese character.
func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// isWordRune reports whether r belongs to a Latin-script word.
func isWordRune(r rune) bool {
	return r < 0x2E80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'')
}

// segment is a maximal run of one script in normalized text: Chinese
// characters, or Latin words with the spaces and punctuation between them.
// A sentence end or a Chinese run ends a Latin segment.
type segment struct {
	han   bool
	text  string
	words []string // Latin segments: the words, contractions expanded
}

// splitSegments cuts normalized text into Chinese and Latin segments.
func splitSegments(s string) []segment {
	var segs []segment
	var words []string
	var han strings.Builder
	flushWords := func() {
		if len(words) > 0 {
			segs = append(segs, segment{words: words})
			words = nil
		}
	}
	flushHan := func() {
		if han.Len() > 0 {
			segs = append(segs, segment{han: true, text: han.String()})
			han.Reset()
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case isHan(r):
			flushWords()
			han.WriteRune(r)
			i++
		case isWordRune(r):
			flushHan()
			j := i
			for j < len(rs) && isWordRune(rs[j]) {
				j++
			}
			words = append(words, expandWord(strings.Trim(string(rs[i:j]), "'"))...)
			i = j
		default:
			flushHan()
			if isSentenceEnd(r) {
				flushWords()
			}
			i++
		}
	}
	flushWords()
	flushHan()
	return segs
}

// isSentenceEnd reports whether r ends a sentence in either language.
func isSentenceEnd(r rune) bool {
	return strings.ContainsRune(".?!;。？！；…\n", r)
}

// contractions maps English contraction suffixes to the words they stand for.
var contractions = []struct{ suffix, word string }{
	{"n't", "not"}, {"'re", "are"}, {"'ve", "have"}, {"'ll", "will"},
	{"'d", "would"}, {"'m", "am"}, {"'s", ""},
}

// expandWord splits a contraction ("don't" → "do", "not"; "what's" →
// "what"); other words come back as they are.
func expandWord(w string) []string {
	switch w {
	case "":
		return nil
	case "can't", "cannot":
		return []string{"can", "not"}
	case "won't":
		return []string{"will", "not"}
	}
	for _, c := range contractions {
		if base, ok := strings.CutSuffix(w, c.suffix); ok && base != "" {
			if c.word == "" {
				return []string{base}
			}
			return []string{base, c.word}
		}
	}
	return []string{w}
}

// stemSuffixes are tried in order; the first that leaves a stem of at least
// minStem letters is replaced. A light stemmer is enough: it only has to map
// inflections of one word to one feature, and the concept lexicon carries
// the real synonyms.
var stemSuffixes = []struct{ suffix, repl string }{
	{"ational", "ate"}, {"ization", "ize"}, {"ations", "ate"}, {"ation", "ate"},
	{"ments", ""}, {"ment", ""}, {"nesses", ""}, {"ness", ""}, {"ingly", ""},
	{"ings", ""}, {"ing", ""}, {"ies", "y"}, {"ied", "y"}, {"ers", ""}, {"er", ""},
	{"edly", ""}, {"ed", ""}, {"ly", ""}, {"es", ""}, {"s", ""},
}

const minStem = 3 // letters a stem keeps at least

// stem reduces an English word to a crude stem: "managing", "manager",
// "management" and "manage" all become "manag".
func stem(w string) string {
	if len(w) <= minStem+1 {
		return w
	}
	for _, s := range stemSuffixes {
		base, ok := strings.CutSuffix(w, s.suffix)
		if !ok || len(base) < minStem {
			continue
		}
		if s.suffix == "s" && (strings.HasSuffix(base, "s") || strings.HasSuffix(base, "u") || strings.HasSuffix(base, "i")) {
			continue // "process", "focus", "analysis"
		}
		w = base + s.repl
		break
	}
	w = strings.TrimSuffix(w, "e")
	if n := len(w); n > minStem && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		w = w[:n-1] // "planning" → "plann" → "plan"
	}
	return w
}
