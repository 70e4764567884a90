package doctext

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// maxDocumentXML bounds word/document.xml once inflated: a zip bomb stops
// there.
const maxDocumentXML = 8 << 20

// readDOCX reads the body of a Word document: word/document.xml in the
// zip, one line per paragraph (w:p), tabs and breaks kept.
func readDOCX(data []byte) (string, error) {
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", ErrDamaged
	}
	for _, f := range z.File {
		if f.Name == "EncryptionInfo" || f.Name == "EncryptedPackage" {
			return "", ErrLocked
		}
	}
	f, err := z.Open("word/document.xml")
	if err != nil {
		return "", ErrDamaged
	}
	defer f.Close()
	return paragraphs(io.LimitReader(f, maxDocumentXML))
}

// paragraphs walks WordprocessingML: the text of w:t, w:tab as a tab,
// w:br and w:cr as a newline, and a newline after every w:p.
func paragraphs(r io.Reader) (string, error) {
	dec := xml.NewDecoder(r)
	var b strings.Builder
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", ErrDamaged
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				b.WriteByte('\t')
			case "br", "cr":
				b.WriteByte('\n')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				b.WriteByte('\n')
			}
		case xml.CharData:
			if inText {
				b.Write(t)
			}
		}
	}
}
