package load

import (
	"slices"
	"time"
)

// Summary condenses a Result into the figures of the report.
type Summary struct {
	// Questions are those counted in the shares: neither superseded by a
	// newer question before any content came, nor asked while offline.
	Questions  int `json:"questions"`
	Superseded int `json:"superseded"`
	Offline    int `json:"offline"` // asked while disconnected: coached by the browser
	// FirstWithin have their first useful content (an answer or the coach)
	// within the SLA; ContentWithin have an answer (model or template)
	// within it; NoContent never got any content.
	FirstWithin   int `json:"first_within"`
	ContentWithin int `json:"content_within"`
	NoContent     int `json:"no_content"`
	// CoachAtSLA have the coach as first content, arriving within
	// slaTimerWindow after the SLA: the server's SLA timer fired it.
	CoachAtSLA int `json:"coach_at_sla"`
	// First content latency percentiles over Questions, in ms.
	FirstP50 float64 `json:"first_p50_ms"`
	FirstP95 float64 `json:"first_p95_ms"`
	FirstP99 float64 `json:"first_p99_ms"`
	FirstMax float64 `json:"first_max_ms"`
	// ByFirst counts the first content by level (L1, L2, L3) or "coach".
	ByFirst map[string]int `json:"by_first"`
	Cut     int            `json:"cut"` // answers that ended cut

	Spoken        int     `json:"spoken"`            // spoken questions among Questions
	SpokenUttP99  float64 `json:"spoken_utt_p99_ms"` // utterance end → first content
	Captions      int     `json:"captions"`
	CaptionP50    float64 `json:"caption_p50_ms"`
	CaptionP95    float64 `json:"caption_p95_ms"`
	CaptionP99    float64 `json:"caption_p99_ms"`
	CaptionMissed int     `json:"caption_missed"`
	// CaptionSources counts finals by source (whisper server, cloud, ...).
	CaptionSources map[string]int `json:"caption_sources"`

	Errors       int            `json:"errors"` // error messages received
	ErrorCodes   map[string]int `json:"error_codes"`
	Lost         int            `json:"lost"`
	Doubled      int            `json:"doubled"`
	SessionsLost int            `json:"sessions_lost"`
	Reconnects   int            `json:"reconnects"`
	ResumeMaxMS  float64        `json:"resume_max_ms"` // longest time without a connection; -1 if one never came back
}

// slaTimerWindow is how late after the SLA a coach card still counts as
// fired by the server's SLA timer (CoachAtSLA).
const slaTimerWindow = 100 * time.Millisecond

// Summarize computes the Summary of r. A question's content is within the
// SLA when it came at most r.SLAms + allowance after the question; the
// allowance covers delivery from the server's timer to the client.
func Summarize(r *Result, allowance time.Duration) Summary {
	s := Summary{ByFirst: map[string]int{}, CaptionSources: map[string]int{}, ErrorCodes: map[string]int{}}
	limit := r.SLAms + ms(allowance)
	var first, spoken, captions []float64
	for _, q := range r.Questions {
		switch {
		case q.FirstKind == kindOffline:
			s.Offline++
			continue
		case q.Superseded:
			s.Superseded++
			continue
		}
		s.Questions++
		if q.End == "cut" {
			s.Cut++
		}
		if q.FirstMS < 0 {
			s.NoContent++
			continue
		}
		first = append(first, q.FirstMS)
		if q.FirstMS <= limit {
			s.FirstWithin++
		}
		if q.AnswerMS >= 0 && q.AnswerMS <= limit {
			s.ContentWithin++
		}
		if q.FirstKind == kindCoach && q.FirstMS >= r.SLAms && q.FirstMS <= r.SLAms+ms(slaTimerWindow) {
			s.CoachAtSLA++
		}
		if q.FirstKind == kindAnswer {
			s.ByFirst[q.Level]++
		} else {
			s.ByFirst[kindCoach]++
		}
		if q.Spoken {
			s.Spoken++
			if q.UttToFirstMS >= 0 {
				spoken = append(spoken, q.UttToFirstMS)
			}
		}
	}
	s.FirstP50, s.FirstP95, s.FirstP99, s.FirstMax = Percentile(first, 50), Percentile(first, 95), Percentile(first, 99), Percentile(first, 100)
	s.SpokenUttP99 = Percentile(spoken, 99)
	for _, c := range r.Captions {
		captions = append(captions, c.LatencyMS)
		s.CaptionSources[c.Source]++
	}
	s.Captions = len(captions)
	s.CaptionP50, s.CaptionP95, s.CaptionP99 = Percentile(captions, 50), Percentile(captions, 95), Percentile(captions, 99)
	s.CaptionMissed = r.MissedCaptions
	for _, e := range r.Errors {
		s.ErrorCodes[e.Code]++
	}
	s.Errors = len(r.Errors)
	s.Lost, s.Doubled, s.SessionsLost = r.Lost, r.Doubled, r.SessionsLost
	s.Reconnects = len(r.Reconnects)
	for _, rc := range r.Reconnects {
		if rc.BackMS < 0 {
			s.ResumeMaxMS = -1
			break
		}
		s.ResumeMaxMS = max(s.ResumeMaxMS, rc.BackMS-rc.LostMS)
	}
	return s
}

// FirstShare is the share of Questions with first useful content within
// the SLA (1 when there were none).
func (s Summary) FirstShare() float64 { return share(s.FirstWithin, s.Questions) }

// ContentShare is the share of Questions with a model or template answer
// within the SLA.
func (s Summary) ContentShare() float64 { return share(s.ContentWithin, s.Questions) }

func share(n, of int) float64 {
	if of == 0 {
		return 1
	}
	return float64(n) / float64(of)
}

// Percentile returns the p-th percentile (nearest rank) of xs, 0 for none.
// It sorts xs.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(float64(len(xs))*p/100+0.9999999) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
