package sim

import (
	"strings"
	"testing"
)

func TestPieces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{"Hello big world", []string{"Hello", " big", " world"}},
		{"  two  spaces ", []string{"  two", "  spaces", " "}},
		{"你好世界啊", []string{"你好", "世界", "啊"}},
		{"情境：我们 ok", []string{"情境", "：我", "们", " ok"}},
		{"a你b", []string{"a", "你", "b"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := pieces(tt.text); strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("pieces(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestContinuation(t *testing.T) {
	t.Parallel()
	reply := "one two three four"
	for prefill, want := range map[string]string{
		"":                         "one two three four",
		"one two":                  " three four",
		"uno dos":                  " three four", // another model's words: counted, not compared
		"one two three four":       "",
		"one two three four five!": "",
	} {
		if got := strings.Join(continuation(reply, prefill), ""); got != want {
			t.Errorf("continuation(%q) = %q, want %q", prefill, got, want)
		}
	}
}

// FuzzPieces checks the two properties streaming and continuation rely
// on: the pieces join back to the text, and a prefix made of whole pieces
// splits into the same pieces.
func FuzzPieces(f *testing.F) {
	f.Add("[simulated m] Situation: on a recent project", 3)
	f.Add("[simulated m] 情境：最近的项目里，我们团队 ok", 4)
	f.Add(" \t你 a  b", 2)
	f.Fuzz(func(t *testing.T, text string, k int) {
		ps := pieces(text)
		if strings.Join(ps, "") != text {
			t.Fatalf("pieces(%q) = %q do not join back", text, ps)
		}
		for _, p := range ps {
			if p == "" {
				t.Fatalf("empty piece in %q", ps)
			}
		}
		if len(ps) == 0 {
			return
		}
		k = min(max(k, 0), len(ps))
		prefix := strings.Join(ps[:k], "")
		if got := pieces(prefix); strings.Join(got, "|") != strings.Join(ps[:k], "|") || len(got) != k {
			t.Fatalf("pieces of prefix %q = %q, want %q", prefix, got, ps[:k])
		}
	})
}

func TestDefaultReplyIsDeterministicAndMarked(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"", "Why?", "Tell me about your biggest mistake.", "为什么离职？"} {
		a, b := defaultReply("m", q), defaultReply("m", q)
		if a != b || !strings.HasPrefix(a, "[simulated m] ") {
			t.Errorf("defaultReply(%q) = %q then %q", q, a, b)
		}
	}
}
