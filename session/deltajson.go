package session

import (
	"strconv"
	"unicode/utf8"
)

// appendJSON appends m as json.Marshal writes it, byte for byte
// (FuzzDeltaJSON compares them), without its reflection: answer deltas
// are most of what sessions send, and their encoding was about 3% of
// poise's CPU at 1,000 sessions.
func (m *answerDeltaMsg) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, m.Type)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, m.Seq, 10)
	b = append(b, `,"id":`...)
	b = appendJSONString(b, m.ID)
	b = append(b, `,"text":`...)
	b = appendJSONString(b, m.Text)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string the way encoding/json does
// with its default HTML escaping: ", \ and the control characters
// escaped, <, > and & as \u003c, \u003e and \u0026, U+2028 and U+2029
// escaped, and each invalid UTF-8 byte as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
