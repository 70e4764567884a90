package sim

import (
	"unicode"
	"unicode/utf8"
)

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF) // CJK and full-width punctuation
}

// cjkPerPiece is how many CJK runes make one simulated token.
const cjkPerPiece = 2

// pieces splits text into the simulated tokens that are streamed one per
// chunk: a word with its leading spaces, or up to two CJK runes. Joining the
// pieces gives text back, and the pieces of a prefix made of whole pieces
// are that prefix's pieces, which is what continuation relies on.
func pieces(text string) []string {
	var (
		out       []string
		start     int // byte offset of the current piece
		cjkRun    int // CJK runes in the current piece
		prevSpace bool
	)
	cut := func(at int) {
		if at > start {
			out = append(out, text[start:at])
			start = at
		}
		cjkRun = 0
	}
	for i, r := range text {
		switch {
		case unicode.IsSpace(r):
			if !prevSpace {
				cut(i)
			}
			prevSpace = true
		case isCJK(r):
			if cjkRun == cjkPerPiece || (cjkRun == 0 && !prevSpace) {
				cut(i)
			}
			cjkRun++
			prevSpace = false
		default:
			if cjkRun > 0 {
				cut(i)
			}
			prevSpace = false
		}
	}
	cut(len(text))
	return out
}

// continuation is what follows prefill when the model would answer reply:
// the pieces of reply after as many pieces as prefill has. A prefill cut
// from the same reply (or another model's default reply to the same
// question) therefore continues seamlessly.
func continuation(reply, prefill string) []string {
	all := pieces(reply)
	n := len(pieces(prefill))
	if n >= len(all) {
		return nil
	}
	return all[n:]
}

// estimateTokens is a rough token count: about four bytes per token for
// Latin text, one rune per token for CJK.
func estimateTokens(text string) int {
	var n, cjk int
	for _, r := range text {
		if isCJK(r) {
			cjk++
		} else {
			n += utf8.RuneLen(r)
		}
	}
	return max(1, n/4+cjk)
}
