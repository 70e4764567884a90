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
	{"ings", ""}, {"ing", ""}, {"ies", "y"}, {"ied", "y"}, {"ers", "er"},
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

// splitSentences cuts text after each run of sentence-ending punctuation
// and drops empty pieces.
func splitSentences(text string) []string {
	var out []string
	start := 0
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		if !isSentenceEnd(rs[i]) {
			continue
		}
		for i+1 < len(rs) && isSentenceEnd(rs[i+1]) {
			i++
		}
		if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// isQuestion reports whether a sentence is marked as a question.
func isQuestion(sentence string) bool {
	return strings.ContainsAny(sentence, "?？")
}

// cutFillersZH splits a Chinese run at spoken fillers ("那个", "就是") and
// particles ("的", "吗"), dropping them.
func cutFillersZH(rs []rune) [][]rune {
	var pieces [][]rune
	start := 0
	for i := 0; i < len(rs); {
		n := fillerAt(rs, i)
		if n == 0 {
			i++
			continue
		}
		if i > start {
			pieces = append(pieces, rs[start:i])
		}
		i += n
		start = i
	}
	if start < len(rs) {
		pieces = append(pieces, rs[start:])
	}
	return pieces
}

// fillerAt returns the length in runes of the filler starting at rs[i], or 0.
func fillerAt(rs []rune, i int) int {
	for _, f := range fillersZH {
		if hasRunePrefix(rs[i:], f) {
			return len(f)
		}
	}
	if particlesZH[rs[i]] {
		return 1
	}
	return 0
}

func hasRunePrefix(rs, prefix []rune) bool {
	return len(rs) >= len(prefix) && equalRunes(rs[:len(prefix)], prefix)
}

// stopWordsEN are English function words and spoken fillers: they add no
// feature of their own (concept terms still see them).
var stopWordsEN = setOf(strings.Fields(`
a an the and or but if so of to in on at for with about as by from into
over is are was were be been being am do does did done have has had i me my
mine myself we us our you your yours he she him his her it its they them
their this that these those there here what which who whom whose when where
why how can could would should will shall may might must just really very
um uh umm uhh erm er ah oh hmm mm okay ok alright right well like great
thanks thank cool sure yeah yes yep please let tell say said some any bit
little maybe also then now next go going get got one thing things kind sort
actually basically mean wanna gonna gotta quick quickly know gotcha awesome
perfect nice good fine sounds anyway anything something all not no out up
more most much lot lots ever every again still too than other
`))

// fillersZH are spoken Chinese fillers and politeness formulas, longest
// first, cut out before n-grams are taken.
var fillersZH = runesOf(strings.Fields(`
就是说 我想问 你能不能 能不能 可不可以 那个 这个 就是 然后 那么 好的 谢谢
一下 的话 请问 我想 可以 你能 麻烦 嗯嗯 对吧 是吧 好吧 接下来 下面
`))

// particlesZH are single-character particles and interjections, cut out
// like fillers.
var particlesZH = setOfRunes("的了吗呢吧啊呀嘛嗯呃哦哈噢诶")

// stopCharsZH add no unigram feature of their own, but stay inside n-grams.
var stopCharsZH = setOfRunes("你我他她它们是在有和与就也都很还这那个一不什么怎么样吗请说讲聊谈下")

func setOf(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func setOfRunes(s string) map[rune]bool {
	m := make(map[rune]bool)
	for _, r := range s {
		m[r] = true
	}
	return m
}

func runesOf(words []string) [][]rune {
	out := make([][]rune, len(words))
	for i, w := range words {
		out[i] = []rune(w)
	}
	return out
}
