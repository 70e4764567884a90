package tiers

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/poise-dev/poise/tiers/upstream"
)

// Context budgets, in estimated tokens (upstream.EstimateTokens): the job
// description and the résumé each get their share of the prompt; the
// local model (L2) gets less.
const (
	jobTokensFull     = 350
	jobTokensShort    = 100
	resumeTokensFull  = 550
	resumeTokensShort = 180
)

var (
	requirementsHeading = regexp.MustCompile(`(?i)^\s*#*\s*(requirements|qualifications|what you('ll| will)? (need|bring)|must[- ]haves?|you have|about you|skills|任职要求|岗位要求|任职资格|要求)\b|^\s*#*\s*(任职要求|岗位要求|任职资格|要求)`)
	otherHeading        = regexp.MustCompile(`^\s*#+\s|^[^.。,，]{1,40}[:：]\s*$`)
	requirementWords    = regexp.MustCompile(`(?i)\b(experience|required|must|proficien\w*|years|strong|knowledge|familiar\w*|degree)\b|熟悉|精通|经验|掌握|优先`)
)

// contextBlock is the candidate's context for the system prompt: the
// job's requirements first, then the résumé's lines most relevant to the
// question and the job, then the facts, each trimmed to its token budget.
// Empty when the profile has neither job nor résumé.
func contextBlock(req Request, short bool) string {
	p := req.Profile
	jobBudget, resumeBudget := jobTokensFull, resumeTokensFull
	if short {
		jobBudget, resumeBudget = jobTokensShort, resumeTokensShort
	}
	var b strings.Builder
	job := jobLines(p.Job)
	if j := withinBudget(job, jobBudget); j != "" {
		b.WriteString("\n\nThe job the candidate interviews for (requirements first):\n")
		b.WriteString(j)
	}
	if r := withinBudget(relevantLines(p.Resume, req.Question, job), resumeBudget); r != "" {
		b.WriteString("\n\nCandidate's resume (most relevant lines first):\n")
		b.WriteString(r)
	}
	if s := req.Facts.Summary(); s != "" {
		b.WriteString("\n\nFacts to use instead of placeholders: ")
		b.WriteString(s)
	}
	return b.String()
}

// jobLines orders a job description's lines: those under a requirements
// heading and those that read as requirements first, then the rest, each
// group in the text's order.
func jobLines(job string) []string {
	var reqs, rest []string
	under := false
	for _, l := range nonEmptyLines(job) {
		switch {
		case requirementsHeading.MatchString(l):
			under = true
			continue
		case otherHeading.MatchString(l):
			under = false
		}
		if under || requirementWords.MatchString(l) {
			reqs = append(reqs, l)
		} else {
			rest = append(rest, l)
		}
	}
	return append(reqs, rest...)
}

// relevantLines orders the résumé's lines by how many of the question's
// and the job's words they share (a line with a figure counts one more),
// the most relevant first; ties keep the résumé's order.
func relevantLines(resume, question string, job []string) []string {
	lines := nonEmptyLines(resume)
	keys := keywords(question + "\n" + strings.Join(job, "\n"))
	score := make(map[int]int, len(lines))
	for i, l := range lines {
		for k := range keywords(l) {
			if keys[k] {
				score[i]++
			}
		}
		if strings.ContainsAny(l, "0123456789") {
			score[i]++
		}
	}
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return score[b] - score[a] })
	out := make([]string, len(lines))
	for i, j := range order {
		out[i] = lines[j]
	}
	return out
}

// keywords are the lower-cased Latin words of four letters or more and
// the Han bigrams of s.
func keywords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '+' && r != '#'
	}) {
		r := []rune(w)
		if unicode.Is(unicode.Han, r[0]) {
			for i := 0; i+1 < len(r); i++ {
				out[string(r[i:i+2])] = true
			}
		} else if len(r) >= 4 && !stopWords[w] {
			out[w] = true
		}
	}
	return out
}

var stopWords = map[string]bool{"with": true, "that": true, "this": true, "have": true, "your": true,
	"about": true, "will": true, "from": true, "they": true, "were": true, "what": true, "when": true,
	"tell": true, "time": true}

// withinBudget joins lines, in order, while their estimated tokens fit
// budget; a line that does not fit is skipped for a shorter one after it.
func withinBudget(lines []string, budget int) string {
	var b strings.Builder
	used := 0
	for _, l := range lines {
		n := upstream.EstimateTokens(l) + 1
		if used+n > budget {
			continue
		}
		used += n
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}
