package tiers

import "github.com/poise-dev/poise/coach"

// Profile is what the candidate told us about themselves; it shapes prompts
// and template recall.
type Profile struct {
	Lang      string `json:"lang"`      // "zh" or "en"
	Seniority string `json:"seniority"` // "junior", "mid" or "senior"
	Role      string `json:"role"`
	Resume    string `json:"resume"` // never logged
	Job       string `json:"job"`    // the job description; never logged
}

// Request is one question to answer.
type Request struct {
	ID       string // the session's question id; echoed in events by the caller
	Question string
	// Type is the question's type (coach.Classify's), computed once by
	// the caller; empty means BuildPrompt classifies the question itself.
	Type       coach.Type
	Profile    Profile
	Transcript string // the last minute of captions, oldest first
	Level      Level  // the session's level: sources above it are skipped
	// Retry asks for every configured level to be tried even where the
	// health center marks it down: the first question after the
	// candidate's "Reset AI" gives the models a fresh chance (failures
	// still fall through within the budget).
	Retry bool
	// Budget, when set, is asked before every model attempt and told what
	// each one used; a backend it refuses is skipped (Event.OverBudget).
	// Nil means no token budget.
	Budget Budget
	// Facts are read from the profile's résumé and job (ExtractFacts):
	// they fill L3 placeholders and are named in the prompt.
	Facts Facts
	// Style is an answer control (StyleShorter, …) or StyleReview; "" is
	// a plain answer. Previous is the answer a control reworks.
	Style    string
	Previous string
	// NoTemplates keeps the answer to the models (L1, L2): a review has
	// no template.
	NoTemplates bool
	// Image, when set, makes this a screenshot question: the question is
	// on the image, and Question holds only what the candidate typed
	// with it, if anything (see Engine.Answer).
	Image *Image
}

// Image is a screenshot, checked by the caller (ocr.Check): PNG or JPEG
// within the protocol's limits.
type Image struct {
	Data   []byte
	Format string // "png" or "jpeg"
}

// EventKind tells the parts of an answer stream apart.
type EventKind int

// The parts of an answer stream, in the order they arrive: one Start, any
// number of Delta, one End; or, when no source had content, one End
// alone (ReasonNone).
const (
	EventStart EventKind = iota + 1
	EventDelta
	EventEnd
	// EventRead carries the text OCR read from a screenshot question's
	// image (Text), before the Start of an answer from it; it may also
	// come while the vision model is still thinking. Never for a text
	// question.
	EventRead
)

// Event is one step of an answer stream. Start is emitted when the first
// useful content is ready (the first model token, or a template hit), so a
// caller can measure time to first content from it.
type Event struct {
	Kind   EventKind
	Level  Level  // Start: the level that answers (L1, L2 or L3)
	Source string // Start: backend name or template id
	Note   string // Start: L3's honest note, in the profile's language
	Via    string // Start of a screenshot question's answer: ViaVision or ViaOCR
	// Matched and Outline (Start, L3 only) are the template's question
	// and its 3–5 line outline, in the question's language, placeholders
	// filled from the profile: the card shows what the template answers
	// before its answer.
	Matched string
	Outline []string
	Text    string // Delta; Read: the recognised text
	Reason  string // End: ReasonDone, ReasonCut or ReasonNone
	// OverBudget (Start and End) names the backends skipped so far
	// because Request.Budget had no room for them (no health failure):
	// the answer fell to a later source, level or the coach because of
	// the budget.
	OverBudget []string
}

// How a screenshot question's answer read the screenshot (Event.Via).
const (
	ViaVision = "vision" // the vision model saw the image (Tier V)
	ViaOCR    = "ocr"    // OCR read it and a text source answered the text (Tier O)
)

// End reasons of an answer stream. ReasonDone and ReasonCut are also the
// wire's; ReasonNone never reaches a client (the coach answers instead).
const (
	ReasonDone = "done" // the answer is complete
	ReasonCut  = "cut"  // the answer is partial: a truncated answer is never presented as complete
	ReasonNone = "none" // no source had content: nothing was started
)
