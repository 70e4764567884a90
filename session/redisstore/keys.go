package redisstore

// The Redis keys of Poise's sessions and limits, in one place. Keys of
// one session's resume state share the hash tag {id}, so a script may
// touch both on Redis Cluster.
const (
	// sessionKeyPrefix + id: hash per live session, the ops view: level,
	// node, lang, seniority, connected ("1"/"0"), limit, updated_at (unix
	// ms), and owner (the process that writes it). Expires TTL after its
	// last write; Store.Run re-writes it while the session lives.
	sessionKeyPrefix = "poise:session:"
	// transitionsKey: stream of level transitions (session, from, to,
	// reason, node, at in unix ms), capped near transitionsCap entries.
	transitionsKey = "poise:transitions"
	// eventsChannel: pub/sub channel mirroring each transition as JSON, for
	// live dashboards.
	eventsChannel = "poise:events"
	// takeoversChannel: pub/sub channel announcing each resume take-over
	// as "<session id> <new owner>", so that the node that lost the
	// session stops serving it at once (Store.WatchTakeovers).
	takeoversChannel = "poise:takeovers"
	// limitKeyPrefix + count key + ":" + window start (unix s): integer
	// count of a limit in one window (quota.WindowKey), expiring a margin
	// after the window. limitKeyPrefix + "sessions:" + subject: sorted set
	// of the subject's live sessions, scored by lease expiry (unix ms).
	// The count keys are quota's: questions:<subject>,
	// audio:<subject>, tokens:<subject>:<backend>.
	limitKeyPrefix = "poise:limit:"
	// healthKeyPrefix + backend: hash of one backend's circuit, shared
	// by the nodes (HealthStore): state up|down, circuit
	// closed|open|half_open, consecutive_pass, consecutive_fail,
	// updated_at, and changed_at (the circuit's last change, which decides
	// between nodes), open_until, cooldown_ms, last_trial (unix ms),
	// reason, node. Expires a day after its last write.
	healthKeyPrefix = "poise:health:"
	// healthChannel: pub/sub channel; a merge that changed a circuit
	// publishes the backend's name.
	healthChannel = "poise:health:changes"
)

// healthKey is the circuit hash of backend.
func healthKey(backend string) string { return healthKeyPrefix + backend }

// sessionKey is the ops hash of session id.
func sessionKey(id string) string { return sessionKeyPrefix + id }

// resumeKey is the resume hash of session id: owner, token (the hex
// SHA-256 of the resume token, never the token itself: reading Redis is
// not enough to resume a session), subject, profile (JSON), auto_answer,
// level, node, updated_at, last_seq (the newest seq written or known, so
// that a lost replay list reads as a gap, not as nothing to replay).
func resumeKey(id string) string { return "poise:resume:{" + id + "}" }

// replayKey is the replay list of session id: "<seq> <message JSON>",
// contiguous seqs, the newest ReplayMax.
func replayKey(id string) string { return "poise:replay:{" + id + "}" }

// Hash fields and values that the code reads back.
const (
	ownerField = "owner" // bookkeeping field: the owning process
	fieldTrue  = "1"     // how booleans are written in hashes
)
