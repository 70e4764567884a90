// Package quota enforces the per-subject limits of sessions (questions a
// minute, audio seconds an hour, live sessions, model tokens a day) over
// Counters that count in this process or, shared between nodes, in Redis
// (session/redisstore) with a local fallback.
package quota
