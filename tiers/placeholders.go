package tiers

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Template answers mark what the candidate must supply with brackets:
// "[company]", "[公司名]", "[X]". FillPlaceholders (what L3 applies to a
// template's outline and answer before they are sent) replaces those the
// profile has the fact for, and shortens a few others to a plain phrase
// the candidate can say as it stands; the rest (numbers, metrics: "[X]%",
// "[指标]") stay bracketed, since only the candidate knows them.
//
// The facts, by simple extraction (resumeFacts):
//
//	[company] [current company] [公司名] [现公司]  the first company of the resume, else "my company" / "我现在的公司"
//	[previous company] [前公司]                 the second company, else "my previous company" / "上一家公司"
//	[project] [项目] [项目名]                   the first named project, else "one of my projects" / "我负责的一个项目"
//	[role] [职位] [岗位]                        the profile's role, else "this role" / "这个岗位"
//	[years] [N] [年限]                          the resume's "N years" / "N 年", else kept
var placeholder = regexp.MustCompile(`\[([^\[\]\n]{1,24})\]`)

// fact is one kind of placeholder: its names, and what stands in for it
// when the profile lacks the fact (empty: keep the bracket).
type fact struct {
	names          []string
	fallbackEN, ZH string
}

var facts = map[string]fact{
	"company":  {[]string{"company", "current company", "公司名", "现公司", "公司"}, "my company", "我现在的公司"},
	"previous": {[]string{"previous company", "former company", "前公司", "上一家公司"}, "my previous company", "上一家公司"},
	"project":  {[]string{"project", "project name", "项目", "项目名"}, "one of my projects", "我负责的一个项目"},
	"role":     {[]string{"role", "job title", "position", "职位", "岗位"}, "this role", "这个岗位"},
	"years":    {[]string{"years", "n", "年限", "工作年限"}, "", ""},
}

// factOf maps a placeholder name (lower case) to its fact key.
var factOf = func() map[string]string {
	m := map[string]string{}
	for key, f := range facts {
		for _, n := range f.names {
			m[n] = key
		}
	}
	return m
}()

// FillPlaceholders fills the placeholders of text in lang from p (see
// placeholder).
func FillPlaceholders(text string, p Profile, lang string) string {
	if !strings.Contains(text, "[") {
		return text
	}
	known := resumeFacts(p.Resume)
	if r := strings.TrimSpace(p.Role); r != "" {
		known["role"] = r
	}
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		key, ok := factOf[strings.ToLower(strings.TrimSpace(m[1:len(m)-1]))]
		if !ok {
			return m
		}
		if v := known[key]; v != "" {
			return v
		}
		fb := facts[key].fallbackEN
		if lang == "zh" {
			fb = facts[key].ZH
		}
		if fb == "" {
			return m
		}
		return fb
	})
}

// Résumé patterns: a line that starts with a name followed by a year
// ("Acme Pay, 2019–2024: …", "字节跳动（2020-至今）…"), a named project
// ("Project: Ledger", "项目：支付网关"), and years of experience ("7 years",
// "5 年").
var (
	companyLine = regexp.MustCompile(`^\s*(?:[-*•]\s*)?([^,，:：(（|–—\d][^,，:：(（|]{0,38}?)\s*[,，:：(（|–—-]\s*(?:19|20)\d\d`)
	projectName = regexp.MustCompile(`(?i)(?:project|项目)\s*[:：]\s*([^,，.。;；\n]{1,40})`)
	yearsOf     = regexp.MustCompile(`(?i)(\d{1,2})\+?\s*(?:years?\b|年(?:工作)?经验|年)`)
)

// resumeFacts extracts what FillPlaceholders can use from a resume: the
// first and second company, the first named project, the years of
// experience. A fact not found is absent.
func resumeFacts(resume string) map[string]string {
	out := map[string]string{}
	var companies []string
	for _, line := range strings.Split(resume, "\n") {
		if m := companyLine.FindStringSubmatch(line); m != nil {
			if c := strings.TrimSpace(m[1]); c != "" && utf8.RuneCountInString(c) <= 40 {
				companies = append(companies, c)
			}
		}
		if m := projectName.FindStringSubmatch(line); m != nil && out["project"] == "" {
			out["project"] = strings.TrimSpace(m[1])
		}
		if m := yearsOf.FindStringSubmatch(line); m != nil && out["years"] == "" {
			out["years"] = m[1]
		}
	}
	if len(companies) > 0 {
		out["company"] = companies[0]
	}
	if len(companies) > 1 {
		out["previous"] = companies[1]
	}
	return out
}
