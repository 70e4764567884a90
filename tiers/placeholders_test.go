package tiers

import "testing"

func TestFillPlaceholders(t *testing.T) {
	resume := "Senior backend engineer, 8 years.\nAcme Pay, 2019–2024: led the ledger rewrite.\nGlobex (2015-2019) payments API\nProject: Ledger v2, 40% fewer incidents"
	full := Profile{Role: "backend engineer", Resume: resume}
	tests := []struct {
		text, lang string
		p          Profile
		want       string
	}{
		{"At [company] I led [project] as a [role].", "en", full, "At Acme Pay I led Ledger v2 as a backend engineer."},
		{"Before that, at [previous company], I cut latency by [X]%.", "en", full, "Before that, at Globex, I cut latency by [X]%."},
		{"At [company] I led [project].", "en", Profile{}, "At my company I led one of my projects."},
		{"在[公司名]负责[项目名]，应聘[岗位]。", "zh", Profile{}, "在我现在的公司负责我负责的一个项目，应聘这个岗位。"},
		{"在[公司名]工作了[年限]年。", "zh", Profile{Resume: "字节跳动（2020-至今）\n5年经验"}, "在字节跳动工作了5年。"},
		{"Over [years] years, [X] and [Y].", "en", Profile{}, "Over [years] years, [X] and [Y]."},
		{"No placeholder.", "en", full, "No placeholder."},
	}
	for _, tt := range tests {
		if got := FillPlaceholders(tt.text, tt.p, tt.lang); got != tt.want {
			t.Errorf("FillPlaceholders(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func FuzzFillPlaceholders(f *testing.F) {
	f.Add("At [company] [X]", "Acme, 2020\nProject: x")
	f.Add("[[[]]] [", "（2020")
	f.Fuzz(func(t *testing.T, text, resume string) {
		out := FillPlaceholders(text, Profile{Resume: resume}, "en")
		if text != "" && out == "" {
			t.Fatalf("filled %q to nothing", text)
		}
	})
}
