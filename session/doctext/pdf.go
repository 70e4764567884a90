package doctext

import (
	"bytes"
	"sort"
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
		rows, err := p.GetTextByRow()
		if err != nil {
			return "", ErrDamaged
		}
		// Rows come by their y position; a PDF's y grows upwards.
		sort.SliceStable(rows, func(a, c int) bool { return rows[a].Position > rows[c].Position })
		for _, row := range rows {
			for _, w := range row.Content {
				b.WriteString(w.S)
			}
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}
