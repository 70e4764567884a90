package redisstore

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts of the store, in one place: each one checks and writes
// its keys (keys.go) in one step, so that concurrent nodes never pass a
// limit or overwrite a session another process owns.

// putSession writes a session hash unless another process owns it.
// KEYS[1] the hash; ARGV owner, ttl ms, then field, value pairs.
// Returns 1 when written, 0 when owned by another process.
var putSession = redis.NewScript(`
local o = redis.call('HGET', KEYS[1], 'owner')
if o and o ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)

// deleteOwned deletes KEYS[1] unless another process (ARGV[1]) owns it.
var deleteOwned = redis.NewScript(`
local o = redis.call('HGET', KEYS[1], 'owner')
if o and o ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`)

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

// addCount adds to a window count unless it would pass the limit.
// KEYS[1] the count; ARGV n, limit (0: none), ttl ms. Returns {count, added}.
var addCount = redis.NewScript(`
local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 and limit > 0 and cur + n > limit then return {cur, 0} end
cur = redis.call('INCRBY', KEYS[1], n)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {cur, 1}`)

// holdLease holds a member of a lease set unless the set is full.
// KEYS[1] the set; ARGV now (ms), the lease's expiry (ms), member, limit
// (0: none), the key's ttl (ms). Returns 1 when member is held.
var holdLease = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local limit = tonumber(ARGV[4])
if limit > 0 and not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= limit then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`)

// scripted runs a pipeline of EVALSHA calls built by fill; when Redis does
// not know a script yet (a restart flushed its cache) it loads scripts
// and runs the pipeline once more, so it takes only idempotent scripts
// (putSession, writeResume).
func (s *Store) scripted(ctx context.Context, scripts []*redis.Script, fill func(p redis.Pipeliner)) error {
	run := func() error {
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error { fill(p); return nil })
		return err
	}
	err := run()
	if err == nil || !isNoScript(err) {
		return err
	}
	for _, sc := range scripts {
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return err
		}
	}
	return run()
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// mergeHealth merges one backend's circuit record (HealthStore.Merge):
// the stored record stays when its changed_at is later than the new
// one's; otherwise the new one is written, and a changed circuit is
// published. KEYS[1] the hash; ARGV ttl ms, backend name, then the
// values of healthFields. Returns the stored values in that order.
var mergeHealth = redis.NewScript(`
local fields = {'state', 'circuit', 'consecutive_pass', 'consecutive_fail', 'updated_at',
  'changed_at', 'open_until', 'cooldown_ms', 'last_trial', 'reason', 'node'}
local cur = redis.call('HMGET', KEYS[1], unpack(fields))
if cur[1] and tonumber(cur[6] or '0') > tonumber(ARGV[8]) then
  for i = 1, #fields do cur[i] = cur[i] or '' end
  return cur
end
local kv = {}
for i, f in ipairs(fields) do
  kv[#kv + 1] = f
  kv[#kv + 1] = ARGV[i + 2]
end
redis.call('HSET', KEYS[1], unpack(kv))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
if cur[2] ~= ARGV[4] then
  redis.call('PUBLISH', '` + healthChannel + `', ARGV[2])
end
local out = {}
for i = 1, #fields do out[i] = ARGV[i + 2] end
return out`)
