package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/poise-dev/poise/session"
	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/session/redisstore"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Redis client defaults: fail fast, so that a dead or hung Redis costs a
// background write one short timeout and never a session anything. A
// URL's query may override the timeouts.
const (
	redisDialTimeout = 300 * time.Millisecond
	redisIOTimeout   = 300 * time.Millisecond // read and write
	redisPoolTimeout = 500 * time.Millisecond
	redisKeyMargin   = 30 * time.Second  // session keys outlive the resume window by this
	resumeWindowDef  = 120 * time.Second // resume_window_ms's default (session.Config)
	redisRefresh     = 10 * time.Second  // session hashes re-written at least this often ...
	redisRefreshes   = 4                 // ... and this many times per resume window
	redisLogBurst    = 5                 // go-redis log lines per redisLogPeriod
	redisLogPeriod   = 10 * time.Second
)

// redisOptions parses redis_url. One URL covers the three deployments:
//
//	redis://[user:pass@]host:port[/db]                       one server (rediss:// for TLS)
//	redis://[user:pass@]s1:26379/0?master_name=M&addr=s2:26379  Sentinel: host and each addr are sentinels
//	redis://[user:pass@]n1:6379?cluster=true&addr=n2:6379       Cluster seed nodes (also: two or more addrs)
//
// Query parameters dial_timeout, read_timeout and write_timeout (Go
// durations) override the fast-fail defaults; sentinel_password sets the
// sentinels' own password. Other parameters are an error.
func redisOptions(raw string) (*redis.UniversalOptions, error) {
	u, err := url.Parse(raw)
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err // without the URL, which may hold a password
	}
	if err != nil {
		return nil, fmt.Errorf("redis_url: %w", err)
	}
	o := &redis.UniversalOptions{
		DialTimeout: redisDialTimeout, ReadTimeout: redisIOTimeout, WriteTimeout: redisIOTimeout,
		PoolTimeout: redisPoolTimeout, MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true,
	}
	switch u.Scheme {
	case "redis":
	case "rediss":
		o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: u.Hostname()}
	default:
		return nil, fmt.Errorf("redis_url: scheme must be redis or rediss, got %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("redis_url: no host in %q", redact(u))
	}
	o.Addrs = []string{hostPort(u.Host)}
	if u.User != nil {
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if o.DB, err = strconv.Atoi(db); err != nil {
			return nil, fmt.Errorf("redis_url: database %q is not a number", db)
		}
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "addr":
			for _, a := range vs {
				o.Addrs = append(o.Addrs, hostPort(a))
			}
		case "master_name":
			o.MasterName = v
		case "sentinel_password":
			o.SentinelPassword = v
		case "cluster":
			o.IsClusterMode = v == "true" || v == "1"
		case "dial_timeout", "read_timeout", "write_timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, fmt.Errorf("redis_url: %s: %w", k, err)
			}
			switch k {
			case "dial_timeout":
				o.DialTimeout = d
			case "read_timeout":
				o.ReadTimeout = d
			default:
				o.WriteTimeout = d
			}
		default:
			return nil, fmt.Errorf("redis_url: unknown parameter %q", k)
		}
	}
	return o, nil
}

func hostPort(h string) string {
	if strings.Contains(h, ":") {
		return h
	}
	return h + ":6379"
}

// redact drops the password from a URL for messages.
func redact(u *url.URL) string { return u.Redacted() }

// redisLogger routes go-redis's own log lines (failed dials, pool
// trouble) into zerolog, sampled so that an outage does not flood the log.
type redisLogger struct{ log zerolog.Logger }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Warn().Msgf(format, v...)
}

// newRedisClient connects the client of redis_url (lazily: go-redis dials
// on first use) and routes go-redis's logs into log.
func newRedisClient(raw string, log zerolog.Logger) (redis.UniversalClient, error) {
	o, err := redisOptions(raw)
	if err != nil {
		return nil, err
	}
	redis.SetLogger(redisLogger{log: log.With().Str("component", "redis").Logger().
		Sample(&zerolog.BurstSampler{Burst: redisLogBurst, Period: redisLogPeriod})})
	return redis.NewUniversalClient(o), nil
}

// startRedis wires the shared stores when redis_url is set: the session
// store (ops view and resume state), the limits' counters (poise:limit:*,
// with this node's local counting while Redis is away) and the health
// store (circuits merged in the background: while Redis is away each
// node judges alone). Their loops run until ctx is
// done; the client is closed by close after them.
func (a *app) startRedis(ctx context.Context, node string, resumeWindow time.Duration) ([]health.Option, error) {
	rdb, err := newRedisClient(a.cfg.RedisURL, a.log)
	if err != nil {
		return nil, err
	}
	a.stop = append(a.stop, func() { rdb.Close() })
	if resumeWindow <= 0 {
		resumeWindow = resumeWindowDef
	}
	store := redisstore.New(rdb, redisstore.Config{TTL: resumeWindow + redisKeyMargin,
		Refresh: min(redisRefresh, resumeWindow/redisRefreshes), Log: a.log})
	a.store, a.resume = store, store
	a.wg.Go(func() { store.Run(ctx) })
	counters := redisstore.NewCounters(rdb, redisstore.CountersConfig{Log: a.log})
	a.counters = quota.NewFallbackCounters(counters, 0, nil, a.log)
	a.wg.Go(func() { counters.Run(ctx) })
	b := make([]byte, 4)
	rand.Read(b)
	a.log.Info().Str("redis", redisDisplay(a.cfg.RedisURL)).Msg("shared state in Redis")
	// The node's name in the circuit records is unique per process, even on one host.
	return []health.Option{health.WithStore(redisstore.NewHealthStore(rdb, a.log)),
		health.WithNode(node + "-" + hex.EncodeToString(b))}, nil
}

func redisDisplay(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	return redact(u)
}

// redisOps reads the ops view from Redis, for `poise ops -redis URL`.
type redisOps struct {
	rdb   redis.UniversalClient
	store *redisstore.Store
}

func newRedisOps(raw string) (*redisOps, error) {
	o, err := redisOptions(raw)
	if err != nil {
		return nil, err
	}
	o.ReadTimeout = max(o.ReadTimeout, 2*time.Second) // a scan of many sessions; XREAD blocks 1 s
	rdb := redis.NewUniversalClient(o)
	redis.SetLogger(redisLogger{log: zerolog.Nop()})
	return &redisOps{rdb: rdb, store: redisstore.New(rdb, redisstore.Config{})}, nil
}

func (r *redisOps) sessions(ctx context.Context) ([]session.SessionRecord, error) {
	return r.store.Sessions(ctx)
}

func (r *redisOps) follow(ctx context.Context, fn func(session.Transition)) error {
	return r.store.FollowTransitions(ctx, fn)
}

func (r *redisOps) close() { r.rdb.Close() }
