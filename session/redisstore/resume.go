package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The resume keys of a session. Both carry the hash tag {id}, so the
// scripts below may use them together on Redis Cluster.
//
//	poise:resume:{id}  hash: owner, token (the hex SHA-256 of the resume
//	                   token, never the token itself: reading Redis is
//	                   not enough to resume a session), subject, profile
//	                   (JSON), auto_answer, level, node, updated_at,
//	                   last_seq (the newest seq written or known, so that
//	                   a lost replay list reads as a gap, not as nothing
//	                   to replay)
//	poise:replay:{id}  list of "<seq> <message JSON>", contiguous seqs,
//	                   the newest ReplayMax
func resumeKey(id string) string { return "poise:resume:{" + id + "}" }
func replayKey(id string) string { return "poise:replay:{" + id + "}" }

// writeResume applies one ResumeWrite.
// KEYS: resume hash, replay list. ARGV: owner, ttl ms, mode ("w" write,
// "d" delete), replay max, last seq known, number of header args (field,
// value pairs), the header args, first seq, then the messages.
// Returns 1, or 0 when another process owns the session.
// Messages already in the list (a retried write) are skipped; a gap
// empties the list first, so what is kept is always contiguous.
var writeResume = redis.NewScript(`
local o = redis.call('HGET', KEYS[1], 'owner')
if o and o ~= ARGV[1] then return 0 end
if ARGV[3] == 'd' then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 1
end
local nf = tonumber(ARGV[6])
if nf > 0 then
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], unpack(ARGV, 7, 6 + nf))
elseif not o then
  redis.call('HSET', KEYS[1], 'owner', ARGV[1])
end
local function bump(seq)
  if seq > (tonumber(redis.call('HGET', KEYS[1], 'last_seq')) or 0) then
    redis.call('HSET', KEYS[1], 'last_seq', string.format('%d', seq))
  end
end
bump(tonumber(ARGV[5]))
local base = 7 + nf
local first = tonumber(ARGV[base])
local n = #ARGV - base
if n > 0 then
  local skip = 0
  local tail = redis.call('LINDEX', KEYS[2], -1)
  if tail then
    local last = tonumber(string.match(tail, '^(%d+) '))
    if last == nil or first > last + 1 then
      redis.call('DEL', KEYS[2])
    elseif first <= last then
      skip = last - first + 1
    end
  end
  for i = 1 + skip, n do
    redis.call('RPUSH', KEYS[2], string.format('%d', first + i - 1) .. ' ' .. ARGV[base + i])
  end
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[4]), -1)
  bump(first + n - 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)

// takeOver makes ARGV[1] the owner when ARGV[2] is the hash of the resume
// token and ARGV[4] is empty or the session's subject.
// KEYS: resume hash, replay list. ARGV: owner, token hash, ttl ms, subject.
// Returns {0} when nothing is saved, {-1} on a wrong token or subject,
// else {1, header as field/value list, replay entries}. (Comparing hashes
// needs no constant time: their timing tells nothing of the token.)
var takeOver = redis.NewScript(`
local tok = redis.call('HGET', KEYS[1], 'token')
if not tok then return {0} end
if tok ~= ARGV[2] then return {-1} end
if ARGV[4] ~= '' and redis.call('HGET', KEYS[1], 'subject') ~= ARGV[4] then return {-1} end
redis.call('HSET', KEYS[1], 'owner', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {1, redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}`)

// claimSession moves an existing session hash to owner ARGV[1].
var claimSession = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'owner', ARGV[1]) end
return 1`)

// WriteResume implements ResumeStore in one pipelined round trip.
func (s *RedisStore) WriteResume(ctx context.Context, writes []ResumeWrite) ([]string, error) {
	cmds := make([]*redis.Cmd, 0, len(writes))
	err := s.scripted(ctx, []*redis.Script{writeResume}, func(p redis.Pipeliner) {
		cmds = cmds[:0]
		for _, w := range writes {
			cmds = append(cmds, writeResume.EvalSha(ctx, p, []string{resumeKey(w.ID), replayKey(w.ID)}, s.resumeArgs(w)...))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("session: redis: write resume state: %w", err)
	}
	var disowned []string
	for i, c := range cmds {
		if n, _ := c.Int(); n == 0 {
			disowned = append(disowned, writes[i].ID)
		}
	}
	return disowned, nil
}

func (s *RedisStore) resumeArgs(w ResumeWrite) []any {
	mode := "w"
	if w.Delete {
		mode = "d"
	}
	var header []any
	if st := w.State; st != nil && !w.Delete {
		profile, _ := json.Marshal(st.Profile)
		auto := "0"
		if st.AutoAnswer {
			auto = fieldTrue
		}
		header = []any{"token", tokenHash(st.Token), "subject", st.Subject, "profile", profile, "auto_answer", auto,
			"level", st.Level, "node", st.Node, "updated_at", time.Now().UnixMilli()}
	}
	var lastSeq uint64
	if w.State != nil {
		lastSeq = w.State.LastSeq
	}
	args := make([]any, 0, 7+len(header)+len(w.Messages))
	args = append(args, s.owner, s.cfg.TTL.Milliseconds(), mode, s.cfg.ReplayMax, lastSeq, len(header))
	args = append(args, header...)
	args = append(args, w.FirstSeq)
	for _, m := range w.Messages {
		args = append(args, m)
	}
	return args
}

// tokenHash is what the store keeps of a resume token.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TakeOverAs implements ResumeStore.
func (s *RedisStore) TakeOverAs(ctx context.Context, id, token, subject string) (ResumeState, error) {
	res, err := takeOver.Run(ctx, s.rdb, []string{resumeKey(id), replayKey(id)}, s.owner, tokenHash(token),
		s.cfg.TTL.Milliseconds(), subject).Slice()
	if err != nil {
		return ResumeState{}, fmt.Errorf("session: redis: take over %s: %w", id, err)
	}
	switch code, _ := res[0].(int64); {
	case code == 0:
		return ResumeState{}, ErrNoResumeState
	case code < 0:
		return ResumeState{}, ErrResumeToken
	case len(res) < 3:
		return ResumeState{}, fmt.Errorf("session: redis: take over %s: short reply", id)
	}
	st, err := parseResume(id, res[1], res[2])
	if err != nil {
		return st, err
	}
	st.Token = token // the store keeps only its hash
	// The ops hash follows: later writes of the old owner are not applied.
	if err := claimSession.Run(ctx, s.rdb, []string{sessionKey(id)}, s.owner).Err(); err != nil {
		return st, fmt.Errorf("session: redis: claim %s: %w", id, err)
	}
	return st, nil
}

// Owns implements ResumeStore.
func (s *RedisStore) Owns(ctx context.Context, id string) (bool, error) {
	o, err := s.rdb.HGet(ctx, resumeKey(id), ownerField).Result()
	switch {
	case err == redis.Nil:
		return true, nil
	case err != nil:
		return true, fmt.Errorf("session: redis: owner of %s: %w", id, err)
	}
	return o == s.owner, nil
}

// parseResume decodes takeOver's header list and replay entries.
func parseResume(id string, header, entries any) (ResumeState, error) {
	h := map[string]string{}
	switch v := header.(type) {
	case []any: // RESP2 and Lua tables
		for i := 0; i+1 < len(v); i += 2 {
			k, _ := v[i].(string)
			h[k], _ = v[i+1].(string)
		}
	case map[any]any: // RESP3 maps
		for k, val := range v {
			ks, _ := k.(string)
			h[ks], _ = val.(string)
		}
	}
	st := ResumeState{ID: id, Subject: h["subject"], Level: h["level"], Node: h["node"],
		AutoAnswer: h["auto_answer"] == fieldTrue}
	st.LastSeq, _ = strconv.ParseUint(h["last_seq"], 10, 64)
	if p := h["profile"]; p != "" {
		if err := json.Unmarshal([]byte(p), &st.Profile); err != nil {
			return st, fmt.Errorf("session: redis: resume state of %s: profile: %w", id, err)
		}
	}
	list, _ := entries.([]any)
	for i, e := range list {
		str, _ := e.(string)
		seqText, msg, ok := strings.Cut(str, " ")
		seq, err := strconv.ParseUint(seqText, 10, 64)
		if !ok || err != nil {
			return st, fmt.Errorf("session: redis: resume state of %s: bad replay entry %d", id, i)
		}
		if i == 0 {
			st.FirstSeq = seq
		} else if seq != st.FirstSeq+uint64(i) {
			return st, fmt.Errorf("session: redis: resume state of %s: replay not contiguous at %d", id, seq)
		}
		st.Messages = append(st.Messages, []byte(msg))
	}
	return st, nil
}
