package tiers

import (
	"encoding/json"
	"strings"
	"testing"
)

// promptText returns the contents of the system and user messages.
func promptText(t *testing.T, req Request, short bool) (system, user string) {
	t.Helper()
	msgs := BuildPrompt(req, short)
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want system + user", len(msgs))
	}
	var parsed []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed[0].Role != "system" || parsed[1].Role != "user" {
		t.Fatalf("roles %q, %q", parsed[0].Role, parsed[1].Role)
	}
	return parsed[0].Content, parsed[1].Content
}

func TestBuildPrompt(t *testing.T) {
	req := Request{
		Question:   "How do you handle a missed deadline?",
		Transcript: "Interviewer: thanks for coming. Let's talk about delivery.",
		Profile:    Profile{Lang: "zh", Seniority: "senior", Role: "backend engineer", Resume: "Led payments at Acme."},
	}
	sys, user := promptText(t, req, false)
	for _, want := range []string{"senior", "backend engineer", "STAR", "120 words", "English", "Led payments at Acme."} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	for _, want := range []string{"Let's talk about delivery.", "How do you handle a missed deadline?"} {
		if !strings.Contains(user, want) {
			t.Errorf("user prompt lacks %q:\n%s", want, user)
		}
	}

	// The question's language wins over the profile's.
	req.Question = "你如何处理错过的截止日期？"
	sys, user = promptText(t, req, false)
	if !strings.Contains(sys, "200 Chinese characters") || !strings.Contains(user, "面试官的问题") {
		t.Errorf("a Chinese question did not get a Chinese prompt:\n%s\n%s", sys, user)
	}
}

func TestBuildPromptShortIsShorter(t *testing.T) {
	req := Request{
		Question:   "Tell me about yourself.",
		Transcript: strings.Repeat("older words ", 500) + "the newest words",
		Profile:    Profile{Resume: strings.Repeat("resume line ", 500)},
	}
	fullSys, fullUser := promptText(t, req, false)
	shortSys, shortUser := promptText(t, req, true)
	if len(shortSys) >= len(fullSys) || len(shortUser) >= len(fullUser) {
		t.Fatalf("short prompt not shorter: system %d vs %d, user %d vs %d", len(shortSys), len(fullSys), len(shortUser), len(fullUser))
	}
	if !strings.Contains(shortUser, "the newest words") {
		t.Fatal("clipping the transcript dropped its newest part")
	}
	if n := len([]rune(shortUser)); n > transcriptRunesShort+questionRunes+100 {
		t.Fatalf("short user prompt has %d runes", n)
	}
}
