package load

import "bytes"

// message is the decoded form of every server message; which fields are
// set depends on Type (docs/protocol.md).
type message struct {
	Type        string `json:"type"`
	Seq         uint64 `json:"seq"`
	SessionID   string `json:"session_id"`   // welcome
	ResumeToken string `json:"resume_token"` // welcome
	Resumed     bool   `json:"resumed"`      // welcome
	LastSeq     uint64 `json:"last_seq"`     // welcome
	Level       string `json:"level"`        // welcome, level, answer_start
	From        string `json:"from"`         // level
	Reason      string `json:"reason"`       // level, answer_end
	Final       bool   `json:"final"`        // caption
	Text        string `json:"text"`         // caption, answer_delta
	Source      string `json:"source"`       // caption, answer_start
	ID          string `json:"id"`           // answer_*, coach
	Code        string `json:"code"`         // error
	Message     string `json:"message"`      // error
}

// Kinds of first useful content.
const (
	kindAnswer  = "answer"        // answer_start: a model or a template
	kindCoach   = "coach"         // the server's coach card
	kindOffline = "offline_coach" // asked while disconnected: the browser coaches on its own
)

// levelOffline is a session's level in the timeline while it has no
// connection.
const levelOffline = "offline"

// deltaHead is how the server starts every answer_delta (its head: type,
// then seq).
var deltaHead = []byte(`{"type":"answer_delta","seq":`)

// fastSeq returns the seq of an answer_delta without decoding it; ok is
// false for any other message, or a delta written another way, which the
// caller decodes in full. (The recorder needs nothing else of a delta.)
func fastSeq(b []byte) (seq uint64, ok bool) {
	if !bytes.HasPrefix(b, deltaHead) {
		return 0, false
	}
	digits := 0
	for _, d := range b[len(deltaHead):] {
		if d < '0' || d > '9' {
			break
		}
		if digits == 19 { // would overflow: let the decoder say
			return 0, false
		}
		seq = seq*10 + uint64(d-'0')
		digits++
	}
	if digits == 0 || len(b) == len(deltaHead)+digits || b[len(deltaHead)+digits] != ',' && b[len(deltaHead)+digits] != '}' {
		return 0, false
	}
	return seq, true
}
