package redisstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/poise-dev/poise/session/quota"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Tunables of the limits' keys (keys.go: limitKeyPrefix).
const (
	limitKeyMargin      = time.Minute            // a window's key outlives the window by this
	defaultLimitTimeout = 100 * time.Millisecond // per Redis call of the limits
	defaultLease        = 60 * time.Second       // a held session's lease; Run renews it every third of it
	leaseRenewTimeout   = 2 * time.Second        // one renewal round
)

// CountersConfig tunes Counters. The zero value of every field means its
// documented default.
type CountersConfig struct {
	// Timeout bounds every Redis call. Default 100ms: a limit check must
	// never hold a question up for long (quota.FallbackCounters then
	// counts locally for a while).
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

// Counters are the quota.Counters shared by every node through Redis:
// window counts under poise:limit:<key>:<window start>, changed by one
// script each (check and INCRBY in one step), and held members in sorted
// sets under poise:limit:<key>. Safe for concurrent use.
type Counters struct {
	rdb redis.UniversalClient
	cfg CountersConfig

	mu   sync.Mutex
	held map[string]map[string]struct{} // this process's members, renewed by Run; guarded by mu
}

var _ quota.Counters = (*Counters)(nil)

// NewCounters returns counters over rdb; the caller closes rdb after
// Run has returned.
func NewCounters(rdb redis.UniversalClient, cfg CountersConfig) *Counters {
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultLimitTimeout
	}
	if cfg.Lease <= 0 {
		cfg.Lease = defaultLease
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Counters{rdb: rdb, cfg: cfg, held: map[string]map[string]struct{}{}}
}

// Add implements quota.Counters.
func (r *Counters) Add(ctx context.Context, key string, n, limit int64, w time.Duration, now time.Time) (int64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	ttl := quota.WindowEnd(now, w).Sub(now) + limitKeyMargin
	res, err := addCount.Run(ctx, r.rdb, []string{limitKeyPrefix + quota.WindowKey(key, w, now)}, n, limit, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("redisstore: limit %s: %w", key, err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("redisstore: limit %s: script returned %v", key, res)
	}
	return res[0], res[1] == 1, nil
}

// Hold implements quota.Counters: a member held, or not known to be refused
// (Redis failed), is remembered for Run's renewals, so a hold that fails
// now is written by the next renewal.
func (r *Counters) Hold(ctx context.Context, key, member string, limit int) (bool, error) {
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
		return false, fmt.Errorf("redisstore: hold %s: %w", key, err)
	}
	return true, nil
}

// lease queues the writes that hold members of key for one more Lease.
func (r *Counters) lease(ctx context.Context, p redis.Pipeliner, key string, members []string) {
	expires := float64(r.cfg.Now().Add(r.cfg.Lease).UnixMilli())
	zs := make([]redis.Z, len(members))
	for i, m := range members {
		zs[i] = redis.Z{Score: expires, Member: m}
	}
	p.ZAdd(ctx, limitKeyPrefix+key, zs...)
	p.PExpire(ctx, limitKeyPrefix+key, 2*r.cfg.Lease)
}

// Release implements quota.Counters.
func (r *Counters) Release(ctx context.Context, key, member string) error {
	r.mu.Lock()
	delete(r.held[key], member)
	if len(r.held[key]) == 0 {
		delete(r.held, key)
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if err := r.rdb.ZRem(ctx, limitKeyPrefix+key, member).Err(); err != nil {
		return fmt.Errorf("redisstore: release %s: %w", key, err)
	}
	return nil
}

// Run renews the leases of this process's held members every Lease/3
// until ctx is done; after a Redis outage the first round writes them
// back. It returns nil.
func (r *Counters) Run(ctx context.Context) error {
	everyRound(ctx, r.cfg.Lease/3, leaseRenewTimeout, r.renew, r.cfg.Log, "redisstore: lease renewal failed; retrying next round")
	return nil
}

// renew performs one round of Run.
func (r *Counters) renew(ctx context.Context) error {
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
