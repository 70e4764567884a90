package ocrtest

import (
	"slices"
	"strings"
	"unicode"
)

// Accuracy is 1 − the edit distance between want and got over want's
// length, in characters, after both lose their white space (tesseract
// does not keep indentation, and Chinese has no spaces) and full-width
// punctuation becomes ASCII (the models read both alike).
func Accuracy(want, got string) float64 {
	w, g := normalize(want), normalize(got)
	if len(w) == 0 {
		return 0
	}
	return max(0, 1-float64(levenshtein(w, g))/float64(len(w)))
}

var fullWidth = strings.NewReplacer("，", ",", "：", ":", "；", ";", "（", "(", "）", ")", "！", "!", "？", "?", "。", ".", "【", "[", "】", "]")

func normalize(s string) []rune {
	s = fullWidth.Replace(s)
	return slices.DeleteFunc([]rune(s), unicode.IsSpace)
}

func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
