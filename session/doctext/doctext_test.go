package doctext

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/poise-dev/poise/session/doctext/doctexttest"
)

var resumeLines = []string{
	"Jane Doe",
	"Senior Backend Engineer, Acme Payments (2019 - Present)",
	"7 years of experience building payment systems in Go.",
	"Project: Ledger Rewrite (moved settlement to event sourcing)",
}

func TestReadFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"resume.pdf", doctexttest.PDF(resumeLines)},
		{"resume.docx", doctexttest.DOCX(resumeLines)},
		{"resume.txt", []byte(strings.Join(resumeLines, "\r\n"))},
		{"resume.md", []byte("\xef\xbb\xbf" + strings.Join(resumeLines, "\n\n\n"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := Read(tc.name, tc.data)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			lines := strings.Split(text, "\n")
			for _, l := range resumeLines {
				if !slices.Contains(lines, l) {
					t.Errorf("text lacks the line %q:\n%s", l, text)
				}
			}
			if strings.Contains(text, "\n\n\n") || strings.Contains(text, "\r") {
				t.Errorf("text keeps blank runs or CRs: %q", text)
			}
		})
	}
}

func TestReadRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"photo.png", []byte("\x89PNG"), ErrFormat},
		{"resume.pdf", []byte("%PDF-1.4\n1 0 obj garbage"), ErrDamaged},
		{"resume.pdf", []byte("not a pdf at all"), ErrDamaged},
		{"resume.docx", []byte("PK\x03\x04 truncated"), ErrDamaged},
		{"resume.txt", []byte("\xff\xfa\xfb"), ErrDamaged},
		{"resume.txt", []byte("  \n\t\n"), ErrNoText},
		{"blank.pdf", doctexttest.PDF(nil), ErrNoText},
		{"blank.docx", doctexttest.DOCX([]string{"", " "}), ErrNoText},
		{"cut.pdf", doctexttest.PDF(resumeLines)[:200], ErrDamaged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Read(tc.name, tc.data); !errors.Is(err, tc.want) {
				t.Fatalf("Read = %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	f.Add("a.pdf", doctexttest.PDF(resumeLines))
	f.Add("a.docx", doctexttest.DOCX(resumeLines))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		Read(name, data) // must not panic
	})
}
