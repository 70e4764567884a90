package doctext

import (
	"bytes"
	"math"
	"strings"

	"github.com/ledongthuc/pdf"
)

// maxPDFPages bounds the pages read: a résumé has two or three.
const maxPDFPages = 20

// readPDF reads the text layer of a PDF, one line per row of text, page
// after page. The PDF library panics on some malformed files; that is
// ErrDamaged here.
func readPDF(data []byte) (text string, err error) {
	defer func() {
		if recover() != nil {
			text, err = "", ErrDamaged
		}
	}()
	if !bytes.HasPrefix(bytes.TrimLeft(data, "\x00\t\n\r "), []byte("%PDF-")) {
		return "", ErrDamaged
	}
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if strings.Contains(err.Error(), "encrypt") || strings.Contains(err.Error(), "password") {
			return "", ErrLocked
		}
		return "", ErrDamaged
	}
	var b strings.Builder
	for i := 1; i <= min(r.NumPage(), maxPDFPages); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		writeRows(&b, p.Content().Text)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// writeRows writes glyphs in the content's order, starting a new line
// where the baseline moves by half a glyph's size or more, and a space
// where a glyph starts well right of the last one's end.
func writeRows(b *strings.Builder, glyphs []pdf.Text) {
	var lastY, lastEnd float64
	for i, g := range glyphs {
		size := max(g.FontSize, 1)
		switch {
		case i == 0:
		case math.Abs(g.Y-lastY) >= size/2:
			b.WriteByte('\n')
		case g.X-lastEnd > size*0.2 && !strings.HasPrefix(g.S, " "):
			b.WriteByte(' ')
		}
		b.WriteString(g.S)
		lastY, lastEnd = g.Y, g.X+g.W
	}
}
