package session

import (
	"time"

	"github.com/poise-dev/poise/asr"
	"github.com/poise-dev/poise/session/quota"

	"github.com/poise-dev/poise/tiers"
	"github.com/rs/zerolog"
)

// Wire limits of the WebSocket protocol (docs/protocol.md, "Input limits").
// A field over its limit gets an `error` (too_large, or bad_field for a bad
// character) and the session goes on; only a frame over readLimit closes
// the connection. Sizes are in bytes of UTF-8: the browser's maxlength
// counts characters, and a CJK character takes 3 bytes.
const (
	readLimit              = 256 << 10                     // any frame; a larger one closes the connection with 1009
	maxAudioFrame          = 64 << 10                      // one binary frame; larger ones get bad_audio
	maxTextMessage         = 64 << 10                      // one text frame, before it is decoded
	maxQuestionBytes       = 6 << 10                       // question text: the page's 2,000 characters of CJK
	maxIDBytes             = 64                            // question id, resume.session_id: [A-Za-z0-9._:-]
	maxTokenBytes          = 2 << 10                       // hello.token (the session token), printable ASCII
	maxResumeToken         = 128                           // resume.token, [A-Za-z0-9._:-]
	maxRoleBytes           = 1 << 10                       // profile.role: the page's 200 characters of CJK, with room
	maxResumeBytes         = 24 << 10                      // profile.resume: the page's 8,000 characters of CJK
	maxProfileBytes        = maxRoleBytes + maxResumeBytes // profile.role and profile.resume together
	maxPingBytes           = 128                           // ping.t as raw JSON (the page sends Date.now())
	audioSampleRate        = 16000
	audioEncoding          = "pcm_s16le"
	defaultSendQueue       = 1024                   // unwritten messages per connection before it counts as too slow
	defaultReplay          = 4096                   // messages kept per session for resume
	defaultInbox           = 32                     // messages queued to a session's run goroutine (it takes up to inboxBatch a turn)
	handshakeTimeout       = 10 * time.Second       // to receive a valid hello
	defaultPreHelloMax     = 1024                   // connections waiting for hello, all addresses
	defaultPreHelloPerAddr = 32                     // the same, per client address
	writeTimeout           = 5 * time.Second        // per message (conn.write)
	maxDelivery            = 100 * time.Millisecond // kept out of sla_ms for the coach card to reach the client
)

// Config tunes the Hub and its sessions. The zero value of every field means
// its documented default.
type Config struct {
	// AllowedOrigins are extra WebSocket Origin patterns (path.Match on the
	// host, "host:*" for any port). Same-origin is always allowed. Default none.
	AllowedOrigins []string
	// SLA is the budget for a question's first useful content. Default 1500ms.
	SLA time.Duration
	// HeartbeatTimeout is how long a session waits for any client message
	// before it drops to L4 (heartbeat_lost). Default 60s.
	HeartbeatTimeout time.Duration
	// ResumeWindow is how long a session without a connection waits for a
	// resume before it ends. Default 120s.
	ResumeWindow time.Duration
	// DeadPeerTimeout is how long a connection may go without answering
	// the server's pings (every third of it) before it counts as lost:
	// the resume window starts as if the client had closed it. Default 45s.
	DeadPeerTimeout time.Duration
	// PreHelloMax bounds the connections that have not said hello yet; a
	// further one sheds the oldest. Default 1024.
	PreHelloMax int
	// PreHelloPerAddr bounds them per client address, shedding that
	// address's oldest. Default 32.
	PreHelloPerAddr int
	// SendQueue is how many unwritten messages a connection may have (or
	// 1 MiB); a client whose backlog reaches it is closed with 1008 and
	// resumes. Default 1024.
	SendQueue int
	// Replay is how many sent messages a session keeps for resume. Default 4096.
	Replay int
	// Coalesce is how long the answer deltas that follow a sent one are
	// gathered into one answer_delta (the first delta of an answer, and
	// one after a quiet spell, go out at once). Default 50ms; negative:
	// every delta goes out alone.
	Coalesce time.Duration
	// Limits are per token subject (per session when anonymous).
	Limits quota.Limits
	// Counters keep the counts of Limits. Default a new
	// quota.MemoryCounters (this process only); a quota.FallbackCounters
	// over redisstore.Counters shares them between nodes.
	Counters quota.Counters
	// Secret is the HMAC key of session tokens; empty means anonymous
	// sessions, accepted from loopback clients only.
	Secret string
	// MaxTokenTTL bounds a token's exp: one that expires later than this
	// after the hello is refused (unauthorized). Default DefaultMaxTTL (24h).
	MaxTokenTTL time.Duration
	// AnonymousAnywhere accepts anonymous sessions (no Secret) from any
	// address, not only loopback; serve sets it for -insecure. Default false.
	AnonymousAnywhere bool
	// Node names this process in the ops store. Default the host name.
	Node string
	// Answerer answers questions; nil means every question gets the coach.
	Answerer Answerer
	// Health tells which level a session may use and when that changes;
	// nil means a static L4 (coach only).
	Health Health
	// ASR is the shared recognizer pool; nil means audio is validated and
	// dropped (no captions).
	ASR *asr.Pool
	// ASRConfig tunes each session's audio pipeline.
	ASRConfig asr.Config
	// Store records levels and transitions for operators. Default a new
	// MemoryStore.
	Store Store
	// Resume keeps what a session needs to resume on another node; nil
	// (the default) means sessions resume only on the node that has them.
	// redisstore.Store is the multi-node ResumeStore.
	Resume ResumeStore
	// Metrics, nil for none.
	Metrics *Metrics
	// Log is the hub's logger; sessions add their id.
	Log zerolog.Logger
	// Now is the clock used for store timestamps. Default time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.SLA, 1500*time.Millisecond)
	def(&c.HeartbeatTimeout, 60*time.Second)
	def(&c.ResumeWindow, 120*time.Second)
	def(&c.MaxTokenTTL, DefaultMaxTTL)
	def(&c.DeadPeerTimeout, 45*time.Second)
	if c.Coalesce == 0 {
		c.Coalesce = DefaultCoalesce
	}
	if c.PreHelloMax <= 0 {
		c.PreHelloMax = defaultPreHelloMax
	}
	if c.PreHelloPerAddr <= 0 {
		c.PreHelloPerAddr = defaultPreHelloPerAddr
	}
	if c.SendQueue <= 0 {
		c.SendQueue = defaultSendQueue
	}
	if c.Replay <= 0 {
		c.Replay = defaultReplay
	}
	if c.Health == nil {
		c.Health = staticHealth(tiers.L4)
	}
	if c.Store == nil {
		c.Store = NewMemoryStore()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Counters == nil {
		c.Counters = quota.NewMemoryCounters()
	}
	return c
}
