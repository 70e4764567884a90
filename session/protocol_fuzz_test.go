package session

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/poise-dev/poise/tiers"
)

// FuzzDecodeInbound feeds arbitrary client text messages to the decoder.
// Properties: no input panics it; a refusal carries a snake_case code and a
// non-empty, valid UTF-8 message that encodes as an error message; an
// accepted message was valid UTF-8 within the size limit, has a known type
// and meets that type's validation (profile lang zh|en with defaults
// filled in, every field within its size and charset, no control
// characters in free text, audio_start at 16 kHz pcm_s16le); and an accepted message encodes back
// to JSON that decodes, accepted, to the same message.
func FuzzDecodeInbound(f *testing.F) {
	for _, seed := range []string{
		`{"type":"hello","v":1,"profile":{"lang":"zh","seniority":"senior"}}`,
		`{"type":"hello","v":1,"resume":{"session_id":"a","token":"b","last_seq":3}}`,
		`{"type":"hello","v":1,"token":"t","auto_answer":true,"profile":{"role":"SRE","resume":"ten years"}}`,
		`{"type":"hello","v":2}`,
		`{"type":"question","id":"q1","text":"为什么？"}`,
		`{"type":"question","id":"q1","text":"\ud800"}`,
		`{"type":"audio_start","sample_rate":16000,"encoding":"pcm_s16le","source":"tab"}`,
		`{"type":"audio_start","sample_rate":8000,"encoding":"opus"}`,
		`{"type":"ping","t":{"x":[1, 2],"h":"<&>"}}`, `{"type":"profile","profile":{"lang":"fr"}}`,
		`{"type":"reset_ai"}`, `{"type":"audio_stop"}`,
		`{"type":"image","format":"png","part":0,"parts":1,"data":"iVBORw0KGgo="}`, `{"TYPE":"ping","t":1e400}`,
		`{"type":7}`, `[]`, `null`, `{"type":"question","text":null}`, "{\"type\":\"question\",\"text\":\"\xff\"}",
		`{"type":"hello","v":` + strings.Repeat("1", 5000) + `}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeInbound(data)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if len(data) > maxTextMessage || !utf8.Valid(data) {
			t.Fatalf("accepted a message of %d bytes, UTF-8 %v", len(data), utf8.Valid(data))
		}
		checkAccepted(t, m)
		// Round trip: what the decoder accepted, encoded again, is accepted
		// as the same message.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			t.Fatalf("accepted message does not encode: %v", err)
		}
		m2, err2 := decodeInbound(buf.Bytes())
		if err2 != nil {
			t.Fatalf("accepted %q, but refused its re-encoding %s: %v", data, buf.Bytes(), err2)
		}
		m.T, m2.T = normalRaw(t, m.T), normalRaw(t, m2.T)
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the message:\n first %+v\nsecond %+v", m, m2)
		}
	})
}

// codeRE is the form of every error code: lower snake case.
var codeRE = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// maxRefusalMessage bounds an error message: a short reason and, at most,
// a clipped quote of the client's value.
const maxRefusalMessage = 400 // bytes

func checkRefusal(t *testing.T, err *protocolError) {
	t.Helper()
	if !codeRE.MatchString(err.Code) {
		t.Fatalf("refusal with a malformed code %q (%s)", err.Code, err.Message)
	}
	if err.Message == "" || !utf8.ValidString(err.Message) {
		t.Fatalf("refusal %s without a readable message: %q", err.Code, err.Message)
	}
	if len(err.Message) > maxRefusalMessage {
		t.Fatalf("refusal %s with a %d-byte message: an error must not echo the client's input at length", err.Code, len(err.Message))
	}
	b, jerr := json.Marshal(errorMsg{head: head{Type: "error"}, Code: err.Code, Message: err.Message})
	if jerr != nil || !json.Valid(b) {
		t.Fatalf("refusal does not encode: %v", jerr)
	}
}

func checkAccepted(t *testing.T, m inbound) {
	t.Helper()
	switch m.Type {
	case typeHello:
		if m.V != ProtocolVersion {
			t.Fatalf("accepted hello with v %d", m.V)
		}
		if m.Profile == nil {
			t.Fatal("accepted hello has no profile (defaults not filled in)")
		}
		checkProfile(t, *m.Profile)
		if len(m.Token) > maxTokenBytes || !printableASCII(m.Token) {
			t.Fatalf("accepted hello token %q", m.Token)
		}
		if r := m.Resume; r != nil && (!isID(r.SessionID, maxIDBytes) || !isID(r.Token, maxResumeToken)) {
			t.Fatalf("accepted hello with resume %+v", *r)
		}
	case typeQuestion:
		if m.Text == nil {
			t.Fatal("accepted question without text")
		}
		if len(*m.Text) > maxQuestionBytes || hasControl(*m.Text) {
			t.Fatalf("accepted question text %q", *m.Text)
		}
		if m.ID != "" && !isID(m.ID, maxIDBytes) {
			t.Fatalf("accepted question id %q", m.ID)
		}
	case typeProfile:
		if m.Profile == nil {
			t.Fatal("accepted profile message without a profile")
		}
		checkProfile(t, *m.Profile)
	case typeAudioStart:
		if m.SampleRate != audioSampleRate || m.Encoding != audioEncoding ||
			(m.Source != "tab" && m.Source != "mic" && m.Source != "") {
			t.Fatalf("accepted audio_start %d %q %q", m.SampleRate, m.Encoding, m.Source)
		}
	case typePing:
		if len(m.T) > maxPingBytes {
			t.Fatalf("accepted ping t of %d bytes", len(m.T))
		}
	case typeImage:
		if (m.Format != "png" && m.Format != "jpeg") || m.Parts < 1 || m.Parts > maxImageParts ||
			m.Part < 0 || m.Part >= m.Parts || m.Data == "" || len(m.Data) > maxImagePartData {
			t.Fatalf("accepted image part %q %d/%d of %d characters", m.Format, m.Part, m.Parts, len(m.Data))
		}
		if m.ID != "" && !isID(m.ID, maxIDBytes) {
			t.Fatalf("accepted image id %q", m.ID)
		}
		if m.Text != nil && (len(*m.Text) > maxQuestionBytes || hasControl(*m.Text)) {
			t.Fatalf("accepted image text %q", *m.Text)
		}
	case typeResetAI, typeAudioStop:
	default:
		t.Fatalf("accepted unknown type %q", m.Type)
	}
}

func checkProfile(t *testing.T, p tiers.Profile) {
	t.Helper()
	if p.Lang != "zh" && p.Lang != "en" {
		t.Fatalf("accepted profile lang %q", p.Lang)
	}
	if p.Seniority != "junior" && p.Seniority != "mid" && p.Seniority != "senior" {
		t.Fatalf("accepted profile seniority %q", p.Seniority)
	}
	if len(p.Role) > maxRoleBytes || len(p.Resume) > maxResumeBytes || len(p.Role)+len(p.Resume) > maxProfileBytes {
		t.Fatalf("accepted profile role of %d bytes, resume of %d", len(p.Role), len(p.Resume))
	}
	if hasControl(p.Role) || hasControl(p.Resume) {
		t.Fatalf("accepted profile with a control character: role %q", p.Role)
	}
}

// isID: 1 to limit bytes of [A-Za-z0-9._:-].
func isID(s string, limit int) bool {
	return len(s) > 0 && len(s) <= limit && strings.Trim(s,
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-") == ""
}

func printableASCII(s string) bool {
	for i := range len(s) {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// hasControl: an ASCII control character other than tab, newline and
// carriage return.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
	})
}

// normalRaw is raw as the encoder writes it (compact; absent is null), so
// that two spellings of the same JSON compare equal.
func normalRaw(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if raw == nil {
		return json.RawMessage("null")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatalf("accepted t that is not JSON: %q", raw)
	}
	return buf.Bytes()
}
