package recall

import "testing"

func TestAsksCandidate(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"What is your greatest weakness?", true},
		{"so why do you want to leave", true},
		{"OK great. Tell me about a time you failed.", true},
		{"have you ever managed people", true},
		{"讲讲你经历过的一次失败吧。", true},
		{"你为什么想离职", true},
		{"Your resume mentions Kubernetes, that's what our platform runs on.", false},
		{"We're a team of eight engineers.", false},
		{"我们公司的文化比较开放。", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := asksCandidate(tt.text); got != tt.want {
			t.Errorf("asksCandidate(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestAsksKnowledge(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"Explain how a B-tree index works.", true},
		{"What is dependency injection?", true},
		{"Can you explain the CAP theorem?", true},
		{"How would you design a rate limiter?", true},
		{"What's the difference between a process and a thread?", true},
		{"什么是死锁？", true},
		{"HashMap的底层实现原理是什么？", true},
		{"设计一个短链接系统。", true},
		{"Can you explain the gap in your resume?", false},
		{"How would you explain something technical to someone without a tech background?", false},
		{"What is your approach to testing?", false},
		{"How do you handle tech debt?", false},
		{"你是怎么保证代码质量的？", false},
		{"上家公司为什么走的？", false},
	}
	for _, tt := range tests {
		if got := asksKnowledge(tt.text); got != tt.want {
			t.Errorf("asksKnowledge(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestBankAsks checks the question detectors against every wording of the
// real bank: each asks the candidate something and none reads as a
// knowledge question, or recall would refuse its own templates.
func TestBankAsks(t *testing.T) {
	b := realBank(t)
	for _, q := range b.Questions {
		for _, lang := range []string{LangZH, LangEN} {
			for _, w := range append([]string{q.Wording(lang)}, q.Paraphrases.In(lang)...) {
				if asksKnowledge(w) {
					t.Errorf("%s: %q reads as a knowledge question", q.ID, w)
				}
				if !asksCandidate(w) {
					t.Errorf("%s: %q does not read as a question", q.ID, w)
				}
			}
		}
	}
}
