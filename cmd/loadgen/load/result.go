package load

import (
	"math"
	"sort"
	"time"
)

// Result is everything a run recorded. Times are milliseconds since the
// traffic started (AtMS); latencies are milliseconds, -1 when the event
// never came.
type Result struct {
	Start        time.Time `json:"start"`
	SLAms        float64   `json:"sla_ms"`
	DurationMS   float64   `json:"duration_ms"` // traffic, without the drain
	Sessions     int       `json:"sessions"`    // asked for
	Opened       int       `json:"opened"`
	DialFailures []string  `json:"dial_failures,omitempty"`
	// SessionIDs are the server's session ids by session index ("" for a
	// session that did not open).
	SessionIDs []string `json:"session_ids"`

	Questions []QuestionRecord `json:"questions"`
	Captions  []CaptionRecord  `json:"captions"`
	// Missed are the utterances counted in MissedCaptions.
	Missed     []MissedRecord    `json:"missed,omitempty"`
	Errors     []ErrorRecord     `json:"errors"`
	Levels     []LevelRecord     `json:"levels"`
	Timeline   []Sample          `json:"timeline"`
	Reconnects []ReconnectRecord `json:"reconnects"`

	Lost                  int `json:"lost"`                   // seq gaps: messages never received
	Doubled               int `json:"doubled"`                // messages received twice
	SessionsLost          int `json:"sessions_lost"`          // resumes refused; a new session was started
	MissedCaptions        int `json:"missed_captions"`        // utterances that ended and never got a final
	InterruptedUtterances int `json:"interrupted_utterances"` // utterances cut off by a lost connection
	ExtraFinals           int `json:"extra_finals"`           // finals with no utterance waiting
	Unattributed          int `json:"unattributed"`           // answers or coach cards for no known question
}

// QuestionRecord is one question and what the candidate saw.
type QuestionRecord struct {
	Session    int     `json:"session"`
	ID         string  `json:"id"`
	Text       string  `json:"text"`
	Spoken     bool    `json:"spoken"`
	AtMS       float64 `json:"at_ms"`
	FirstMS    float64 `json:"first_ms"`   // first answer_start or coach
	FirstKind  string  `json:"first_kind"` // answer, coach, offline_coach or ""
	AnswerMS   float64 `json:"answer_ms"`  // first answer_start
	Level      string  `json:"level"`      // of the answer: L1, L2, L3; "" if none
	Source     string  `json:"source"`
	Coached    bool    `json:"coached"`
	End        string  `json:"end"` // answer_end reason
	Superseded bool    `json:"superseded"`
	// UttToFirstMS is, for a spoken question, from the end of its
	// utterance in the audio to the first useful content.
	UttToFirstMS float64 `json:"utt_to_first_ms"`
}

// MissedRecord is an utterance whose end was sent at AtMS and that got
// no final by the end of the run.
type MissedRecord struct {
	Session   int     `json:"session"`
	Utterance int     `json:"utterance"`
	AtMS      float64 `json:"at_ms"`
}

// CaptionRecord is one final caption of an utterance.
type CaptionRecord struct {
	Session   int     `json:"session"`
	Utterance int     `json:"utterance"`
	AtMS      float64 `json:"at_ms"`
	LatencyMS float64 `json:"latency_ms"` // from the utterance's last frame sent to the final caption
	Source    string  `json:"source"`
}

// ErrorRecord is one error message from the server.
type ErrorRecord struct {
	Session int     `json:"session"`
	AtMS    float64 `json:"at_ms"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
}

// LevelRecord is one change of a session's level as the client saw it.
type LevelRecord struct {
	Session int     `json:"session"`
	AtMS    float64 `json:"at_ms"`
	From    string  `json:"from"`
	To      string  `json:"to"`
	Reason  string  `json:"reason"`
}

// ReconnectRecord is one lost connection and its resumption.
type ReconnectRecord struct {
	Session int     `json:"session"`
	LostMS  float64 `json:"lost_ms"`
	BackMS  float64 `json:"back_ms"` // -1: never came back
	Resumed bool    `json:"resumed"`
}

// Sample counts the sessions at each level (and "offline") at one time.
type Sample struct {
	AtMS   float64        `json:"at_ms"`
	Levels map[string]int `json:"levels"`
}

func (r *Run) result() *Result {
	res := &Result{
		Start: r.start, SLAms: ms(r.cfg.SLA), DurationMS: ms(r.cfg.Duration),
		Sessions: r.cfg.Sessions, Opened: len(r.clients), DialFailures: r.failed, Timeline: r.timeline,
	}
	res.SessionIDs = make([]string, r.cfg.Sessions)
	for _, c := range r.clients {
		res.SessionIDs[c.idx] = c.rs.sessionID
		c.rec.collect(c.idx, r.start, res)
	}
	sort.SliceStable(res.Levels, func(i, j int) bool { return res.Levels[i].AtMS < res.Levels[j].AtMS })
	return res
}

// collect adds the session's records to res. Called after drive returned.
func (r *recorder) collect(session int, start time.Time, res *Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	since := func(t time.Time) float64 {
		if t.IsZero() {
			return -1
		}
		return ms(t.Sub(start))
	}
	after := func(t, from time.Time) float64 {
		if t.IsZero() || from.IsZero() {
			return -1
		}
		return ms(t.Sub(from))
	}
	for i, q := range r.questions {
		rec := QuestionRecord{Session: session, ID: q.id, Text: q.text, Spoken: q.spoken, AtMS: since(q.asked),
			FirstMS: after(q.first, q.asked), FirstKind: q.firstKind, AnswerMS: after(q.answer, q.asked),
			Level: q.level, Source: q.source, Coached: q.coached, End: q.end,
			UttToFirstMS: after(q.first, q.uttEnd)}
		rec.Superseded = q.first.IsZero() && i < len(r.questions)-1
		res.Questions = append(res.Questions, rec)
	}
	for _, c := range r.captions {
		res.Captions = append(res.Captions, CaptionRecord{Session: session, Utterance: c.utt, AtMS: since(c.at), LatencyMS: ms(c.latency), Source: c.source})
	}
	for _, e := range r.errors {
		res.Errors = append(res.Errors, ErrorRecord{Session: session, AtMS: since(e.at), Code: e.code, Message: e.message})
	}
	for _, l := range r.levels {
		res.Levels = append(res.Levels, LevelRecord{Session: session, AtMS: since(l.at), From: l.from, To: l.to, Reason: l.why})
	}
	for _, rc := range r.reconnects {
		res.Reconnects = append(res.Reconnects, ReconnectRecord{Session: session, LostMS: since(rc.lost), BackMS: since(rc.back), Resumed: rc.resumed})
	}
	res.Lost += r.lost
	res.Doubled += r.doubled
	res.SessionsLost += r.sessionsLost
	res.MissedCaptions += len(r.utts)
	for _, u := range r.utts {
		res.Missed = append(res.Missed, MissedRecord{Session: session, Utterance: u.index, AtMS: since(u.end)})
	}
	res.InterruptedUtterances += r.interruptedUtt
	res.ExtraFinals += r.extraFinals
	res.Unattributed += r.unattributed
}

// ms is d in milliseconds, to a tenth.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e5) / 10 }
