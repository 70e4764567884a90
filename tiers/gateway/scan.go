package gateway

import (
	"bytes"
	"encoding/json"
)

// chunkScan is what the lean relay reads of one upstream chunk (see
// scanChunk): spans of the chunk's JSON, valid while the chunk is.
type chunkScan struct {
	model       []byte // the model's text (unescaped: it has no escapes); nil when absent or null
	fingerprint []byte // system_fingerprint's text, likewise
	choices     []byte // the choices array as sent; nil when absent or null
	n           int    // elements of choices: 0 or 1
	content     []byte // choice 0's delta.content, JSON-escaped as sent (see contentText)
	escaped     bool   // content has escapes
	finish      []byte // choice 0's finish_reason; nil when absent or null
}

// scanChunk reads the fields the relay needs from data, a valid JSON
// object (the upstream reader checked it), without decoding the rest. ok
// is false for any chunk the lean relay leaves to the full decoder: more
// than one choice, a choice other than index 0, tool or function calls, a
// refusal, a usage object, escapes in model, fingerprint or finish_reason,
// a value of an unexpected type, or an event of several lines (its raw
// choices could not pass as one data line).
func scanChunk(data []byte) (s chunkScan, ok bool) {
	if bytes.IndexByte(data, '\n') >= 0 || bytes.IndexByte(data, '\r') >= 0 {
		return s, false
	}
	var seen fieldSet
	ok = eachMember(data, func(key, val []byte) bool {
		if !seen.first(key, "model", "system_fingerprint", "usage", "choices") {
			return false
		}
		switch string(key) {
		case "model":
			s.model, ok = plainString(val)
		case "system_fingerprint":
			s.fingerprint, ok = plainString(val)
		case "usage":
			ok = isNull(val)
		case "choices":
			s.choices = val
			ok = s.scanChoices(val)
		default:
			ok = true
		}
		return ok
	})
	return s, ok
}

// scanChoices reads a choices array of at most one choice, of index 0.
func (s *chunkScan) scanChoices(val []byte) bool {
	if isNull(val) {
		s.choices = nil
		return true
	}
	if len(val) == 0 || val[0] != '[' {
		return false
	}
	return eachElement(val, func(elem []byte) bool {
		s.n++
		if s.n > 1 || len(elem) == 0 || elem[0] != '{' {
			return false
		}
		var seen fieldSet
		return eachMember(elem, func(key, v []byte) bool {
			if !seen.first(key, "index", "delta", "finish_reason") {
				return false
			}
			switch string(key) {
			case "index":
				return string(v) == "0"
			case "delta":
				return s.scanDelta(v)
			case "finish_reason":
				var ok bool
				s.finish, ok = plainString(v)
				return ok
			}
			return true // logprobs and anything else pass on unread
		})
	})
}

// scanDelta reads a delta of role and content (and a null or empty
// refusal, null tool calls); other fields pass on unread.
func (s *chunkScan) scanDelta(v []byte) bool {
	if isNull(v) {
		return true
	}
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	var seen fieldSet
	return eachMember(v, func(key, f []byte) bool {
		if !seen.first(key, "content", "refusal", "tool_calls", "function_call") {
			return false
		}
		switch string(key) {
		case "content":
			if isNull(f) {
				return true
			}
			if len(f) < 2 || f[0] != '"' {
				return false
			}
			s.content = f[1 : len(f)-1]
			s.escaped = bytes.IndexByte(s.content, '\\') >= 0
		case "refusal":
			return isNull(f) || string(f) == `""`
		case "tool_calls", "function_call":
			return isNull(f) || string(f) == "[]"
		}
		return true
	})
}

// fieldSet is the fields of one object that a scan has met.
type fieldSet uint8

// first reports whether key, of an object whose fields the scan reads
// are names, may be scanned as it is: false for one of names met before
// (a decoder takes the last; the scan would have read the first), and for
// a key that has escapes or matches one of names only when case is
// ignored (encoding/json and openai-go take those for the field).
func (f *fieldSet) first(key []byte, names ...string) bool {
	if bytes.IndexByte(key, '\\') >= 0 {
		return false
	}
	for i, name := range names {
		switch {
		case string(key) == name:
			if *f&(1<<i) != 0 {
				return false
			}
			*f |= 1 << i
			return true
		case bytes.EqualFold(key, []byte(name)):
			return false
		}
	}
	return true
}

// contentText is choice 0's content as text: the raw bytes when they hold
// no escapes (no copy), else decoded.
func (s *chunkScan) contentText() ([]byte, bool) {
	if !s.escaped {
		return s.content, true
	}
	var text string
	quoted := make([]byte, 0, len(s.content)+2)
	quoted = append(append(append(quoted, '"'), s.content...), '"')
	if json.Unmarshal(quoted, &text) != nil {
		return nil, false
	}
	return []byte(text), true
}

// plainString returns the text of val, a JSON string without escapes, or
// nil for null; ok is false for anything else.
func plainString(val []byte) ([]byte, bool) {
	if isNull(val) {
		return nil, true
	}
	if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 {
		return nil, false
	}
	return val[1 : len(val)-1], true
}

func isNull(val []byte) bool { return string(val) == "null" }

// eachMember calls f with each key (its raw text, quotes removed) and
// value (its JSON) of obj, a valid JSON object, until f returns false;
// it reports false when f did or obj is not an object.
func eachMember(obj []byte, f func(key, val []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return false
		}
		end := skipString(obj, i)
		if end < 0 {
			return false
		}
		key := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		if end < 0 || !f(key, obj[start:end]) {
			return false
		}
		i = skipSpace(obj, end)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(obj, i+1)
		default:
			return false
		}
	}
	return false
}

// eachElement calls f with each element of arr, a valid JSON array, until
// f returns false; it reports false when f did.
func eachElement(arr []byte, f func(elem []byte) bool) bool {
	i := skipSpace(arr, 1)
	if i < len(arr) && arr[i] == ']' {
		return true
	}
	for i < len(arr) {
		end := skipValue(arr, i)
		if end < 0 || !f(arr[i:end]) {
			return false
		}
		i = skipSpace(arr, end)
		if i >= len(arr) {
			return false
		}
		switch arr[i] {
		case ']':
			return true
		case ',':
			i = skipSpace(arr, i+1)
		default:
			return false
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] (a
// quote), or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value that starts at b[i],
// or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i // a number, true, false or null
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
