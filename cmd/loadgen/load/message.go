package load

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
