package quota

// Limits bound what one subject may use; zero means no limit. Counts run
// in fixed windows: a calendar minute, a clock hour, a UTC day. Over a
// limit the candidate still gets content (templates or the coach; captions
// pause for audio) and a `limit` message, never an error; only a hello
// over sessions_per_subject is refused.
type Limits struct {
	QuestionsPerMinute   int `yaml:"questions_per_minute"`    // default 20; over it: answered from L3/L4
	SessionsPerSubject   int `yaml:"sessions_per_subject"`    // default 2; over it: hello refused (too_many_sessions)
	AudioSecondsPerHour  int `yaml:"audio_seconds_per_hour"`  // default 7200; over it: audio dropped, captions pause
	DailyTokensPerVendor int `yaml:"daily_tokens_per_vendor"` // default 0 (none); per L1/L2 backend: over it, that backend is skipped
}

// DefaultLimits are the limits of a config that names none.
func DefaultLimits() Limits {
	return Limits{QuestionsPerMinute: 20, SessionsPerSubject: 2, AudioSecondsPerHour: 7200}
}
