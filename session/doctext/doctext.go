package doctext

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Errors Read returns; each says in plain words why a file gives no text.
var (
	ErrFormat  = errors.New("only PDF, DOCX, TXT and Markdown files can be read")
	ErrDamaged = errors.New("the file is damaged or not what its name says")
	ErrNoText  = errors.New("the file has no readable text (a scanned image?)")
	ErrLocked  = errors.New("the file is password-protected")
)

// Read returns the text of the file called name (its extension picks the
// format: .pdf, .docx, .txt, .md, .markdown), with runs of blank lines
// squeezed and control characters other than tab and newline removed. A
// file that cannot be read gives one of the errors above, wrapped with
// the format. Read never panics: a malformed PDF that makes the PDF
// library panic is ErrDamaged.
func Read(name string, data []byte) (text string, err error) {
	format := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	var raw string
	switch format {
	case "pdf":
		raw, err = readPDF(data)
	case "docx":
		raw, err = readDOCX(data)
	case "txt", "md", "markdown", "text":
		raw, err = readPlain(data)
	default:
		return "", ErrFormat
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", format, err)
	}
	text = clean(raw)
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%s: %w", format, ErrNoText)
	}
	return text, nil
}

// readPlain accepts UTF-8 (with or without a byte order mark) and UTF-16
// with a byte order mark, as Windows editors save it.
func readPlain(data []byte) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xef, 0xbb, 0xbf}):
		data = data[3:]
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}), bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		return utf16Text(data), nil
	}
	if !utf8.Valid(data) {
		return "", ErrDamaged
	}
	return string(data), nil
}

func utf16Text(data []byte) string {
	big := data[0] == 0xfe
	var b strings.Builder
	for i := 2; i+1 < len(data); i += 2 {
		u := uint16(data[i])<<8 | uint16(data[i+1])
		if !big {
			u = uint16(data[i+1])<<8 | uint16(data[i])
		}
		b.WriteRune(rune(u)) // surrogates become U+FFFD: good enough for a résumé
	}
	return b.String()
}

// clean drops control characters (but tab and newline), trims each line's
// end and keeps at most one blank line in a row.
func clean(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var out []string
	blank := false
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimRightFunc(strings.Map(func(r rune) rune {
			if r == '\t' || (!unicode.IsControl(r) && r != utf8.RuneError && r != '\u00ad') {
				return r
			}
			return -1
		}, line), unicode.IsSpace)
		if line == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
