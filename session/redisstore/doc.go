// Package redisstore keeps the state that Poise nodes share in Redis: the
// ops view of sessions and their level transitions, the resume state that
// lets a session move to another node, and the counts of the per-subject
// limits, and the backends' circuits. Every poise:* key it touches is
// named in keys.go and every Lua script in scripts.go. It implements
// session.Store, session.ResumeStore, quota.Counters and tiers/health's
// Store; cmd/poise wires it when redis_url is set.
package redisstore
