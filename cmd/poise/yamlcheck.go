package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// keyLines maps each key path of a YAML document ("l1.vendors[0].model") to
// its line, so errors can name both.
type keyLines map[string]int

// checkKeys walks a YAML node against the struct type it will decode into
// and returns an error naming the first unknown key and its line. It also
// records the line of every key it visits, and lets the plain scalars of
// env (those that held a ${VAR}) be read as what the field takes: a string
// field gets the value as it is, a number or a bool its YAML reading.
func checkKeys(n *yaml.Node, t reflect.Type, path string, lines keyLines, env map[*yaml.Node]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return checkKeys(n.Content[0], t, path, lines, env)
	}
	if n.Kind == yaml.ScalarNode && env[n] && n.Style&^yaml.FlowStyle == 0 && t.Kind() != reflect.String {
		n.Tag = "" // resolved again from the value
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the type error
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			lines[p] = k.Line
			ft, ok := fields[k.Value]
			if !ok {
				return fmt.Errorf("line %d: unknown key %q", k.Line, p)
			}
			if err := checkKeys(v, ft, p, lines, env); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			lines[p] = v.Line
			if err := checkKeys(v, t.Elem(), p, lines, env); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := join(path, n.Content[i].Value)
			lines[p] = n.Content[i].Line
			if err := checkKeys(n.Content[i+1], t.Elem(), p, lines, env); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlFields returns a struct's YAML keys and their types, with inline
// structs flattened.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type)
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || !f.IsExported():
		case strings.Contains(opts, "inline"):
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
		case name == "":
			out[strings.ToLower(f.Name)] = f.Type
		default:
			out[name] = f.Type
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var lineRE = regexp.MustCompile(`line (\d+): `)

// describeDecodeError rewrites a yaml.v3 type error so that each line it
// names also names the key on that line. yaml.v3 shortens a quoted value
// to a number of bytes, which may cut a character: its remains are
// dropped, so that the message is text.
func describeDecodeError(err error, lines keyLines) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return errors.New(strings.ToValidUTF8(err.Error(), ""))
	}
	byLine := make(map[int]string, len(lines))
	for k, l := range lines {
		if cur, ok := byLine[l]; !ok || len(k) > len(cur) {
			byLine[l] = k
		}
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := lineRE.FindStringSubmatch(e); m != nil {
			l, _ := strconv.Atoi(m[1])
			if key, ok := byLine[l]; ok {
				e = strings.Replace(e, m[0], fmt.Sprintf("line %d: key %q: ", l, key), 1)
			}
		}
		msgs = append(msgs, strings.ToValidUTF8(e, ""))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// locate prefixes each validation error with the line of the key it names,
// when the document has that key. Validators name keys by their YAML path,
// either whole ("l1.mode") or within their block ("silence_ms" of asr).
func locate(err error, lines keyLines) error {
	if err == nil || len(lines) == 0 {
		return err
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range joined.Unwrap() {
			errs = append(errs, locate(e, lines))
		}
		return errors.Join(errs...)
	}
	best, bestLen := 0, 0
	for _, word := range strings.Fields(err.Error()) {
		if l, n := lineOfKey(strings.TrimRight(word, ":,"), lines); n > bestLen {
			best, bestLen = l, n
		}
	}
	if bestLen == 0 {
		return err
	}
	return fmt.Errorf("line %d: %w", best, err)
}

// lineOfKey finds key, or the nearest enclosing key present, in lines;
// key may be relative to a block ("silence_ms" for "asr.silence_ms"). It
// returns the line and the length of the key found (0 when none).
func lineOfKey(key string, lines keyLines) (line, n int) {
	for k := key; k != ""; {
		if l, ok := lines[k]; ok {
			return l, len(k)
		}
		for full, l := range lines {
			if strings.HasSuffix(full, "."+k) {
				return l, len(full)
			}
		}
		i := strings.LastIndexAny(k, ".[")
		if i <= 0 {
			break
		}
		k = k[:i]
	}
	return 0, 0
}

// locateSyntaxError makes a YAML syntax error name its line. yaml.v3 leaves
// the line out for a problem on the first line, for bytes YAML does not
// allow (invalid UTF-8, control characters) and at the end of the
// document; those get the line of the first such byte, the last line, or
// line 1.
func locateSyntaxError(err error, doc []byte) error {
	if lineRE.MatchString(err.Error()) {
		return err
	}
	at := 0
	if i := firstBadByte(doc); i >= 0 {
		at = i
	} else if strings.Contains(err.Error(), "end of stream") && len(doc) > 0 {
		at = len(doc) - 1
	}
	return fmt.Errorf("line %d: %w", lineAt(doc, at), err)
}

// lineAt is the line of doc's byte i, counted as YAML does: CR LF, CR,
// LF, NEL, LS and PS each end a line.
func lineAt(doc []byte, i int) int {
	s := string(doc[:i])
	return 1 + strings.Count(s, "\n") + strings.Count(s, "\r") - strings.Count(s, "\r\n") +
		strings.Count(s, "\u0085") + strings.Count(s, "\u2028") + strings.Count(s, "\u2029")
}

// firstBadByte is the offset of the first byte that is not YAML text
// (invalid UTF-8, or a control character other than tab, LF and CR), or -1.
func firstBadByte(doc []byte) int {
	for i := 0; i < len(doc); {
		r, n := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return i
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f:
			return i
		}
		i += n
	}
	return -1
}

// finiteNumbers reports the first float field of v (a config struct) that
// is NaN or infinite, by its YAML key path: YAML reads .nan and .inf, and
// no setting takes them.
func finiteNumbers(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: must be a finite number, got %g", path, f)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			p := path
			switch {
			case name == "-" || !f.IsExported():
				continue
			case strings.Contains(opts, "inline"):
			case name == "":
				p = join(path, strings.ToLower(f.Name))
			default:
				p = join(path, name)
			}
			if err := finiteNumbers(v.Field(i), p); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := finiteNumbers(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := finiteNumbers(it.Value(), join(path, fmt.Sprint(it.Key()))); err != nil {
				return err
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return finiteNumbers(v.Elem(), path)
		}
	}
	return nil
}

// Private use characters stand in for ${VAR} while a document is parsed.
const (
	firstPrivateUse = 0xE000
	lastPrivateUse  = 0xF8FF
)

// envMarks holds the values of a document's ${VAR} references while it is
// parsed. markEnv replaces each reference by a mark, open + its index +
// close, that YAML reads as part of a word in any context (block, flow,
// quoted); expand puts the values into the parsed scalars. So a value is
// taken as it is, never read as YAML: a secret with " #", a quote, a
// newline or a leading "*" stays that secret, rather than being cut at a
// comment, breaking the document or naming an alias.
type envMarks struct {
	open, close rune
	values      []string
}

// markEnv returns raw with its references marked, and their values.
func markEnv(raw []byte, getenv func(string) string) ([]byte, *envMarks, error) {
	m := &envMarks{}
	if !envRE.Match(raw) {
		return raw, m, nil
	}
	used := map[rune]bool{}
	for _, r := range string(raw) {
		used[r] = true
	}
	for r := rune(firstPrivateUse); r < lastPrivateUse && m.open == 0; r += 2 {
		if !used[r] && !used[r+1] {
			m.open, m.close = r, r+1
		}
	}
	if m.open == 0 {
		return nil, nil, fmt.Errorf("line 1: ${VAR} needs a character of U+%04X..U+%04X that the document does not use", firstPrivateUse, lastPrivateUse)
	}
	doc := envRE.ReplaceAllFunc(raw, func(ref []byte) []byte {
		m.values = append(m.values, getenv(string(ref[2:len(ref)-1])))
		return []byte(string(m.open) + strconv.Itoa(len(m.values)-1) + string(m.close))
	})
	return doc, m, nil
}

// expand puts the values into the scalars of root that hold marks and
// returns those scalars.
func (m *envMarks) expand(root *yaml.Node) map[*yaml.Node]bool {
	out := map[*yaml.Node]bool{}
	if len(m.values) == 0 {
		return out
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && strings.ContainsRune(n.Value, m.open) {
			n.Value = m.replace(n.Value)
			out[n] = true
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	return out
}

// replace puts the values in place of the marks of s. A mark that YAML
// made from an escape ("\uE000") and that names no value stays.
func (m *envMarks) replace(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexRune(s, m.open)
		if i < 0 {
			break
		}
		rest := s[i+utf8.RuneLen(m.open):]
		j := strings.IndexRune(rest, m.close)
		n, err := strconv.Atoi(rest[:max(j, 0)])
		if j < 0 || err != nil || n < 0 || n >= len(m.values) || strings.ContainsAny(rest[:j], "+-") {
			b.WriteString(s[:i+utf8.RuneLen(m.open)])
			s = rest
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(m.values[n])
		s = rest[j+utf8.RuneLen(m.close):]
	}
	b.WriteString(s)
	return b.String()
}

// utf8Doc returns doc in UTF-8. YAML may also come in UTF-16 with a byte
// order mark (as Windows editors save it), where no ${VAR} would be found
// and no line counted; such a document is converted (an odd last byte
// stays, for the parser to refuse).
func utf8Doc(doc []byte) []byte {
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(doc, []byte{0xFE, 0xFF}):
		order = binary.BigEndian
	case bytes.HasPrefix(doc, []byte{0xFF, 0xFE}):
		order = binary.LittleEndian
	default:
		return doc
	}
	units := make([]uint16, 0, len(doc)/2)
	for i := 2; i+1 < len(doc); i += 2 {
		units = append(units, order.Uint16(doc[i:]))
	}
	out := []byte(string(utf16.Decode(units)))
	if len(doc)%2 == 1 {
		out = append(out, doc[len(doc)-1])
	}
	return out
}
