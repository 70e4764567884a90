package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
)

// minRedactedKey is the shortest API key cut out of provider errors:
// shorter ones ("demo", "k") are placeholders, and replacing them would
// garble the message for nothing.
const minRedactedKey = 8 // bytes

// keyFragment is the shortest piece of a key that is cut out wherever it
// appears: a key split across strings, or half of it, is still a leak.
const keyFragment = 8 // bytes

// redactedKey stands for an API key cut out of a provider's error.
const redactedKey = "[api key]"

// withoutKey returns e with key cut out of the provider's message, code
// and the underlying error's text. Some OpenAI-compatible servers echo the
// key they got ("Incorrect API key provided: sk-…"), and these errors are
// logged and, by the gateway, passed on to its clients. HTTP error bodies
// and error events have every string cleaned already (cleanErrorJSON);
// this catches the rest, such as transport errors.
func withoutKey(e *Error, key string) *Error {
	if e == nil || len(key) < minRedactedKey {
		return e
	}
	msg, code := RedactKey(e.Message, key), RedactKey(e.Code, key)
	inErr := e.Err != nil && RedactKey(e.Err.Error(), key) != e.Err.Error()
	if !inErr && msg == e.Message && code == e.Code {
		return e
	}
	r := *e
	r.Message, r.Code = msg, code
	if inErr {
		r.Err = redactedError{err: e.Err, key: key}
	}
	return &r
}

// redactedError is an error whose text has an API key cut out; errors.Is
// and errors.As still reach the original.
type redactedError struct {
	err error
	key string
}

func (r redactedError) Error() string { return RedactKey(r.err.Error(), r.key) }
func (r redactedError) Unwrap() error { return r.err }

// RedactKey returns s with key cut out in the spellings a reader could
// put back together: the key itself, any piece of it of keyFragment bytes
// or more, and the same after URL-decoding (the whole string goes then).
// Keys shorter than minRedactedKey are left alone.
func RedactKey(s, key string) string {
	if len(key) < minRedactedKey || s == "" {
		return s
	}
	if strings.Contains(s, "%") {
		if u, err := url.PathUnescape(s); err == nil && u != s && redactMarked(u, keyMarks(u, key)) != u {
			return redactedKey
		}
	}
	return redactMarked(s, keyMarks(s, key))
}

// keyMarks marks the bytes of s covered by a piece of key of keyFragment
// bytes or more (the whole key when it is shorter). nil: none.
func keyMarks(s, key string) []bool {
	frag := min(keyFragment, len(key))
	var marks []bool
	for i := 0; i+frag <= len(key); i++ {
		piece := key[i : i+frag]
		for off := 0; ; {
			j := strings.Index(s[off:], piece)
			if j < 0 {
				break
			}
			if marks == nil {
				marks = make([]bool, len(s))
			}
			for k := off + j; k < off+j+frag; k++ {
				marks[k] = true
			}
			off += j + 1
		}
	}
	return marks
}

// redactMarked replaces each run of marked bytes of s by redactedKey.
func redactMarked(s string, marks []bool) string {
	if marks == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if !marks[i] {
			b.WriteByte(s[i])
			continue
		}
		b.WriteString(redactedKey)
		for i+1 < len(s) && marks[i+1] {
			i++
		}
	}
	return b.String()
}

// cleanErrorJSON returns the JSON document data with key cut out of the
// decoded value of every string, keys and values at any depth ("\u0073k-…"
// is the key too), and out of strings whose joined text holds a piece of
// it (a key split across strings). Data that is not JSON is cleaned as
// text. Keys shorter than minRedactedKey are left alone.
func cleanErrorJSON(data []byte, key string) []byte {
	if len(key) < minRedactedKey {
		return data
	}
	toks, err := jsonTokens(data)
	if err != nil {
		return []byte(RedactKey(string(data), key))
	}
	// The strings in document order, joined, so that a key split across
	// neighbouring strings is found; each string then loses its part.
	var joined strings.Builder
	var spans [][2]int
	for _, t := range toks {
		if s, ok := t.(string); ok {
			spans = append(spans, [2]int{joined.Len(), joined.Len() + len(s)})
			joined.WriteString(s)
		}
	}
	marks := keyMarks(joined.String(), key)
	i := 0
	for n, t := range toks {
		s, ok := t.(string)
		if !ok {
			continue
		}
		sp := spans[i]
		i++
		clean := s
		if marks != nil {
			clean = redactMarked(s, marks[sp[0]:sp[1]])
		}
		toks[n] = RedactKey(clean, key) // URL-encoded spellings
	}
	return encodeTokens(toks)
}

// jsonTokens reads one JSON document as tokens (numbers kept as written).
func jsonTokens(data []byte) ([]json.Token, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var toks []json.Token
	for {
		t, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
	}
	if len(toks) == 0 || dec.More() {
		return nil, errors.New("upstream: not one JSON document")
	}
	return toks, nil
}

// encodeTokens writes tokens of jsonTokens back as JSON.
func encodeTokens(toks []json.Token) []byte {
	type frame struct {
		obj bool
		n   int // values (and keys) written
	}
	var (
		b     bytes.Buffer
		stack []frame
	)
	for _, t := range toks {
		if d, ok := t.(json.Delim); ok && (d == '}' || d == ']') {
			b.WriteByte(byte(d))
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].n++
			}
			continue
		}
		if len(stack) > 0 {
			f := stack[len(stack)-1]
			switch {
			case f.obj && f.n%2 == 1:
				b.WriteByte(':')
			case f.n > 0:
				b.WriteByte(',')
			}
		}
		if d, ok := t.(json.Delim); ok {
			b.WriteByte(byte(d))
			stack = append(stack, frame{obj: d == '{'})
			continue
		}
		v, _ := json.Marshal(t) // cannot fail: strings, json.Number, bools, nil
		b.Write(v)
		if len(stack) > 0 {
			stack[len(stack)-1].n++
		}
	}
	return b.Bytes()
}
