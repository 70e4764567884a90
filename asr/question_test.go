package asr

import "testing"

func TestIsQuestion(t *testing.T) {
	tests := []struct {
		text, lang string
		want       bool
	}{
		{"What is your greatest weakness", "en", true},
		{"So, tell me about a time you handled a conflict at work.", "en", true},
		{"Okay so why do you want to join our team", "en", true},
		{"Walk me through your last project", "en", true},
		{"Is that clear?", "en", true},
		{"I see, thanks.", "en", false},
		{"Okay.", "en", false},
		{"Whatever works for you", "en", false},
		{"请介绍一下你自己", "zh", true},
		{"你为什么想加入我们公司", "zh", true},
		{"你最大的缺点是什么", "zh", true},
		{"你能加班吗。", "zh", true},
		{"好的，谢谢", "zh", false},
		{"嗯", "zh", false},
		{"", "en", false},
		{"tell me about yourself", "", true},
	}
	for _, tt := range tests {
		if got := IsQuestion(tt.text, tt.lang); got != tt.want {
			t.Errorf("IsQuestion(%q, %q) = %v, want %v", tt.text, tt.lang, got, tt.want)
		}
	}
}

// TestIsQuestionOnTestAudioTexts checks the texts spoken in testdata: every
// one is an interviewer's question.
func TestIsQuestionOnTestAudioTexts(t *testing.T) {
	for _, clip := range loadTruth(t) {
		for _, u := range clip.Utterances {
			if !IsQuestion(u.Text, clip.File[:2]) {
				t.Errorf("%s: %q not taken for a question", clip.File, u.Text)
			}
		}
	}
}
