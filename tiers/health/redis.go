package health

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Redis keys of the shared health state.
//
//	poise:health:{name}         hash (docs/deploy.md): state up|down,
//	                            consecutive_pass, consecutive_fail, updated_at
//	                            (unix ms); and our round bookkeeping: round,
//	                            round_pass, fail_before
//	poise:health-events:{key}   sorted set: event id → unix ms
//	poise:health:changes        pub/sub: a record's state changed (payload:
//	                            its name)
const (
	healthKeyPrefix    = "poise:health:"
	healthEventsPrefix = "poise:health-events:"
	healthChannel      = "poise:health:changes"
	healthRecordTTL    = 24 * time.Hour // a record nobody writes for this long is forgotten
	healthEventsMargin = time.Minute    // event sets outlive their window by this much
	watchRetry         = time.Second    // between subscription attempts
	scanCount          = 200            // keys per SCAN step
)

// RedisStore is the Store shared by every node through Redis.
// Each method is one Lua script, so the per-round merge of MemoryStore is
// atomic across nodes: two nodes probing the same round count once, and a
// pass never erases a fail of the same round. It works on a plain server,
// Sentinel or Cluster (each script touches one key). Safe for concurrent
// use.
type RedisStore struct {
	rdb redis.UniversalClient
	log zerolog.Logger
}

// NewRedisStore returns a store over rdb; the caller closes rdb.
func NewRedisStore(rdb redis.UniversalClient, log zerolog.Logger) *RedisStore {
	return &RedisStore{rdb: rdb, log: log}
}

func healthKey(name string) string { return healthKeyPrefix + name }

// Every record script returns {state, consecutive_pass, consecutive_fail,
// updated_at} (and SetState a changed flag); ARGV[1] of each is the record
// TTL in ms.

// probeScript: ARGV ttl, round, pass (1|0), at ms.
var probeScript = redis.NewScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'consecutive_pass', 'consecutive_fail', 'round', 'round_pass', 'fail_before', 'updated_at')
local state = r[1] or 'up'
local cp = tonumber(r[2]) or 0
local cf = tonumber(r[3]) or 0
local upd = r[7] or '0'
local round = tonumber(ARGV[2])
local cur = tonumber(r[4])
local pass = ARGV[3] == '1'
if cur == nil or round > cur then
  local before = cf
  if pass then cp = cp + 1; cf = 0 else cf = cf + 1; cp = 0 end
  upd = ARGV[4]
  redis.call('HSET', KEYS[1], 'state', state, 'consecutive_pass', cp, 'consecutive_fail', cf,
    'round', ARGV[2], 'round_pass', ARGV[3], 'fail_before', before, 'updated_at', upd)
elseif round == cur and r[5] == '1' and not pass then
  cp = 0
  cf = (tonumber(r[6]) or 0) + 1
  upd = ARGV[4]
  redis.call('HSET', KEYS[1], 'state', state, 'consecutive_pass', cp, 'consecutive_fail', cf,
    'round_pass', '0', 'updated_at', upd)
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {state, cp, cf, upd}`)

// failScript: ARGV ttl, at ms.
var failScript = redis.NewScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'consecutive_fail')
local state = r[1] or 'up'
local cf = (tonumber(r[2]) or 0) + 1
redis.call('HSET', KEYS[1], 'state', state, 'consecutive_pass', 0, 'consecutive_fail', cf,
  'round_pass', '0', 'updated_at', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {state, 0, cf, ARGV[2]}`)

// setStateScript: ARGV ttl, state, at ms, name (published on a change).
var setStateScript = redis.NewScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'consecutive_pass', 'consecutive_fail', 'updated_at')
local state = r[1] or 'up'
if state == ARGV[2] then
  return {state, tonumber(r[2]) or 0, tonumber(r[3]) or 0, r[4] or '0', 0}
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'consecutive_pass', 0, 'consecutive_fail', 0,
  'fail_before', 0, 'updated_at', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PUBLISH', '` + healthChannel + `', ARGV[4])
return {ARGV[2], 0, 0, ARGV[3], 1}`)

// addEventScript: ARGV id, at ms, window ms, ttl ms.
var addEventScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[2]) - tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return redis.call('ZCARD', KEYS[1])`)

var recordTTL = healthRecordTTL.Milliseconds()

// Probe implements Store.
func (s *RedisStore) Probe(ctx context.Context, name string, round int64, pass bool, at time.Time) (BackendState, error) {
	p := "0"
	if pass {
		p = "1"
	}
	res, err := probeScript.Run(ctx, s.rdb, []string{healthKey(name)}, recordTTL, round, p, at.UnixMilli()).Slice()
	st, _, err := parseRecord(name, res, err)
	return st, wrapHealth("probe", name, err)
}

// Fail implements Store.
func (s *RedisStore) Fail(ctx context.Context, name string, at time.Time) (BackendState, error) {
	res, err := failScript.Run(ctx, s.rdb, []string{healthKey(name)}, recordTTL, at.UnixMilli()).Slice()
	st, _, err := parseRecord(name, res, err)
	return st, wrapHealth("fail", name, err)
}

// SetState implements Store; a change is published on
// poise:health:changes for the other nodes' Watch.
func (s *RedisStore) SetState(ctx context.Context, name string, st State, at time.Time) (BackendState, bool, error) {
	res, err := setStateScript.Run(ctx, s.rdb, []string{healthKey(name)}, recordTTL, string(st), at.UnixMilli(), name).Slice()
	rec, changed, err := parseRecord(name, res, err)
	return rec, changed, wrapHealth("set state", name, err)
}

// AddEvent implements Store.
func (s *RedisStore) AddEvent(ctx context.Context, key, id string, at time.Time, window time.Duration) (int, error) {
	n, err := addEventScript.Run(ctx, s.rdb, []string{healthEventsPrefix + key}, id, at.UnixMilli(),
		window.Milliseconds(), (window + healthEventsMargin).Milliseconds()).Int()
	return n, wrapHealth("add event", key, err)
}

// ClearEvents implements Store.
func (s *RedisStore) ClearEvents(ctx context.Context, key string) error {
	return wrapHealth("clear events", key, s.rdb.Del(ctx, healthEventsPrefix+key).Err())
}

// States implements Store: it SCANs the records (on every master of
// a cluster).
func (s *RedisStore) States(ctx context.Context) ([]BackendState, error) {
	keys, err := ScanHashes(ctx, s.rdb, healthKeyPrefix+"*")
	if err != nil {
		return nil, wrapHealth("scan", "", err)
	}
	cmds := make([]*redis.SliceCmd, len(keys))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, k, "state", "consecutive_pass", "consecutive_fail", "updated_at")
		}
		return nil
	})
	if err != nil {
		return nil, wrapHealth("states", "", err)
	}
	out := make([]BackendState, 0, len(keys))
	for i, c := range cmds {
		v := c.Val()
		if len(v) < 4 || v[0] == nil { // expired since the scan
			continue
		}
		out = append(out, BackendState{Name: strings.TrimPrefix(keys[i], healthKeyPrefix), State: State(redisStr(v[0])),
			ConsecutivePass: redisInt(v[1]), ConsecutiveFail: redisInt(v[2]), UpdatedAt: time.UnixMilli(int64(redisInt(v[3])))})
	}
	slices.SortFunc(out, func(a, b BackendState) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Watch calls changed whenever a node changes a record's state, until ctx
// is done. It subscribes to poise:health:changes (again after a Redis
// outage; go-redis re-subscribes a broken connection by itself) and also
// calls changed after each (re)subscription, since changes may have been
// missed meanwhile. It returns when ctx is done.
func (s *RedisStore) Watch(ctx context.Context, changed func()) {
	for ctx.Err() == nil {
		ps := s.rdb.Subscribe(ctx, healthChannel)
		if _, err := ps.Receive(ctx); err != nil {
			ps.Close()
			if ctx.Err() == nil {
				s.log.Debug().Err(err).Msg("tiers: health: subscribe to shared changes failed; retrying")
			}
			select {
			case <-ctx.Done():
			case <-time.After(watchRetry):
			}
			continue
		}
		changed()
		ch := ps.Channel()
	read:
		for {
			select {
			case <-ctx.Done():
				break read
			case _, ok := <-ch:
				if !ok {
					break read
				}
				changed()
			}
		}
		ps.Close()
	}
}

// parseRecord decodes a record script's reply.
func parseRecord(name string, res []any, err error) (BackendState, bool, error) {
	if err != nil {
		return BackendState{}, false, err
	}
	if len(res) < 4 {
		return BackendState{}, false, fmt.Errorf("short reply %v", res)
	}
	st := BackendState{Name: name, State: State(redisStr(res[0])), ConsecutivePass: redisInt(res[1]),
		ConsecutiveFail: redisInt(res[2]), UpdatedAt: time.UnixMilli(int64(redisInt(res[3])))}
	changed := len(res) > 4 && redisInt(res[4]) == 1
	return st, changed, nil
}

func wrapHealth(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("tiers: health: redis %s %s: %w", op, name, err)
}

// redisStr and redisInt read Redis replies, which come as strings or integers.
func redisStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

func redisInt(v any) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return int(n)
	}
	return 0
}

// ScanHashes returns the hash keys matching pattern, sorted and without
// duplicates, from every master of a cluster. The session's Redis store
// lists its session hashes with it too.
func ScanHashes(ctx context.Context, rdb redis.UniversalClient, pattern string) ([]string, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	scan := func(ctx context.Context, c redis.Cmdable) error {
		var cursor uint64
		for {
			keys, next, err := c.ScanType(ctx, cursor, pattern, scanCount, "hash").Result()
			if err != nil {
				return err
			}
			mu.Lock()
			for _, k := range keys {
				seen[k] = true
			}
			mu.Unlock()
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	var err error
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return scan(ctx, m) })
	} else {
		err = scan(ctx, rdb)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, err
}
