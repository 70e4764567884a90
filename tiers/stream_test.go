package tiers

import (
	"testing"

	"github.com/poise-dev/poise/tiers/upstream"
)

// TestTokensPassOnWhatOneReadBrought: the deltas taken between two
// Flushes reach onToken as one piece, the usage chunk and what follows the
// finish add nothing, and a caller that wants no more stops the stream.
func TestTokensPassOnWhatOneReadBrought(t *testing.T) {
	var pieces []string
	want := true
	tk := &tokens{onToken: func(s string) bool { pieces = append(pieces, s); return want }}
	for _, d := range []upstream.Delta{{Choices: 1, Content: "Hel"}, {Choices: 1, Content: "lo"}, {Choices: 1}} {
		if _, _, err := tk.Delta(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := tk.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := tk.Flush(); err != nil { // nothing new: no empty piece
		t.Fatal(err)
	}
	want = false
	if _, finish, _ := tk.Delta(upstream.Delta{Choices: 1, Content: " world", Finish: "stop"}); finish != "stop" {
		t.Fatalf("finish %q", finish)
	}
	tk.Delta(upstream.Delta{PromptTokens: 3, CompletionTokens: 2})
	err := tk.Flush()
	if e, ok := err.(*upstream.Error); !ok || e.Class != upstream.ClassCanceled {
		t.Errorf("Flush to a caller that wants no more: %v, want ClassCanceled", err)
	}
	if len(pieces) != 2 || pieces[0] != "Hello" || pieces[1] != " world" || tk.text.String() != "Hello world" {
		t.Errorf("pieces %q, text %q; want [Hello, \" world\"] and Hello world", pieces, tk.text.String())
	}
	if tk.usage == nil || tk.usage.completion != 2 {
		t.Errorf("usage %+v, want the usage chunk's", tk.usage)
	}
}
