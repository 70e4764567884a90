package session

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/poise-dev/poise/coach"
	"github.com/poise-dev/poise/tiers"
)

// ProtocolVersion is the WebSocket protocol version of docs/protocol.md.
const ProtocolVersion = 1

// Client → server message types.
const (
	typeHello      = "hello"
	typeQuestion   = "question"
	typeResetAI    = "reset_ai"
	typePing       = "ping"
	typeAudioStart = "audio_start"
	typeAudioStop  = "audio_stop"
	typeProfile    = "profile"
	typeImage      = "image" // a screenshot question, in parts (image.go)
)

// Error codes sent in `error` messages. Each names the client's own
// malformed or refused input; the session goes on after every one of them.
const (
	codeBadJSON        = "bad_json"
	codeUnknownType    = "unknown_type"
	codeMissingField   = "missing_field"
	codeBadField       = "bad_field"
	codeNotHello       = "hello_required"
	codeSecondHello    = "already_started"
	codeUnknownSession = "unknown_session"
	codeBadResumeToken = "bad_resume_token"
	codeResumeGap      = "resume_gap"
	codeUnauthorized   = "unauthorized" // a missing, forged or expired session token; the connection closes
	codeTooMany        = "too_many_sessions"
	codeTooLarge       = "too_large"
	codeAudio          = "bad_audio"
	codeBadVersion     = "bad_version"
	codeBadUTF8        = "bad_utf8" // a text frame that is not valid UTF-8
	codeTooFast        = "too_fast" // frames over the connection's rate; the excess was dropped
)

// inbound is the decoded form of every client text message; which fields
// matter depends on Type.
type inbound struct {
	Type       string          `json:"type"`
	V          int             `json:"v"`
	Token      string          `json:"token"`
	Profile    *tiers.Profile  `json:"profile"`
	AutoAnswer *bool           `json:"auto_answer"`
	Resume     *resumeRequest  `json:"resume"`
	ID         string          `json:"id"`
	Text       *string         `json:"text"`
	T          json.RawMessage `json:"t"`
	SampleRate int             `json:"sample_rate"`
	Encoding   string          `json:"encoding"`
	Source     string          `json:"source"`
	additions                  // also part and data of an image
	Format     string          `json:"format"` // image
	Parts      int             `json:"parts"`  // image
	image      *tiers.Image    // a complete image, assembled by the reader
}

type resumeRequest struct {
	SessionID string `json:"session_id"`
	Token     string `json:"token"`
	LastSeq   uint64 `json:"last_seq"`
}

// protocolError is a refusal of client input, sent as an `error` message.
// Reason, when set, says why in a word the page words in its own language
// (bad_file: fileReasons).
type protocolError struct {
	Code    string
	Message string
	Reason  string
}

func (e *protocolError) Error() string { return e.Code + ": " + e.Message }

func refuse(code, format string, args ...any) *protocolError {
	return &protocolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// decodeInbound parses and validates one client text message against the
// wire limits of config.go. The error, if any, is ready to send to the
// client. The frame is checked for size and UTF-8 before it is decoded:
// encoding/json would silently turn invalid UTF-8 into U+FFFD.
func decodeInbound(data []byte) (inbound, *protocolError) {
	var m inbound
	if len(data) > maxTextMessage {
		return m, refuse(codeTooLarge, "text message of %d bytes is over %d", len(data), maxTextMessage)
	}
	if !utf8.Valid(data) {
		return m, refuse(codeBadUTF8, "text message is not valid UTF-8")
	}
	if err := json.Unmarshal(data, &m); err != nil {
		// The decoder quotes the client's text (a number of any length):
		// the reason is at the start.
		return m, refuse(codeBadJSON, "message is not a JSON object: %s", clipTo(err.Error(), maxJSONErrorText))
	}
	switch m.Type {
	case "":
		return m, refuse(codeMissingField, "missing field: type")
	case typeHello:
		return m, validateHello(&m)
	case typeQuestion:
		return m, validateQuestion(&m)
	case typeProfile:
		if m.Profile == nil {
			return m, refuse(codeMissingField, "profile needs field: profile")
		}
		return m, validateProfile(m.Profile)
	case typeAudioStart:
		return m, validateAudioStart(&m)
	case typeImage:
		return m, validateImage(&m)
	case typePing:
		if len(m.T) > maxPingBytes {
			return m, refuse(codeTooLarge, "ping: t is over %d bytes", maxPingBytes)
		}
	case typeResetAI:
	case typeAudioStop:
		return m, validateAudioStop(&m)
	case typeProfileFile:
		return m, validateProfileFile(&m)
	case typeAnswerNow, typeRegenerate, typeShorter, typeDeeper, typeReview:
	default:
		return m, refuse(codeUnknownType, "unknown message type %q", clip(m.Type))
	}
	return m, nil
}

func validateHello(m *inbound) *protocolError {
	if m.V != ProtocolVersion {
		return refuse(codeBadVersion, "hello: v must be %d, got %d", ProtocolVersion, m.V)
	}
	if err := checkToken("hello: token", m.Token, maxTokenBytes); err != nil {
		return err
	}
	if m.Profile == nil {
		m.Profile = &tiers.Profile{}
	}
	if err := validateProfile(m.Profile); err != nil {
		return err
	}
	r := m.Resume
	if r == nil {
		return nil
	}
	if r.SessionID == "" || r.Token == "" {
		return refuse(codeMissingField, "hello: resume needs session_id and token")
	}
	if err := checkID("hello: resume.session_id", r.SessionID, maxIDBytes); err != nil {
		return err
	}
	return checkID("hello: resume.token", r.Token, maxResumeToken)
}

func validateQuestion(m *inbound) *protocolError {
	if m.Text == nil {
		return refuse(codeMissingField, "question needs field: text")
	}
	if len(*m.Text) > maxQuestionBytes {
		return refuse(codeTooLarge, "question text is over %d bytes", maxQuestionBytes)
	}
	if err := checkText("question text", *m.Text); err != nil {
		return err
	}
	if m.ID == "" {
		return nil
	}
	return checkID("question id", m.ID, maxIDBytes)
}

// validateProfile fills defaults (en, mid) and rejects unknown values.
func validateProfile(p *tiers.Profile) *protocolError {
	switch p.Lang {
	case "":
		p.Lang = "en"
	case "zh", "en":
	default:
		return refuse(codeBadField, "profile.lang must be zh or en, got %q", clip(p.Lang))
	}
	switch p.Seniority {
	case "":
		p.Seniority = "mid"
	case "junior", "mid", "senior":
	default:
		return refuse(codeBadField, "profile.seniority must be junior, mid or senior, got %q", clip(p.Seniority))
	}
	if len(p.Role) > maxRoleBytes {
		return refuse(codeTooLarge, "profile.role is over %d bytes", maxRoleBytes)
	}
	if len(p.Resume) > maxResumeBytes {
		return refuse(codeTooLarge, "profile.resume is over %d bytes", maxResumeBytes)
	}
	if err := checkText("profile.role", p.Role); err != nil {
		return err
	}
	if err := validateJob(p); err != nil {
		return err
	}
	return checkText("profile.resume", p.Resume)
}

func validateAudioStart(m *inbound) *protocolError {
	if m.SampleRate != audioSampleRate {
		return refuse(codeAudio, "audio_start: sample_rate must be %d, got %d", audioSampleRate, m.SampleRate)
	}
	if m.Encoding != audioEncoding {
		return refuse(codeAudio, "audio_start: encoding must be %s, got %q", audioEncoding, clip(m.Encoding))
	}
	switch m.Source {
	case "tab", "mic", "":
	default:
		return refuse(codeAudio, "audio_start: source must be tab or mic, got %q", clip(m.Source))
	}
	return nil
}

// checkText refuses control characters in free text, other than tab,
// newline and carriage return: a NUL or an escape sequence has no place in
// a question or a resume, and would reach prompts, logs and terminals.
func checkText(field, s string) *protocolError {
	for i, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
			return refuse(codeBadField, "%s has a control character (U+%04X) at byte %d", field, r, i)
		}
	}
	return nil
}

// checkID refuses an identifier that is longer than limit or has a
// character outside [A-Za-z0-9._:-]; ids are echoed to the client and
// written to logs and Redis keys.
func checkID(field, s string, limit int) *protocolError {
	if len(s) > limit {
		return refuse(codeTooLarge, "%s is over %d bytes", field, limit)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return refuse(codeBadField, "%s may only have A-Z, a-z, 0-9 and . _ : - (byte %d is not)", field, i)
		}
	}
	return nil
}

// checkToken refuses a token that is longer than limit or not printable
// ASCII. The token itself never goes into the message.
func checkToken(field, s string, limit int) *protocolError {
	if len(s) > limit {
		return refuse(codeTooLarge, "%s is over %d bytes", field, limit)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return refuse(codeBadField, "%s must be printable ASCII (byte %d is not)", field, i)
		}
	}
	return nil
}

const maxJSONErrorText = 160 // bytes of the decoder's error quoted in bad_json

// clip shortens a client's value quoted back in an error message.
func clip(s string) string { return clipTo(s, 32) }

// clipTo shortens s to at most keep bytes (and "…"), on a rune boundary.
func clipTo(s string, keep int) string {
	if len(s) <= keep {
		return s
	}
	for i := keep; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}

// Server → client messages. Every one but welcome embeds head and so
// carries a seq, assigned by the session when it is sent.

// head is the common start of every sequenced server message.
type head struct {
	Type string `json:"type"`
	Seq  uint64 `json:"seq"`
}

func (h *head) header() *head { return h }

// outbound is a sequenced server message.
type outbound interface{ header() *head }

type welcomeMsg struct {
	Type        string `json:"type"`
	SessionID   string `json:"session_id"`
	ResumeToken string `json:"resume_token"`
	Resumed     bool   `json:"resumed"`
	LastSeq     uint64 `json:"last_seq"`
	Level       string `json:"level"`
	Chip        *Chip  `json:"chip"`
}

type levelMsg struct {
	head
	Level  string `json:"level"`
	From   string `json:"from"`
	Reason string `json:"reason"`
	Chip   *Chip  `json:"chip"`
}

type captionMsg struct {
	head
	UttID  string `json:"utt_id"`
	Text   string `json:"text"`
	Final  bool   `json:"final"`
	Source string `json:"source"`
	speakerFields
}

// captionsMsg is the caption chain's own status (captions.go), independent
// of the answer level: state live|degraded|paused, hint in the profile's
// language ("" when live).
type captionsMsg struct {
	head
	State string `json:"state"`
	Hint  string `json:"hint"`
}

type answerStartMsg struct {
	head
	ID       string `json:"id"`
	Question string `json:"question"`
	Level    string `json:"level"`
	Source   string `json:"source"`
	Note     string `json:"note"`
	controlFields
	Via string `json:"via,omitempty"` // a screenshot question: vision | ocr
	// Matched and Outline are additions to v1, at L3 only: the
	// template's question and its outline (docs/protocol.md).
	Matched string   `json:"matched,omitempty"`
	Outline []string `json:"outline,omitempty"`
	// QuestionType is an addition to v1: coach.Classify's type.
	QuestionType coach.Type `json:"question_type,omitempty"`
}

// screenshotTextMsg carries the text OCR read from a screenshot question.
type screenshotTextMsg struct {
	head
	ID   string `json:"id"`
	Text string `json:"text"`
}

type answerDeltaMsg struct {
	head
	ID   string `json:"id"`
	Text string `json:"text"`
}

type answerEndMsg struct {
	head
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

type coachMsg struct {
	head
	ID string `json:"id"`
	coach.Card
}

type pongMsg struct {
	head
	T json.RawMessage `json:"t"`
}

type errorMsg struct {
	head
	Code    string `json:"code"`
	Message string `json:"message"`          // English, for logs and developers
	Reason  string `json:"reason,omitempty"` // bad_file: format, damaged, locked or no_text
}

// Reasons of answer_end.
const (
	endDone       = "done"
	endCut        = "cut"
	endSuperseded = "superseded"
	endCancelled  = "cancelled"
)

// v1 additions: the job and résumé files, two speakers, answer controls
// and the review (docs/protocol.md, "Context, speakers and controls").
// Clients that do not know them ignore the new fields and messages.

// Client → server message types of the additions.
const (
	typeProfileFile = "profile_file" // a résumé or job file, in base64 parts
	typeAnswerNow   = "answer_now"   // answer the last interviewer caption
	typeRegenerate  = "regenerate"   // another answer to the current question
	typeShorter     = "shorter"      // the current answer, shorter
	typeDeeper      = "deeper"       // the current answer, deeper
	typeReview      = "review"       // a post-interview summary, models only
)

// Error codes of the additions.
const (
	codeBadFile      = "bad_file"           // a profile file that cannot be read to text; the session goes on
	codeNoQuestion   = "no_question"        // an answer control with nothing to work on
	codeNoReview     = "review_unavailable" // a review while no model answers (L3, L4)
	maxFileBytes     = 1 << 20              // a profile file, all parts together
	maxFileNameBytes = 255                  // profile_file.name
	maxJobBytes      = 24 << 10             // profile.job: as much as profile.resume
)

// Speakers of a caption: the shared tab is the interviewer; the
// microphone is the candidate while a tab stream runs, else (one
// microphone hearing both) nobody in particular.
const (
	speakerInterviewer = "interviewer"
	speakerCandidate   = "candidate"
)

// additions are the inbound fields of the additions, embedded in inbound.
type additions struct {
	Kind string `json:"kind"` // profile_file: resume | job
	Name string `json:"name"` // profile_file: the file's name; its extension picks the format
	Size int    `json:"size"` // profile_file: the whole file's size in bytes (part 0; optional)
	Part int    `json:"part"` // profile_file, image: 0, 1, … in order
	Last bool   `json:"last"` // profile_file: the final part
	Data string `json:"data"` // profile_file, image: this part's bytes in base64
}

// speakerFields are what a caption adds: which stream heard it and who
// spoke ("" when one microphone hears both).
type speakerFields struct {
	Stream  string `json:"stream,omitempty"`
	Speaker string `json:"speaker,omitempty"`
}

// controlFields are what answer_start adds for an answer control or the
// review: the style, and the id of the question it reworks.
type controlFields struct {
	Style string `json:"style,omitempty"`
	Of    string `json:"of,omitempty"`
}

// profileFileMsg tells the client the text read from its file: the
// page puts it in the profile form. Text is at most maxResumeBytes
// (Truncated says it was cut); Facts are what the placeholders take.
type profileFileMsg struct {
	head
	Kind      string      `json:"kind"`
	Name      string      `json:"name"`
	Text      string      `json:"text"`
	Truncated bool        `json:"truncated"`
	Facts     tiers.Facts `json:"facts"`
}

func validateProfileFile(m *inbound) *protocolError {
	switch m.Kind {
	case "resume", "job":
	default:
		return refuse(codeBadField, "profile_file: kind must be resume or job, got %q", clip(m.Kind))
	}
	if m.Name == "" {
		return refuse(codeMissingField, "profile_file needs field: name")
	}
	if len(m.Name) > maxFileNameBytes {
		return refuse(codeTooLarge, "profile_file: name is over %d bytes", maxFileNameBytes)
	}
	if m.Part < 0 {
		return refuse(codeBadField, "profile_file: part must be 0 or more")
	}
	if base64.StdEncoding.DecodedLen(len(m.Data)) > maxFileBytes || m.Size > maxFileBytes {
		return refuse(codeTooLarge, "profile_file: the file is over %d bytes (1 MiB)", maxFileBytes)
	}
	return checkText("profile_file: name", m.Name)
}

func validateAudioStop(m *inbound) *protocolError {
	switch m.Source {
	case "", "tab", "mic":
		return nil
	}
	return refuse(codeAudio, "audio_stop: source must be tab or mic, got %q", clip(m.Source))
}

func validateJob(p *tiers.Profile) *protocolError {
	if len(p.Job) > maxJobBytes {
		return refuse(codeTooLarge, "profile.job is over %d bytes", maxJobBytes)
	}
	return checkText("profile.job", p.Job)
}
