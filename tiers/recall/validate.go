package recall

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Bounds of the bank's content. Answer lengths count English words and
// Chinese (CJK unified ideograph) characters, as the writers' checker does.
const (
	minParaphrases  = 4   // per question and language
	minWordsEN      = 80  // English words per answer
	maxWordsEN      = 150 // English words per answer
	minCharsZH      = 150 // CJK characters per answer
	maxCharsZH      = 250 // CJK characters per answer
	shingleSize     = 5   // words (en) or characters (zh) per shingle
	maxShingleShare = 0.25

	minTechWordsEN = 90  // English words per technical answer
	maxTechWordsEN = 160 // English words per technical answer
	minTechCharsZH = 180 // CJK characters per technical answer
	maxTechCharsZH = 320 // CJK characters per technical answer

	minOutline        = 3  // outline lines per language
	maxOutline        = 5  // outline lines per language
	maxOutlineWordsEN = 14 // English words per outline line
	maxOutlineCharsZH = 28 // CJK characters per outline line

	// A filled sentence template shows as many answers that open alike:
	// no openingWords English words (openingChars Chinese characters)
	// may open more than maxSharedOpening answers of one bank kind.
	openingWords     = 4
	openingChars     = 8
	maxSharedOpening = 3
)

var (
	idPattern          = regexp.MustCompile(`^([a-z]+)-[0-9a-z-]+$`)
	placeholderPattern = regexp.MustCompile(`\[[^\[\]\n]+\]`)
)

// validate checks every question of b and then the bank as a whole, and
// returns all problems found, joined, or nil.
func validate(b *Bank) error {
	var errs []error
	for _, q := range b.Questions {
		errs = append(errs, validateQuestion(q)...)
	}
	errs = append(errs, duplicateQuestions(b)...)
	errs = append(errs, nearDuplicateAnswers(b)...)
	errs = append(errs, sharedOpenings(b)...)
	return errors.Join(errs...)
}

// validateQuestion checks one template's id, kind, type, wordings,
// paraphrases, outline and answers.
func validateQuestion(q *Question) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{q.ID}, args...)...))
	}
	if !slices.Contains(Categories, q.Category) {
		bad("unknown category %q", q.Category)
	}
	if m := idPattern.FindStringSubmatch(q.ID); m == nil || m[1] != idPrefix(q.Category) {
		bad("id must look like %s-01", idPrefix(q.Category))
	}
	types, technical := technicalTypes[q.Category]
	switch {
	case technical && q.Kind != KindTechnical:
		bad("category %s needs kind: technical", q.Category)
	case !technical && q.Kind != KindBehavioural:
		bad("kind %q in behavioural category %s", q.Kind, q.Category)
	}
	if !technical {
		types = behaviouralTypes
	}
	if !slices.Contains(types, q.Type) {
		bad("type %q, want one of %v", q.Type, types)
	}
	for _, lang := range []string{LangZH, LangEN} {
		errs = append(errs, checkWordings(q, lang)...)
		if err := checkOutline(q.Outline.In(lang), lang); err != nil {
			bad("outline %s: %v", lang, err)
		}
	}
	if technical {
		if q.Answers != (Answers{}) {
			bad("a technical template has one answer, not answers per seniority")
		}
		for _, lang := range []string{LangZH, LangEN} {
			if err := checkTechAnswer(q.Answer.In(lang), lang); err != nil {
				bad("answer %s: %v", lang, err)
			}
		}
		return errs
	}
	if q.Answer != (Text{}) {
		bad("a behavioural template has answers per seniority, not one answer")
	}
	for _, level := range []string{Junior, Mid, Senior} {
		for _, lang := range []string{LangZH, LangEN} {
			if err := checkAnswer(q.Answers.For(level).In(lang), lang); err != nil {
				bad("answer %s/%s: %v", level, lang, err)
			}
		}
	}
	return errs
}

// idPrefix is the id prefix of a category's templates: the category, or
// its singular for concepts ("concept-01").
func idPrefix(category string) string {
	if category == "concepts" {
		return "concept"
	}
	return category
}

// checkWordings checks a template's canonical wording and paraphrases in
// lang: present, in lang's script, enough of them and no repeats.
func checkWordings(q *Question, lang string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{q.ID}, args...)...))
	}
	if err := checkScript(q.Wording(lang), lang); err != nil {
		bad("question %s: %v", lang, err)
	}
	ps := q.Paraphrases.In(lang)
	if len(ps) < minParaphrases {
		bad("%d %s paraphrases, want at least %d", len(ps), lang, minParaphrases)
	}
	seen := map[string]bool{normalizeQuestion(q.Wording(lang)): true}
	for i, p := range ps {
		if err := checkScript(p, lang); err != nil {
			bad("paraphrase %s[%d]: %v", lang, i, err)
		}
		if n := normalizeQuestion(p); seen[n] {
			bad("paraphrase %s[%d] repeats another wording", lang, i)
		} else {
			seen[n] = true
		}
	}
	return errs
}

// checkOutline checks an outline: 3-5 lines, each short, in lang's script
// and without placeholders (an outline must read as it is).
func checkOutline(lines []string, lang string) error {
	if len(lines) < minOutline || len(lines) > maxOutline {
		return fmt.Errorf("%d lines, want %d-%d", len(lines), minOutline, maxOutline)
	}
	for i, l := range lines {
		if err := checkScript(l, lang); err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
		n, hi, unit := countEN(l), maxOutlineWordsEN, "words"
		if lang == LangZH {
			n, hi, unit = countHan(l), maxOutlineCharsZH, "Chinese characters"
		}
		if n > hi {
			return fmt.Errorf("line %d: %d %s, want at most %d", i+1, n, unit, hi)
		}
		if placeholderPattern.MatchString(l) {
			return fmt.Errorf("line %d: has a [placeholder]", i+1)
		}
	}
	return nil
}

// checkTechAnswer checks a technical answer's script and length; it tells
// no story, so it has no placeholder.
func checkTechAnswer(a, lang string) error {
	if err := checkScript(a, lang); err != nil {
		return err
	}
	n, lo, hi, unit := countEN(a), minTechWordsEN, maxTechWordsEN, "words"
	if lang == LangZH {
		n, lo, hi, unit = countHan(a), minTechCharsZH, maxTechCharsZH, "Chinese characters"
	}
	if n < lo || n > hi {
		return fmt.Errorf("%d %s, want %d-%d", n, unit, lo, hi)
	}
	if placeholderPattern.MatchString(a) {
		return errors.New("has a [placeholder]; a technical answer needs none")
	}
	return nil
}

// checkScript checks that s is present and written in lang's script.
func checkScript(s, lang string) error {
	han := countHan(s)
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("missing")
	case lang == LangZH && han == 0:
		return errors.New("has no Chinese characters")
	case lang == LangEN && han > 0:
		return errors.New("has Chinese characters")
	}
	return nil
}

// checkAnswer checks an answer's script, length and placeholder.
func checkAnswer(a, lang string) error {
	if err := checkScript(a, lang); err != nil {
		return err
	}
	n, lo, hi, unit := countEN(a), minWordsEN, maxWordsEN, "words"
	if lang == LangZH {
		n, lo, hi, unit = countHan(a), minCharsZH, maxCharsZH, "Chinese characters"
	}
	if n < lo || n > hi {
		return fmt.Errorf("%d %s, want %d-%d", n, unit, lo, hi)
	}
	if !placeholderPattern.MatchString(a) {
		return errors.New("no [placeholder] for the candidate's own details")
	}
	return nil
}

// countHan counts CJK unified ideographs, the unit of Chinese answer length.
func countHan(s string) int {
	n := 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			n++
		}
	}
	return n
}

// countEN counts English words, placeholders included: runs of ASCII
// letters, digits, apostrophes, brackets and hyphens, as the writers'
// checker counts them.
func countEN(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		word := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("'[]-", c) >= 0
		if word && !in {
			n++
		}
		in = word
	}
	return n
}

// normalizeQuestion reduces a wording to lower-case letters and digits, to
// compare wordings for duplicates.
func normalizeQuestion(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), notWordRune), " ")
}

// notWordRune is true for what separates words: anything but a letter, a
// number or '_'. (A hand-written scan, not a regexp: start-up normalizes
// every wording and answer of the bank.)
func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '_'
}

// duplicateQuestions reports wordings (canonical or paraphrase) that two
// templates share: retrieval could not tell them apart.
func duplicateQuestions(b *Bank) []error {
	var errs []error
	owner := make(map[string]string)
	for _, q := range b.Questions {
		for _, lang := range []string{LangZH, LangEN} {
			for _, w := range append([]string{q.Wording(lang)}, q.Paraphrases.In(lang)...) {
				n := lang + ":" + normalizeQuestion(w)
				if o, ok := owner[n]; ok && o != q.ID {
					errs = append(errs, fmt.Errorf("%s and %s share the wording %q", o, q.ID, w))
				}
				owner[n] = q.ID
			}
		}
	}
	return errs
}

// answerRef names one answer for near-duplicate reports.
type answerRef struct {
	name     string   // "intro-01/mid/en"
	shingles []uint64 // sorted, unique
}

// nearDuplicateAnswers reports pairs of answers whose shingle sets overlap
// by more than maxShingleShare of the smaller set: copy-pasted templates
// look generic and waste the bank. It sorts all (shingle, answer) pairs and
// counts only the shingles that answers share, so it stays fast on the
// whole bank (start-up runs it).
func nearDuplicateAnswers(b *Bank) []error {
	var refs []answerRef
	var entries []uint64 // shingle hash in the high 48 bits, index into refs in the low 16
	for _, a := range allAnswers(b) {
		r := answerRef{name: a.name, shingles: shingles(a.text, a.lang)}
		for _, s := range r.shingles {
			entries = append(entries, s<<refBits|uint64(len(refs)))
		}
		refs = append(refs, r)
	}
	if len(refs) > 1<<refBits {
		return []error{fmt.Errorf("%d answers: too many to check for near-duplicates", len(refs))}
	}
	slices.Sort(entries)
	shared := make(map[[2]int]int) // answer pair → shared shingles
	for lo := 0; lo < len(entries); {
		hi := lo + 1
		for hi < len(entries) && entries[hi]>>refBits == entries[lo]>>refBits {
			hi++
		}
		for x := lo; x < hi; x++ {
			for y := x + 1; y < hi; y++ {
				shared[[2]int{int(entries[x] & refMask), int(entries[y] & refMask)}]++
			}
		}
		lo = hi
	}
	var errs []error
	for pair, n := range shared {
		a, b := refs[pair[0]], refs[pair[1]]
		if share := float64(n) / float64(min(len(a.shingles), len(b.shingles))); share > maxShingleShare {
			errs = append(errs, fmt.Errorf("near-duplicate answers %s and %s: %.0f%% of %d-grams shared",
				a.name, b.name, 100*share, shingleSize))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// namedAnswer is one answer of the bank with its name ("intro-01/mid/en",
// "design-01/en").
type namedAnswer struct{ name, kind, lang, text string }

// allAnswers lists every answer of b: three levels of each behavioural
// template, one of each technical template, in both languages.
func allAnswers(b *Bank) []namedAnswer {
	var out []namedAnswer
	for _, q := range b.Questions {
		for _, lang := range []string{LangZH, LangEN} {
			if q.Kind == KindTechnical {
				out = append(out, namedAnswer{q.ID + "/" + lang, q.Kind, lang, q.Answer.In(lang)})
				continue
			}
			for _, level := range []string{Junior, Mid, Senior} {
				out = append(out, namedAnswer{q.ID + "/" + level + "/" + lang, q.Kind, lang, q.Answers.For(level).In(lang)})
			}
		}
	}
	return out
}

// sharedOpenings reports openings that more than maxSharedOpening
// technical answers share: a sentence template filled in with other words.
// (Behavioural answers are stories told by one person, who may well open
// several with "During my internship at".)
func sharedOpenings(b *Bank) []error {
	owners := make(map[string]map[string]bool) // lang/opening → template ids
	for _, a := range allAnswers(b) {
		op := opening(a.text, a.lang)
		if op == "" || a.kind != KindTechnical {
			continue
		}
		key := a.lang + "/" + op
		if owners[key] == nil {
			owners[key] = make(map[string]bool)
		}
		id, _, _ := strings.Cut(a.name, "/")
		owners[key][id] = true
	}
	var errs []error
	for key, ids := range owners {
		if len(ids) > maxSharedOpening {
			op := key[strings.LastIndexByte(key, '/')+1:]
			errs = append(errs, fmt.Errorf("%d answers open with %q: a filled sentence template", len(ids), op))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// opening returns the first openingWords words (English) or openingChars
// characters (Chinese) of an answer, normalized, or "" if it is shorter.
func opening(text, lang string) string {
	if lang == LangZH {
		var rs []rune
		for _, r := range text {
			if unicode.Is(unicode.Han, r) {
				rs = append(rs, r)
			}
			if len(rs) == openingChars {
				return string(rs)
			}
		}
		return ""
	}
	w := strings.Fields(normalizeQuestion(text))
	if len(w) < openingWords {
		return ""
	}
	return strings.Join(w[:openingWords], " ")
}

const (
	refBits = 16
	refMask = 1<<refBits - 1
)

// shingles returns the sorted, unique 48-bit hashes of the shingleSize-grams
// of s: of words in English, of characters (spaces removed) in Chinese.
func shingles(s, lang string) []uint64 {
	var toks []uint64
	if lang == LangZH {
		for _, r := range s {
			if !unicode.IsSpace(r) {
				toks = append(toks, uint64(r))
			}
		}
	} else {
		toks = wordHashes(s)
	}
	out := make([]uint64, 0, len(toks))
	for i := 0; i+shingleSize <= len(toks); i++ {
		h := uint64(fnvOffset)
		for _, t := range toks[i : i+shingleSize] {
			h = (h ^ t) * fnvPrime
		}
		out = append(out, h>>refBits)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// wordHashes returns FNV-1a hashes of the lower-cased words (letters,
// digits and underscores) of s.
func wordHashes(s string) []uint64 {
	var out []uint64
	h, in := uint64(fnvOffset), false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			for _, c := range string(unicode.ToLower(r)) {
				h = (h ^ uint64(c)) * fnvPrime
			}
			in = true
			continue
		}
		if in {
			out = append(out, h)
			h, in = fnvOffset, false
		}
	}
	if in {
		out = append(out, h)
	}
	return out
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)
