package tiers

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Facts are what a résumé and a job description say plainly about the
// candidate and the job: enough to fill a template's placeholders
// ([company], [X] years, [项目名] …). Any field may be empty: a fact that
// is not in the text is never guessed. Facts never leave the session
// (they are derived from the résumé).
type Facts struct {
	Name          string   `json:"name,omitempty"`
	Company       string   `json:"company,omitempty"` // the current (latest) employer
	Title         string   `json:"title,omitempty"`   // the current job title
	Years         int      `json:"years,omitempty"`   // years of experience
	Projects      []string `json:"projects,omitempty"`
	TargetCompany string   `json:"target_company,omitempty"` // from the job description
	TargetRole    string   `json:"target_role,omitempty"`    // from the job description
}

// maxProjects is how many project names Facts keeps.
const maxProjects = 3

var (
	yearsEN   = regexp.MustCompile(`(?i)\b(\d{1,2})\+?\s*(?:years?|yrs?)\b`)
	yearsZH   = regexp.MustCompile(`(\d{1,2})\s*年(?:以上|多)?(?:的)?(?:[\p{Han}]{0,4})经验`)
	current   = regexp.MustCompile(`(?i)((?:19|20)\d\d)(?:[./]\d{1,2})?\s*(?:-|–|—|~|to|至)\s*(?:present|now|current|today|至今|现在)`)
	dateRange = regexp.MustCompile(`(?i)\(?\s*((?:19|20)\d\d)(?:[./]\d{1,2})?\s*(?:-|–|—|~|to|至)\s*(?:(?:19|20)\d\d(?:[./]\d{1,2})?|present|now|current|today|至今|现在)\s*\)?`)
	splitter  = regexp.MustCompile(`\s*(?:,|，|\||·|—|–| - | at | @ |@)\s*`)
	labelled  = regexp.MustCompile(`(?i)^\s*(?:[-*•]\s*)?(name|姓名|company|公司|title|role|position|job title|职位|岗位|project|projects|项目|项目名称)\s*[:：]\s*(.+)$`)
	heading   = regexp.MustCompile(`(?i)^\s*#*\s*(projects|selected projects|key projects|项目经历|项目)\s*[:：]?\s*$`)
	atCompany = regexp.MustCompile(`(?i)\b(?:at|with|join)\s+([A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,3})`)
	hiring    = regexp.MustCompile(`^([A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,3})\s+is\s+(?:hiring|looking)`)
	titleWord = regexp.MustCompile(`(?i)\b(engineer|developer|manager|lead|architect|scientist|designer|analyst|director|consultant|intern|sre|devops|programmer|head of|vp)\b|工程师|经理|架构师|总监|设计师|分析师|负责人|专家|实习生`)
)

// ExtractFacts reads the facts from a résumé and a job description. now
// gives the year that "2019 – Present" counts to when the résumé states no
// years of experience.
func ExtractFacts(resume, job string, now time.Time) Facts {
	var f Facts
	lines := nonEmptyLines(resume)
	f.Years = years(resume, now)
	f.Projects = projects(lines)
	for _, l := range lines {
		if m := labelled.FindStringSubmatch(l); m != nil {
			v := short(m[2])
			switch strings.ToLower(m[1]) {
			case "name", "姓名":
				f.Name = orText(f.Name, v)
			case "company", "公司":
				f.Company = orText(f.Company, v)
			case "title", "role", "position", "job title", "职位", "岗位":
				f.Title = orText(f.Title, v)
			}
		}
	}
	if f.Name == "" && len(lines) > 0 && looksLikeName(lines[0]) {
		f.Name = lines[0]
	}
	if f.Company == "" || f.Title == "" {
		company, title := currentJob(lines)
		f.Company, f.Title = orText(f.Company, company), orText(f.Title, title)
	}
	f.TargetCompany, f.TargetRole = jobTarget(nonEmptyLines(job))
	return f
}

func nonEmptyLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// short trims a fact to something a sentence can hold.
func short(s string) string {
	s = strings.Trim(strings.TrimSpace(s), ".;；。")
	if utf8.RuneCountInString(s) > 60 {
		return ""
	}
	return s
}

func looksLikeName(l string) bool {
	words := strings.Fields(l)
	if len(words) < 2 || len(words) > 4 || len(l) > 40 {
		return false
	}
	for _, w := range words {
		if c := w[0]; c < 'A' || c > 'Z' || strings.ContainsAny(w, "0123456789@:/") {
			return false
		}
	}
	return !titleWord.MatchString(l)
}

// years is the stated years of experience, else the years from the
// earliest start of a current job ("2019 – Present") to now.
func years(resume string, now time.Time) int {
	for _, re := range []*regexp.Regexp{yearsEN, yearsZH} {
		if m := re.FindStringSubmatch(resume); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > 0 && n < 60 {
				return n
			}
		}
	}
	first := 0
	for _, m := range dateRange.FindAllStringSubmatch(resume, -1) {
		if y, _ := strconv.Atoi(m[1]); y > 1950 && (first == 0 || y < first) {
			first = y
		}
	}
	if first == 0 || now.Year() <= first {
		return 0
	}
	return now.Year() - first
}

// currentJob reads the line of the current job ("Senior Engineer, Acme
// (2019 – Present)", "Acme · Senior Engineer · 2019–至今"): the part with a
// job title word is the title, the other the company.
func currentJob(lines []string) (company, title string) {
	for _, l := range lines {
		if !current.MatchString(l) {
			continue
		}
		rest := strings.TrimSpace(dateRange.ReplaceAllString(l, " "))
		for _, part := range splitter.Split(rest, -1) {
			part = short(strings.Trim(part, "()（）[] "))
			switch {
			case part == "":
			case title == "" && titleWord.MatchString(part):
				title = part
			case company == "":
				company = part
			}
		}
		return company, title
	}
	return "", ""
}

// projects are the names of "Project: …" lines and of the items under a
// "Projects" heading, up to maxProjects.
func projects(lines []string) []string {
	var out []string
	under := false
	add := func(s string) {
		for _, cut := range []string{"(", "（", ":", "："} {
			s, _, _ = strings.Cut(s, cut)
		}
		name := strings.TrimSpace(splitter.Split(s, 2)[0])
		if name = short(strings.Trim(name, ":：")); name != "" && len(out) < maxProjects {
			out = append(out, name)
		}
	}
	for _, l := range lines {
		if m := labelled.FindStringSubmatch(l); m != nil && strings.HasPrefix(strings.ToLower(m[1]), "project") || m != nil && strings.HasPrefix(m[1], "项目") {
			add(m[2])
			continue
		}
		if heading.MatchString(l) {
			under = true
			continue
		}
		if under {
			if item, ok := strings.CutPrefix(l, "- "); ok || strings.HasPrefix(l, "• ") || strings.HasPrefix(l, "* ") {
				if !ok {
					item = l[strings.Index(l, " ")+1:]
				}
				add(item)
			} else {
				under = false
			}
		}
	}
	return out
}

// jobTarget reads the company and the role from a job description:
// labelled lines first, then the title line ("Senior Backend Engineer at
// Globex"), then "Globex is hiring".
func jobTarget(lines []string) (company, role string) {
	for _, l := range lines {
		if m := labelled.FindStringSubmatch(l); m != nil {
			switch v := short(m[2]); strings.ToLower(m[1]) {
			case "company", "公司":
				company = orText(company, v)
			case "title", "role", "position", "job title", "职位", "岗位":
				role = orText(role, v)
			}
		}
	}
	if len(lines) > 0 {
		first := lines[0]
		if m := atCompany.FindStringSubmatch(first); m != nil && company == "" {
			company = short(m[1])
			first = strings.TrimSpace(first[:strings.Index(first, m[0])])
		}
		if role == "" && titleWord.MatchString(first) {
			role = short(strings.Trim(splitter.Split(first, 2)[0], "# "))
		}
	}
	for _, l := range lines {
		if m := hiring.FindStringSubmatch(l); m != nil && company == "" {
			company = short(m[1])
		}
	}
	return company, role
}

// Placeholders of the template bank that facts fill, by the fact.
var (
	targetCompanyRe = regexp.MustCompile(`(?i)((?:position|role|job|opportunity|team|work) (?:at|with) |join )\[company\]`)
	yearsRe         = regexp.MustCompile(`(?i)\[(?:X|N|Y)\](\+?\s*(?:years?|年))`)
)

var placeholders = []struct {
	names []string
	fact  func(Facts) string
}{
	{[]string{"[name]", "[your name]", "[姓名]"}, func(f Facts) string { return f.Name }},
	{[]string{"[company]", "[current company]", "[company name]", "[公司名]", "[现公司]", "[公司]"}, func(f Facts) string { return f.Company }},
	{[]string{"[job title]", "[title]", "[current role]", "[current title]", "[职位]"}, func(f Facts) string { return f.Title }},
	{[]string{"[role]", "[position]", "[target role]", "[岗位]"}, func(f Facts) string { return f.TargetRole }},
	{[]string{"[project]", "[project name]", "[项目名]", "[项目名称]", "[项目]"}, func(f Facts) string {
		if len(f.Projects) == 0 {
			return ""
		}
		return f.Projects[0]
	}},
}

// Fill replaces the placeholders whose fact is known and leaves the
// others for the candidate: "[X] years" takes Years, "[company]" the
// current employer (the job's company after "position at", "join"),
// "[项目名]" the first project, and so on.
func (f Facts) Fill(text string) string {
	if f.TargetCompany != "" {
		text = targetCompanyRe.ReplaceAllString(text, "${1}"+escapeRepl(f.TargetCompany))
	}
	if f.Years > 0 {
		text = yearsRe.ReplaceAllString(text, strconv.Itoa(f.Years)+"${1}")
	}
	for _, p := range placeholders {
		v := p.fact(f)
		if v == "" {
			continue
		}
		for _, name := range p.names {
			text = replaceFold(text, name, v)
		}
	}
	return text
}

func escapeRepl(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// replaceFold replaces every case-insensitive occurrence of old.
func replaceFold(s, old, repl string) string {
	lower := strings.ToLower(s)
	lowOld := strings.ToLower(old)
	if len(lower) != len(s) || !strings.Contains(lower, lowOld) {
		return strings.ReplaceAll(s, old, repl)
	}
	var b strings.Builder
	for {
		i := strings.Index(lower, lowOld)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s, lower = s[i+len(old):], lower[i+len(old):]
	}
}

// Summary is the facts as one line for the prompt; empty when none is
// known.
func (f Facts) Summary() string {
	var parts []string
	add := func(label, v string) {
		if v != "" {
			parts = append(parts, label+": "+v)
		}
	}
	add("current title", f.Title)
	add("current company", f.Company)
	if f.Years > 0 {
		add("years of experience", strconv.Itoa(f.Years))
	}
	add("projects", strings.Join(f.Projects, ", "))
	add("applying for", strings.TrimSpace(f.TargetRole+" "+atText(f.TargetCompany)))
	return strings.Join(parts, "; ")
}

func atText(c string) string {
	if c == "" {
		return ""
	}
	return "at " + c
}
