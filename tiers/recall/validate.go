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
)

var (
	idPattern          = regexp.MustCompile(`^([a-z]+)-[0-9a-z-]+$`)
	placeholderPattern = regexp.MustCompile(`\[[^\[\]\n]+\]`)
	shingleWordPattern = regexp.MustCompile(`[\p{L}\p{N}_]+`)
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
	return errors.Join(errs...)
}

// validateQuestion checks one template's id, wordings, paraphrases and
// answers.
func validateQuestion(q *Question) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{q.ID}, args...)...))
	}
	if !slices.Contains(Categories, q.Category) {
		bad("unknown category %q", q.Category)
	}
	if m := idPattern.FindStringSubmatch(q.ID); m == nil || m[1] != q.Category {
		bad("id must look like %s-01", q.Category)
	}
	for _, lang := range []string{LangZH, LangEN} {
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
	return strings.Join(shingleWordPattern.FindAllString(strings.ToLower(s), -1), " ")
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
	for _, q := range b.Questions {
		for _, level := range []string{Junior, Mid, Senior} {
			for _, lang := range []string{LangZH, LangEN} {
				r := answerRef{name: q.ID + "/" + level + "/" + lang, shingles: shingles(q.Answers.For(level).In(lang), lang)}
				for _, s := range r.shingles {
					entries = append(entries, s<<refBits|uint64(len(refs)))
				}
				refs = append(refs, r)
			}
		}
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
