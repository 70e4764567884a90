package load

import (
	"errors"
	"fmt"
	"time"
)

// Defaults for Config; a zero field means its default.
const (
	defaultSLA          = 1500 * time.Millisecond // sla_ms of the server under test
	defaultDialers      = 24                      // sessions opened at once: under Poise's pre_hello_per_address (32)
	defaultSampleEvery  = 250 * time.Millisecond  // level timeline resolution
	defaultDialTimeout  = 30 * time.Second        // one WebSocket handshake plus welcome
	defaultResumeWithin = 20 * time.Second        // attempts to resume a lost connection
	defaultQuestionGap  = 4 * time.Second         // mean gap between typed questions
	pingEvery           = 10 * time.Second        // as the browser does
	writeTimeout        = 5 * time.Second         // one client write
	readLimit           = 1 << 20                 // bytes in one server message
)

// Profile is what one session does. Sessions take the profiles of
// Config.Profiles in turn.
type Profile struct {
	Name      string `json:"name"`
	Lang      string `json:"lang"`      // "en" (default) or "zh"
	Seniority string `json:"seniority"` // "junior", "mid" (default) or "senior"
	// Audio streams Config.Clip in real time, in 100 ms frames (the browser's), looping.
	Audio bool `json:"audio"`
	// AutoAnswer lets the server answer spoken questions (the protocol's
	// auto_answer). Only meaningful with Audio.
	AutoAnswer bool `json:"auto_answer"`
	// Typed asks a typed question every QuestionGap on average (±25%,
	// seeded).
	Typed       bool          `json:"typed"`
	QuestionGap time.Duration `json:"question_gap"` // default 4s
}

// Config describes one load run. Zero fields mean their defaults.
type Config struct {
	// Servers are Poise base URLs (http://host:port). Session i opens on
	// Servers[i % len]; a session whose connection dies resumes on the
	// next server in the list.
	Servers  []string
	Sessions int
	Profiles []Profile // default: one typed-questions profile
	// Duration is how long traffic runs once every session is open.
	Duration time.Duration
	// Seed makes the question texts, gaps and audio offsets repeatable.
	Seed int64
	// SLA is the server's sla_ms, used by Summary (default 1500 ms).
	SLA time.Duration
	// Clip is the audio of Audio profiles; required when one streams.
	Clip *Clip
	// Questions are the typed questions by language (default
	// DefaultQuestions).
	Questions map[string][]string
	// Dialers bounds the sessions being opened at once (default 24).
	Dialers int
	// SampleEvery is the period of the level timeline (default 250 ms).
	SampleEvery time.Duration
	// DialTimeout bounds one session's opening (default 30 s).
	DialTimeout time.Duration
	// ResumeWithin bounds the resume attempts after a lost connection
	// (default 20 s); a session that cannot resume in time is lost.
	ResumeWithin time.Duration
	// Headers are sent with every WebSocket handshake (e.g. Origin).
	Headers map[string]string
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Servers) == 0 {
		return c, errors.New("load: no servers")
	}
	if c.Sessions <= 0 {
		return c, fmt.Errorf("load: sessions must be positive, got %d", c.Sessions)
	}
	if c.Duration <= 0 {
		return c, fmt.Errorf("load: duration must be positive, got %v", c.Duration)
	}
	if len(c.Profiles) == 0 {
		c.Profiles = []Profile{{Name: "typist", Typed: true}}
	}
	profiles := make([]Profile, len(c.Profiles))
	for i, p := range c.Profiles {
		if p.Lang == "" {
			p.Lang = "en"
		}
		if p.Seniority == "" {
			p.Seniority = "mid"
		}
		if p.QuestionGap <= 0 {
			p.QuestionGap = defaultQuestionGap
		}
		if p.Audio && c.Clip == nil {
			return c, fmt.Errorf("load: profile %q streams audio but no clip is loaded", p.Name)
		}
		profiles[i] = p
	}
	c.Profiles = profiles
	if c.Questions == nil {
		c.Questions = DefaultQuestions
	}
	for _, p := range c.Profiles {
		if p.Typed && len(c.Questions[p.Lang]) == 0 {
			return c, fmt.Errorf("load: no questions in %q for profile %q", p.Lang, p.Name)
		}
	}
	c.SLA = orDefault(c.SLA, defaultSLA)
	c.SampleEvery = orDefault(c.SampleEvery, defaultSampleEvery)
	c.DialTimeout = orDefault(c.DialTimeout, defaultDialTimeout)
	c.ResumeWithin = orDefault(c.ResumeWithin, defaultResumeWithin)
	if c.Dialers <= 0 {
		c.Dialers = defaultDialers
	}
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// DefaultQuestions are typed interview questions: most are close to the
// template bank (they hit at L3), a few are not (L3 misses them and the
// coach answers).
var DefaultQuestions = map[string][]string{
	"en": {
		"What is your greatest weakness?",
		"Tell me about a time you handled a conflict at work.",
		"Why do you want to join our team?",
		"Tell me about yourself.",
		"Where do you see yourself in five years?",
		"Describe a project you are proud of.",
		"How do you handle tight deadlines?",
		"Why are you leaving your current job?",
		"What are your salary expectations?",
		"How would you design a rate limiter for a public API?",
		"What did you learn from your biggest failure?",
		"How do you explain a technical decision to a non-technical stakeholder?",
	},
	"zh": {
		"请介绍一下你自己",
		"你为什么想加入我们公司",
		"你最大的缺点是什么",
		"说说你和同事发生冲突的一次经历",
		"你未来五年的职业规划是什么",
		"你为什么离开上一家公司",
		"你的期望薪资是多少",
		"讲一个你最有成就感的项目",
	},
}
