package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/poise-dev/poise/session"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Tunables of the store.
const (
	transitionsCap     = 100000            // approximate stream length (XADD MAXLEN ~)
	defaultTransitions = 10000             // transitions Transitions returns for n <= 0
	scanBatch          = 500               // keys per SCAN step and per pipeline
	defaultKeyTTL      = 150 * time.Second // resume window 120 s + margin
	defaultRefresh     = 10 * time.Second  // live keys re-written this often
	defaultReplayMax   = 4096              // the session's default replay
	refreshTimeout     = 2 * time.Second   // one refresh round
	followBlock        = 1 * time.Second   // XREAD BLOCK of FollowTransitions
	followRetry        = 500 * time.Millisecond
	subscribeTimeout   = 2 * time.Second // WatchTakeovers' first subscription
)

// Config tunes a Store. The zero value of every field means its
// documented default.
type Config struct {
	// TTL is how long a session's keys outlive their last write; a node
	// that dies leaves them for this long, so it should be the resume
	// window plus a margin of at least two refreshes. Default 150s.
	TTL time.Duration
	// Refresh is how often Run re-writes the hashes of this node's live
	// sessions (and retries failed deletes), which keeps them from
	// expiring and brings the ops view back after a Redis outage.
	// Default 10s.
	Refresh time.Duration
	// ReplayMax is how many sent messages per session are kept for a
	// resume on another node. Default 4096 (the session's replay size).
	ReplayMax int
	// Log receives store errors of the background refresh.
	Log zerolog.Logger
}

// Store is the multi-node session.Store and session.ResumeStore: it writes
// the keys of keys.go through a go-redis UniversalClient, so a plain
// server, Sentinel (FailoverOptions / MasterName) and Cluster all work by
// configuration.
//
// Every session key is fenced by an owner id that is random per process:
// a write to a session that another process has taken over (a resume on
// another node) is not applied, and is reported so that the old copy stops.
//
// The store remembers the records that this process wrote and Run writes
// them again every Refresh, so keys do not expire under a live session and
// the ops view catches up after Redis returns. Safe for concurrent use.
type Store struct {
	rdb   redis.UniversalClient
	cfg   Config
	owner string

	mu      sync.Mutex
	live    map[string]session.SessionRecord // this process's sessions; guarded by mu
	deletes map[string]bool                  // deletes still to do; guarded by mu
}

var (
	_ session.Store        = (*Store)(nil)
	_ session.ResumeStore  = (*Store)(nil)
	_ session.TakeoverFeed = (*Store)(nil)
)

// New returns a store over rdb; the caller closes rdb after Run has
// returned.
func New(rdb redis.UniversalClient, cfg Config) *Store {
	if cfg.TTL <= 0 {
		cfg.TTL = defaultKeyTTL
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = defaultRefresh
	}
	if cfg.ReplayMax <= 0 {
		cfg.ReplayMax = defaultReplayMax
	}
	b := make([]byte, 8)
	rand.Read(b)
	return &Store{rdb: rdb, cfg: cfg, owner: hex.EncodeToString(b),
		live: map[string]session.SessionRecord{}, deletes: map[string]bool{}}
}

func (s *Store) putArgs(r session.SessionRecord) []any {
	connected := "0"
	if r.Connected {
		connected = fieldTrue
	}
	return []any{s.owner, s.cfg.TTL.Milliseconds(),
		"level", r.Level, "node", r.Node, "lang", r.Lang, "seniority", r.Seniority,
		"connected", connected, "limit", r.Limit, "updated_at", r.UpdatedAt.UnixMilli()}
}

// PutSession implements session.Store. A session owned by another process is left
// alone and forgotten here.
func (s *Store) PutSession(ctx context.Context, r session.SessionRecord) error {
	s.mu.Lock()
	s.live[r.ID] = r
	delete(s.deletes, r.ID)
	s.mu.Unlock()
	n, err := putSession.Run(ctx, s.rdb, []string{sessionKey(r.ID)}, s.putArgs(r)...).Int()
	if err != nil {
		return fmt.Errorf("redisstore: put %s: %w", r.ID, err)
	}
	if n == 0 {
		s.forgetLive(r.ID)
	}
	return nil
}

func (s *Store) forgetLive(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
}

// DeleteSession implements session.Store; a failed delete is retried by Run.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	s.mu.Lock()
	delete(s.live, id)
	s.deletes[id] = true
	s.mu.Unlock()
	if err := deleteOwned.Run(ctx, s.rdb, []string{sessionKey(id)}, s.owner).Err(); err != nil {
		return fmt.Errorf("redisstore: delete %s: %w", id, err)
	}
	s.mu.Lock()
	delete(s.deletes, id)
	s.mu.Unlock()
	return nil
}

// AddTransition implements session.Store: one entry on the capped stream, and the
// same transition as JSON on the events channel. A transition of a session
// that another process has taken over is a stale copy's and is left out.
func (s *Store) AddTransition(ctx context.Context, t session.Transition) error {
	if o, err := s.rdb.HGet(ctx, sessionKey(t.Session), ownerField).Result(); err == nil && o != s.owner {
		return nil
	}
	payload, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("redisstore: transition: %w", err)
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: transitionsKey, MaxLen: transitionsCap, Approx: true,
			Values: []any{"session", t.Session, "from", t.From, "to", t.To, "reason", t.Reason,
				"node", t.Node, "at", t.At.UnixMilli()}})
		p.Publish(ctx, eventsChannel, payload)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisstore: transition: %w", err)
	}
	return nil
}

// Sessions implements session.Store: it SCANs the session hashes (on every master
// of a cluster), sorted by id.
func (s *Store) Sessions(ctx context.Context) ([]session.SessionRecord, error) {
	keys, err := ScanHashes(ctx, s.rdb, sessionKeyPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("redisstore: scan sessions: %w", err)
	}
	out := make([]session.SessionRecord, 0, len(keys))
	for batch := range slices.Chunk(keys, scanBatch) {
		cmds := make([]*redis.MapStringStringCmd, len(batch))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range batch {
				cmds[i] = p.HGetAll(ctx, k)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("redisstore: read sessions: %w", err)
		}
		for i, c := range cmds {
			if h := c.Val(); len(h) > 0 { // empty: expired since the scan
				out = append(out, parseSession(strings.TrimPrefix(batch[i], sessionKeyPrefix), h))
			}
		}
	}
	slices.SortFunc(out, func(a, b session.SessionRecord) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func parseSession(id string, h map[string]string) session.SessionRecord {
	ms, _ := strconv.ParseInt(h["updated_at"], 10, 64)
	return session.SessionRecord{ID: id, Node: h["node"], Level: h["level"], Lang: h["lang"], Seniority: h["seniority"],
		Connected: h["connected"] == fieldTrue || h["connected"] == "true", Limit: h["limit"], UpdatedAt: time.UnixMilli(ms)}
}

// Transitions implements session.Store with XREVRANGE, oldest first.
func (s *Store) Transitions(ctx context.Context, n int) ([]session.Transition, error) {
	if n <= 0 {
		n = defaultTransitions
	}
	msgs, err := s.rdb.XRevRangeN(ctx, transitionsKey, "+", "-", int64(n)).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: transitions: %w", err)
	}
	out := make([]session.Transition, len(msgs))
	for i, m := range msgs {
		out[len(msgs)-1-i] = parseTransition(m.Values)
	}
	return out, nil
}

func parseTransition(v map[string]any) session.Transition {
	str := func(k string) string { s, _ := v[k].(string); return s }
	ms, _ := strconv.ParseInt(str("at"), 10, 64)
	return session.Transition{Session: str("session"), From: str("from"), To: str("to"), Reason: str("reason"),
		Node: str("node"), At: time.UnixMilli(ms)}
}

// FollowTransitions calls fn for every transition added to the stream from
// now on, until ctx is done (then it returns nil). It reads the stream with
// a blocking XREAD, so it misses nothing while Redis is up, and after a
// Redis outage it carries on from the last entry it saw.
func (s *Store) FollowTransitions(ctx context.Context, fn func(session.Transition)) error {
	last := "$"
	for ctx.Err() == nil {
		res, err := s.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{transitionsKey, last}, Count: 1000, Block: followBlock}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			s.cfg.Log.Warn().Err(err).Msg("redisstore: follow transitions; retrying")
			select {
			case <-ctx.Done():
			case <-time.After(followRetry):
			}
			continue
		}
		for _, st := range res {
			for _, m := range st.Messages {
				fn(parseTransition(m.Values))
				last = m.ID
			}
		}
	}
	return nil
}

// Run re-writes this process's live session hashes every Refresh (which
// keeps them from expiring and restores them after a Redis outage) and
// retries failed deletes, until ctx is done. It returns nil.
func (s *Store) Run(ctx context.Context) error {
	everyRound(ctx, s.cfg.Refresh, refreshTimeout, s.refresh, s.cfg.Log, "redisstore: refresh failed; retrying next round")
	return nil
}

// everyRound calls round every interval, each call bounded by timeout,
// until ctx is done; a failed round is logged (debug) with msg and left to
// the next one.
func everyRound(ctx context.Context, interval, timeout time.Duration, round func(context.Context) error, log zerolog.Logger, msg string) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		if err := round(rctx); err != nil && ctx.Err() == nil {
			log.Debug().Err(err).Msg(msg)
		}
		cancel()
	}
}

// refresh performs one round of Run.
func (s *Store) refresh(ctx context.Context) error {
	s.mu.Lock()
	recs := make([]session.SessionRecord, 0, len(s.live))
	for _, r := range s.live {
		recs = append(recs, r)
	}
	dels := make([]string, 0, len(s.deletes))
	for id := range s.deletes {
		dels = append(dels, id)
	}
	s.mu.Unlock()
	for batch := range slices.Chunk(recs, scanBatch) {
		var puts []*redis.Cmd
		err := s.scripted(ctx, []*redis.Script{putSession}, func(p redis.Pipeliner) {
			puts = puts[:0]
			for _, r := range batch {
				puts = append(puts, putSession.EvalSha(ctx, p, []string{sessionKey(r.ID)}, s.putArgs(r)...))
			}
		})
		if err != nil {
			return err
		}
		for i, c := range puts {
			if n, _ := c.Int(); n == 0 {
				s.forgetLive(batch[i].ID)
			}
		}
	}
	for _, id := range dels {
		if err := s.DeleteSession(ctx, id); err != nil {
			return err
		}
	}
	return nil
}
