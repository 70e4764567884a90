package tiers

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func TestExtractFacts(t *testing.T) {
	for _, tc := range []struct {
		name, resume, job string
		want              Facts
	}{
		{
			name: "english resume and job",
			resume: "Jane Doe\njane@example.com\nExperience\nSenior Backend Engineer, Acme Payments (2019 - Present)\n" +
				"Backend Engineer, Initech (2015 - 2019)\n7 years of experience building payment systems in Go.\n" +
				"Projects\n- Ledger Rewrite (event-sourced settlement)\n- Fraud Radar: real-time scoring\nEducation",
			job: "Staff Engineer at Globex\nRequirements\n- 5+ years with distributed systems",
			want: Facts{Name: "Jane Doe", Company: "Acme Payments", Title: "Senior Backend Engineer", Years: 7,
				Projects: []string{"Ledger Rewrite", "Fraud Radar"}, TargetCompany: "Globex", TargetRole: "Staff Engineer"},
		},
		{
			name:   "years from the dates, labelled lines",
			resume: "Name: Li Lei\nAcme · Platform Engineer · 2021 – present\nProject: Atlas",
			job:    "Company: Initech\nRole: SRE",
			want: Facts{Name: "Li Lei", Company: "Acme", Title: "Platform Engineer", Years: 5,
				Projects: []string{"Atlas"}, TargetCompany: "Initech", TargetRole: "SRE"},
		},
		{
			name:   "chinese",
			resume: "姓名：王芳\n字节跳动，高级后端工程师（2020-至今）\n6年后端开发经验\n项目名称：支付网关重构",
			job:    "职位：技术专家\n公司：蚂蚁集团",
			want: Facts{Name: "王芳", Company: "字节跳动", Title: "高级后端工程师", Years: 6,
				Projects: []string{"支付网关重构"}, TargetCompany: "蚂蚁集团", TargetRole: "技术专家"},
		},
		{name: "nothing stated", resume: "I like building things.", want: Facts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ExtractFacts(tc.resume, tc.job, testNow)
			if got.Name != tc.want.Name || got.Company != tc.want.Company || got.Title != tc.want.Title ||
				got.Years != tc.want.Years || !slices.Equal(got.Projects, tc.want.Projects) ||
				got.TargetCompany != tc.want.TargetCompany || got.TargetRole != tc.want.TargetRole {
				t.Errorf("facts\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFactsFill(t *testing.T) {
	f := Facts{Name: "Jane Doe", Company: "Acme Payments", Title: "Senior Backend Engineer", Years: 7,
		Projects: []string{"Ledger Rewrite"}, TargetCompany: "Globex"}
	tpl := "I'm [name], a [job title] with about [X] years of experience, currently at [company]. " +
		"I led [project] and cut [metric] by [X]%. This position at [company] fits."
	want := "I'm Jane Doe, a Senior Backend Engineer with about 7 years of experience, currently at Acme Payments. " +
		"I led Ledger Rewrite and cut [metric] by [X]%. This position at Globex fits."
	if got := f.Fill(tpl); got != want {
		t.Errorf("Fill\n got %q\nwant %q", got, want)
	}
	zh := Facts{Company: "字节跳动", Title: "高级后端工程师", Years: 6, Projects: []string{"支付网关重构"}}
	if got := zh.Fill("我在[公司名]做[职位]，已经有[X]年了，主导了[项目名]，指标提升[X]%。"); got != "我在字节跳动做高级后端工程师，已经有6年了，主导了支付网关重构，指标提升[X]%。" {
		t.Errorf("Fill zh = %q", got)
	}
	if got := (Facts{}).Fill(tpl); got != tpl {
		t.Errorf("empty facts changed the text: %q", got)
	}
	if got := (Facts{Company: "A$1 [company]"}).Fill("at [Company]"); got != "at A$1 [company]" {
		t.Errorf("Fill with a tricky fact = %q", got)
	}
}

func TestContextBlockOrdersAndTrims(t *testing.T) {
	job := "About Globex\nWe build logistics software.\nRequirements\n- Deep experience with Kafka and event streaming\n" +
		"- Go in production\nBenefits:\nFree lunch"
	resume := "Jane Doe\nLikes hiking.\nRan the Kafka event streaming platform at Acme, 3M events/s\n" + strings.Repeat("Filler line about nothing much.\n", 200)
	req := Request{Question: "How did you scale the event pipeline?", Profile: Profile{Job: job, Resume: resume},
		Facts: Facts{Company: "Acme"}}
	block := contextBlock(req, false)
	if i, j := strings.Index(block, "Deep experience with Kafka"), strings.Index(block, "We build logistics"); i < 0 || j < 0 || i > j {
		t.Errorf("the job's requirements do not come first:\n%s", block)
	}
	if i, j := strings.Index(block, "Ran the Kafka"), strings.Index(block, "Likes hiking"); i < 0 || (j >= 0 && j < i) {
		t.Errorf("the relevant résumé line is not first:\n%s", block)
	}
	if !strings.Contains(block, "current company: Acme") {
		t.Errorf("facts missing:\n%s", block)
	}
	full, short := contextBlock(req, false), contextBlock(req, true)
	if len(short) >= len(full) {
		t.Errorf("short context (%d bytes) not shorter than full (%d)", len(short), len(full))
	}
	if n := len(full); n > 4*(jobTokensFull+resumeTokensFull)+400 {
		t.Errorf("full context has %d bytes: over its token budget", n)
	}
	if contextBlock(Request{Question: "Hi?"}, false) != "" {
		t.Error("an empty profile gave a context block")
	}
}

func TestStylePrompts(t *testing.T) {
	base := Request{Question: "Tell me about a conflict.", Previous: "Earlier answer text."}
	for _, style := range []string{StyleShorter, StyleDeeper, StyleRegenerate} {
		req := base
		req.Style = style
		sys, _ := promptText(t, req, false)
		if !strings.Contains(sys, "Earlier answer text.") || !strings.Contains(sys, "The candidate asked") {
			t.Errorf("%s: system prompt lacks the control and the previous answer:\n%s", style, sys)
		}
	}
	review := Request{Style: StyleReview, Question: "Q1 (L1): Why Go?\nAnswer: because.", Profile: Profile{Lang: "en"}}
	sys, user := promptText(t, review, false)
	if !strings.Contains(sys, "follow-up questions") || !strings.Contains(user, "Q1 (L1): Why Go?") {
		t.Errorf("review prompt:\n%s\n%s", sys, user)
	}
}

func TestTemplateTextByStyle(t *testing.T) {
	m := TemplateMatch{Answer: "full answer", Outline: []string{"one", "two"}}
	if got := templateText(m, StyleShorter); got != "• one\n• two" {
		t.Errorf("shorter = %q, want the outline", got)
	}
	for _, style := range []string{"", StyleDeeper, StyleRegenerate} {
		if got := templateText(m, style); got != "full answer" {
			t.Errorf("%q = %q, want the full template", style, got)
		}
	}
	if got := templateText(TemplateMatch{Answer: "full"}, StyleShorter); got != "full" {
		t.Errorf("shorter without an outline = %q", got)
	}
}
