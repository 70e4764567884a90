package quota

import (
	"context"
	"time"

	"github.com/rs/zerolog"
)

// Windows of the limits, and the audio counting step.
const (
	QuestionWindow      = time.Minute
	AudioWindow         = time.Hour
	TokenWindow         = 24 * time.Hour // aligned to the epoch: a UTC day
	audioBytesPerSecond = 16000 * 2      // the session's audio: pcm_s16le mono at 16 kHz
	limiterTimeout      = time.Second    // backstop on one call to Counters (redisstore.Counters bounds its own calls far shorter)
)

// Verdict is a limit decision: OK, or refused until the window ends.
type Verdict struct {
	OK    bool
	Until time.Time // when a refusal lifts
}

var allowed = Verdict{OK: true}

// Limiter enforces Limits per subject over Counters (per process or shared
// between nodes). Counts live in fixed windows aligned to the epoch: a
// calendar minute, a clock hour, a UTC day. Safe for concurrent use.
type Limiter struct {
	limits   Limits
	now      func() time.Time
	counters Counters
	log      zerolog.Logger
	audio    *audioCredit
	blocked  *blockList
}

// NewLimiter returns the limiter of limits over counters, with the clock
// now (nil: time.Now); a failing count is logged (debug) to log.
func NewLimiter(limits Limits, counters Counters, now func() time.Time, log zerolog.Logger) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{limits: limits, now: now, counters: counters, log: log,
		audio: newAudioCredit(), blocked: newBlockList()}
}

// Keys of the counts; redisstore.Counters keeps them under poise:limit:.
func questionsKey(subject string) string       { return "questions:" + subject }
func audioKey(subject string) string           { return "audio:" + subject }
func tokensKey(subject, backend string) string { return "tokens:" + subject + ":" + backend }
func sessionsKey(subject string) string        { return "sessions:" + subject }

func (l *Limiter) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), limiterTimeout)
}

// add asks Counters for n more of key within limit in windows of w. A
// failing Counters never refuses: a limit is not worth an error.
func (l *Limiter) add(key string, n, limit int64, w time.Duration, now time.Time) bool {
	ctx, cancel := l.ctx()
	defer cancel()
	_, ok, err := l.counters.Add(ctx, key, n, limit, w, now)
	if err != nil {
		l.log.Debug().Err(err).Str("key", key).Msg("quota: limit count failed; allowed")
		return true
	}
	return ok
}

// OpenSession holds session id of subject if subject has fewer than
// sessions_per_subject live sessions (on any node, with shared Counters),
// in one step, so concurrent hellos never pass the limit. It reports
// whether the session may open; a Counters failure lets it open. Call it
// outside any lock: it may wait for Redis.
func (l *Limiter) OpenSession(subject, id string) bool {
	limit := l.limits.SessionsPerSubject
	if limit <= 0 {
		return true
	}
	ctx, cancel := l.ctx()
	defer cancel()
	ok, err := l.counters.Hold(ctx, sessionsKey(subject), id, limit)
	if err != nil {
		l.log.Debug().Err(err).Str("subject", subject).Msg("quota: session hold failed; allowed")
		return true
	}
	return ok
}

// HoldSession counts a live session of subject while it lives, whatever
// the limit (a session resumed from another node is held here now), and
// ReleaseSession stops counting it when it ends. The hub calls both from
// its recorder, in order, never from a session.
func (l *Limiter) HoldSession(ctx context.Context, subject, id string) error {
	if l.limits.SessionsPerSubject <= 0 {
		return nil
	}
	_, err := l.counters.Hold(ctx, sessionsKey(subject), id, 0)
	return err
}

// ReleaseSession: see HoldSession.
func (l *Limiter) ReleaseSession(ctx context.Context, subject, id string) error {
	if l.limits.SessionsPerSubject <= 0 {
		return nil
	}
	return l.counters.Release(ctx, sessionsKey(subject), id)
}

// TakeQuestion counts one question of subject against
// questions_per_minute, or refuses it until the minute ends.
func (l *Limiter) TakeQuestion(subject string) Verdict {
	limit := int64(l.limits.QuestionsPerMinute)
	if limit <= 0 {
		return allowed
	}
	return l.take(subject, questionsKey(subject), 1, limit, QuestionWindow)
}

// take adds n to a count that nothing but time lowers. After a refusal
// the rest of the window is refused here, without asking Counters again.
func (l *Limiter) take(subject, key string, n, limit int64, w time.Duration) Verdict {
	now := l.now()
	if until, ok := l.blocked.blockedUntil(subject, key, now); ok {
		return Verdict{Until: until}
	}
	if l.add(key, n, limit, w, now) {
		return allowed
	}
	until := WindowEnd(now, w)
	l.blocked.block(subject, key, until)
	return Verdict{Until: until}
}

// TakeAudio counts n bytes of audio of subject against
// audio_seconds_per_hour. Counters are asked in whole seconds of audio and
// the rest is kept as credit on this node, so that 20 ms frames do not
// each cost a call to Redis.
func (l *Limiter) TakeAudio(subject string, n int) Verdict {
	limit := int64(l.limits.AudioSecondsPerHour)
	if limit <= 0 {
		return allowed
	}
	lack, ok := l.audio.use(subject, n)
	if ok {
		return allowed
	}
	secs := (lack + audioBytesPerSecond - 1) / audioBytesPerSecond
	v := l.take(subject, audioKey(subject), secs, limit, AudioWindow)
	if v.OK {
		l.audio.grant(subject, secs*audioBytesPerSecond, n)
	}
	return v
}

// ReserveTokens reserves tokens on backend for subject against
// daily_tokens_per_vendor; settle corrects the count to what the attempt
// used, in the day of the reservation.
func (l *Limiter) ReserveTokens(ctx context.Context, subject, backend string, tokens int) (settle func(actual int), v Verdict) {
	limit := int64(l.limits.DailyTokensPerVendor)
	if limit <= 0 {
		return func(int) {}, allowed
	}
	now := l.now()
	key := tokensKey(subject, backend)
	ctx, cancel := context.WithTimeout(ctx, limiterTimeout)
	_, ok, err := l.counters.Add(ctx, key, int64(tokens), limit, TokenWindow, now)
	cancel()
	switch {
	case err != nil:
		l.log.Debug().Err(err).Str("key", key).Msg("quota: token budget count failed; allowed")
		return func(int) {}, allowed
	case !ok:
		return nil, Verdict{Until: WindowEnd(now, TokenWindow)}
	}
	return func(actual int) {
		if d := int64(actual - tokens); d != 0 {
			l.add(key, d, 0, TokenWindow, now)
		}
	}, allowed
}

// Forget drops what this node keeps about a subject when its last session
// here ends. The counts stay: they lift with their windows, not with
// sessions, so closing a session does not reset a limit.
func (l *Limiter) Forget(subject string) {
	l.audio.forget(subject)
	l.blocked.forget(subject)
}
