package session

import (
	"context"
	"time"

	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/tiers"
)

// Limit names: the `limit` of the limit message, the ops record's limit
// field and the label of poise_limit_hits_total.
const (
	limitQuestions = "questions_per_minute"
	limitAudio     = "audio_seconds_per_hour"
	limitTokens    = "daily_tokens_per_vendor"
	limitSessions  = "sessions_per_subject" // refused hellos only: no session to tell
)

// limitMsg tells the client that a limit started to bite: once per
// episode (until the limit lifts), never as an error. The page shows hint
// in its lite-mode chip until `until` (unix ms; 0 if unknown) or the next
// level change.
type limitMsg struct {
	head
	Limit string `json:"limit"`
	Hint  string `json:"hint"`
	Until int64  `json:"until"`
}

// limitHints say, in the profile's language, what a limit changes for the
// candidate. web/static/i18n.js has the same wording.
var limitHints = map[string]map[string]string{
	"en": {
		limitQuestions: "Many questions in a short time: answers come from templates and coaching for a moment; the AI is back within a minute",
		limitAudio:     "This hour's listening time is used up: captions pause, typed questions still work",
		limitTokens:    "Today's AI budget is used up: answers come from a lighter source until tomorrow",
	},
	"zh": {
		limitQuestions: "短时间内提问较多，暂时用模板和答题指引作答，一分钟内恢复 AI 回答",
		limitAudio:     "本小时的收听时长已用完，字幕暂停；仍可输入问题",
		limitTokens:    "今日 AI 用量已达上限，明天之前改用轻量来源作答",
	},
}

func limitHint(limit, lang string) string {
	byLimit, ok := limitHints[lang]
	if !ok {
		byLimit = limitHints["en"]
	}
	return byLimit[limit]
}

// episodes are the limits biting a session now, each until its window
// ends. Owned by run.
type episodes struct {
	until  map[string]time.Time // limit → when it lifts
	active string               // the latest limit still biting: the ops record's limit
	timer  *time.Timer          // fires when the earliest episode ends; nil when none
}

// lifted is the channel run waits on for the end of an episode; nil (never
// ready) when none is running.
func (e *episodes) lifted() <-chan time.Time {
	if e.timer == nil {
		return nil
	}
	return e.timer.C
}

func (e *episodes) stop() {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
}

// limitHit notes that a limit changed what the candidate gets. The first
// hit of an episode sends the limit message and marks the ops record;
// later hits of the same episode only count. Every hit counts in
// poise_limit_hits_total, but audio (50 frames a second) counts once per
// episode.
func (s *Session) limitHit(limit string, until time.Time) {
	now := s.cfg.Now()
	s.liftLimits(now)
	if u, ok := s.limits.until[limit]; ok && now.Before(u) {
		if limit != limitAudio {
			s.cfg.Metrics.limitHit(limit)
		}
		return
	}
	s.cfg.Metrics.limitHit(limit)
	if s.limits.until == nil {
		s.limits.until = map[string]time.Time{}
	}
	s.limits.until[limit] = until
	s.limits.active = limit
	s.send(&limitMsg{head: head{Type: "limit"}, Limit: limit, Hint: limitHint(limit, s.profile.Lang), Until: until.UnixMilli()})
	s.armLimitTimer(now)
	s.record()
	s.logger().Info().Str("limit", limit).Time("until", until).Msg("limit reached")
}

// liftLimits ends the episodes whose windows have passed at now; the ops
// record follows. Run calls it when the timer fires, and before every
// limit decision (the clock may be a test's).
func (s *Session) liftLimits(now time.Time) {
	changed := false
	for limit, until := range s.limits.until {
		if !now.Before(until) {
			delete(s.limits.until, limit)
			changed = true
		}
	}
	if !changed {
		return
	}
	if _, ok := s.limits.until[s.limits.active]; !ok {
		s.limits.active = ""
		var latest time.Time
		for limit, until := range s.limits.until {
			if until.After(latest) {
				s.limits.active, latest = limit, until
			}
		}
	}
	s.armLimitTimer(now)
	s.record()
}

// onLimitTimer ends the episodes that are over and waits for the next.
func (s *Session) onLimitTimer() {
	s.limits.timer = nil
	now := s.cfg.Now()
	s.liftLimits(now)
	if s.limits.timer == nil {
		s.armLimitTimer(now)
	}
}

// armLimitTimer sets the timer to the earliest end of a running episode.
func (s *Session) armLimitTimer(now time.Time) {
	s.limits.stop()
	var first time.Time
	for _, until := range s.limits.until {
		if first.IsZero() || until.Before(first) {
			first = until
		}
	}
	if !first.IsZero() {
		s.limits.timer = time.NewTimer(max(first.Sub(now), 0))
	}
}

// questionLevel counts a question against questions_per_minute and
// returns the level to answer it at: the session's, or, over the limit,
// at least L3 (templates, else the coach): the question is still answered,
// only without models.
func (s *Session) questionLevel() tiers.Level {
	level := s.m.level()
	s.liftLimits(s.cfg.Now())
	v := s.hub.limiter.TakeQuestion(s.subject)
	if v.OK {
		return level
	}
	s.limitHit(limitQuestions, v.Until)
	return max(level, tiers.L3)
}

// tokenBudget is the tiers.Budget of one question: daily_tokens_per_vendor
// of the session's subject, on the limiter's counters. It remembers a
// refusal, so that the session can say why an answer came from a lower
// level as it starts. Safe for concurrent use (hedged attempts reserve
// from the answer goroutine and settle from their own).
type tokenBudget struct {
	l       *quota.Limiter
	subject string
}

// Reserve implements tiers.Budget.
func (b *tokenBudget) Reserve(ctx context.Context, backend string, tokens int) (func(int), bool) {
	settle, v := b.l.ReserveTokens(ctx, b.subject, backend, tokens)
	return settle, v.OK
}

// budget is the token budget of one question, nil without
// daily_tokens_per_vendor.
func (s *Session) budget() *tokenBudget {
	if s.cfg.Limits.DailyTokensPerVendor <= 0 {
		return nil
	}
	return &tokenBudget{l: s.hub.limiter, subject: s.subject}
}

// overBudget sends the token limit when budget refusals (skipped, as the
// answer's event tells them) made q's answer come from a lower level than
// the question's (level), or from the coach (level 0): at its
// answer_start, or when it ends unanswered.
func (s *Session) overBudget(q *question, level tiers.Level, skipped []string) {
	if q.budget == nil || len(skipped) == 0 || (level != 0 && level <= q.level) {
		return
	}
	s.limitHit(limitTokens, quota.WindowEnd(s.cfg.Now(), quota.TokenWindow))
}
