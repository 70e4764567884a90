package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Redis keys of the limits, and their tunables. Window counts are plain
// integers; the held sessions of a subject are a sorted set scored by
// lease expiry (unix ms).
const (
	limitKeyPrefix      = "poise:limit:"
	limitKeyMargin      = time.Minute            // a window's key outlives the window by this
	defaultLimitTimeout = 100 * time.Millisecond // per Redis call of the limits
	defaultLease        = 60 * time.Second       // a held session's lease; Run renews it every third of it
	leaseRenewTimeout   = 2 * time.Second        // one renewal round
)

// RedisCountersConfig tunes RedisCounters. The zero value of every field
// means its documented default.
type RedisCountersConfig struct {
	// Timeout bounds every Redis call. Default 100ms: a limit check must
	// never hold a question up for long (FallbackCounters then counts
	// locally for a while).
	Timeout time.Duration
	// Lease is how long a held member counts without a renewal; Run
	// renews this process's members every Lease/3, so the sessions of a
	// node that died stop counting after at most Lease. Default 60s.
	Lease time.Duration
	// Now is the clock of windows and leases. Default time.Now.
	Now func() time.Time
	// Log receives errors of the background renewal.
	Log zerolog.Logger
}

// RedisCounters are Counters shared by every node through Redis: window
// counts under poise:limit:<key>:<window start>, changed by one script
// each (check and INCRBY in one step), and held members in sorted sets
// under poise:limit:<key>. Safe for concurrent use.
type RedisCounters struct {
	rdb redis.UniversalClient
	cfg RedisCountersConfig

	mu   sync.Mutex
	held map[string]map[string]struct{} // this process's members, renewed by Run; guarded by mu
}

// NewRedisCounters returns counters over rdb; the caller closes rdb after
// Run has returned.
func NewRedisCounters(rdb redis.UniversalClient, cfg RedisCountersConfig) *RedisCounters {
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultLimitTimeout
	}
	if cfg.Lease <= 0 {
		cfg.Lease = defaultLease
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &RedisCounters{rdb: rdb, cfg: cfg, held: map[string]map[string]struct{}{}}
}

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

// Add implements Counters.
func (r *RedisCounters) Add(ctx context.Context, key string, n, limit int64, w time.Duration, now time.Time) (int64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	ttl := windowEnd(now, w).Sub(now) + limitKeyMargin
	res, err := addCount.Run(ctx, r.rdb, []string{limitKeyPrefix + windowKey(key, w, now)}, n, limit, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("session: redis: limit %s: %w", key, err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("session: redis: limit %s: script returned %v", key, res)
	}
	return res[0], res[1] == 1, nil
}

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

// Hold implements Counters: a member held, or not known to be refused
// (Redis failed), is remembered for Run's renewals, so a hold that fails
// now is written by the next renewal.
func (r *RedisCounters) Hold(ctx context.Context, key, member string, limit int) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	now := r.cfg.Now()
	held, err := holdLease.Run(ctx, r.rdb, []string{limitKeyPrefix + key}, now.UnixMilli(),
		now.Add(r.cfg.Lease).UnixMilli(), member, limit, (2 * r.cfg.Lease).Milliseconds()).Int()
	if err == nil && held == 0 {
		return false, nil
	}
	r.mu.Lock()
	set := r.held[key]
	if set == nil {
		set = map[string]struct{}{}
		r.held[key] = set
	}
	set[member] = struct{}{}
	r.mu.Unlock()
	if err != nil {
		return false, fmt.Errorf("session: redis: hold %s: %w", key, err)
	}
	return true, nil
}

// lease queues the writes that hold members of key for one more Lease.
func (r *RedisCounters) lease(ctx context.Context, p redis.Pipeliner, key string, members []string) {
	expires := float64(r.cfg.Now().Add(r.cfg.Lease).UnixMilli())
	zs := make([]redis.Z, len(members))
	for i, m := range members {
		zs[i] = redis.Z{Score: expires, Member: m}
	}
	p.ZAdd(ctx, limitKeyPrefix+key, zs...)
	p.PExpire(ctx, limitKeyPrefix+key, 2*r.cfg.Lease)
}

// Release implements Counters.
func (r *RedisCounters) Release(ctx context.Context, key, member string) error {
	r.mu.Lock()
	delete(r.held[key], member)
	if len(r.held[key]) == 0 {
		delete(r.held, key)
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if err := r.rdb.ZRem(ctx, limitKeyPrefix+key, member).Err(); err != nil {
		return fmt.Errorf("session: redis: release %s: %w", key, err)
	}
	return nil
}

// Run renews the leases of this process's held members every Lease/3
// until ctx is done; after a Redis outage the first round writes them
// back. It returns nil.
func (r *RedisCounters) Run(ctx context.Context) error {
	everyRound(ctx, r.cfg.Lease/3, leaseRenewTimeout, r.renew, r.cfg.Log, "session: redis: lease renewal failed; retrying next round")
	return nil
}

// renew performs one round of Run.
func (r *RedisCounters) renew(ctx context.Context) error {
	r.mu.Lock()
	held := make(map[string][]string, len(r.held))
	for key, set := range r.held {
		for m := range set {
			held[key] = append(held[key], m)
		}
	}
	r.mu.Unlock()
	if len(held) == 0 {
		return nil
	}
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for key, members := range held {
			r.lease(ctx, p, key, members)
		}
		return nil
	})
	return err
}
