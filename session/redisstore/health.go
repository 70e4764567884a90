package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/poise-dev/poise/tiers/health"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Health tunables.
const (
	healthRecordTTL = 24 * time.Hour // a record nobody writes for this long is forgotten
	watchRetry      = time.Second    // between subscription attempts
)

// healthFields are the fields of a poise:health:{backend} hash, in the
// order the merge script takes and returns them.
var healthFields = []string{"state", "circuit", "consecutive_pass", "consecutive_fail", "updated_at",
	"changed_at", "open_until", "cooldown_ms", "last_trial", "reason", "node"}

// HealthStore is tiers/health's Store shared by every node through
// Redis: one hash per backend, merged by one script so that the record
// whose circuit changed last wins on every node. It works on a plain
// server, Sentinel or Cluster (the script touches one key). Safe for
// concurrent use; the caller closes rdb.
type HealthStore struct {
	rdb redis.UniversalClient
	log zerolog.Logger
}

// NewHealthStore returns the health store over rdb.
func NewHealthStore(rdb redis.UniversalClient, log zerolog.Logger) *HealthStore {
	return &HealthStore{rdb: rdb, log: log}
}

// Merge implements health.Store. A merge that changes the stored circuit
// is published on poise:health:changes for the other nodes' Watch.
func (s *HealthStore) Merge(ctx context.Context, rec health.BackendState) (health.BackendState, error) {
	args := []any{healthRecordTTL.Milliseconds(), rec.Name}
	for _, v := range healthValues(rec) {
		args = append(args, v)
	}
	res, err := mergeHealth.Run(ctx, s.rdb, []string{healthKey(rec.Name)}, args...).StringSlice()
	if err != nil {
		return health.BackendState{}, fmt.Errorf("redisstore: health merge %s: %w", rec.Name, err)
	}
	return parseHealth(rec.Name, res), nil
}

// States implements health.Store: it SCANs the records (on every master
// of a cluster).
func (s *HealthStore) States(ctx context.Context) ([]health.BackendState, error) {
	keys, err := ScanHashes(ctx, s.rdb, healthKeyPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("redisstore: health scan: %w", err)
	}
	out := make([]health.BackendState, 0, len(keys))
	for batch := range slices.Chunk(keys, scanBatch) {
		cmds := make([]*redis.SliceCmd, len(batch))
		_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range batch {
				cmds[i] = p.HMGet(ctx, k, healthFields...)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("redisstore: health states: %w", err)
		}
		for i, c := range cmds {
			v := c.Val()
			if len(v) < len(healthFields) || v[0] == nil { // expired since the scan
				continue
			}
			strs := make([]string, len(v))
			for j, x := range v {
				strs[j], _ = x.(string)
			}
			out = append(out, parseHealth(strings.TrimPrefix(batch[i], healthKeyPrefix), strs))
		}
	}
	slices.SortFunc(out, func(a, b health.BackendState) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Watch implements health.Watcher: it calls changed whenever a node
// changes a stored circuit, until ctx is done. It subscribes to
// poise:health:changes (again after a Redis outage) and also calls
// changed after each (re)subscription, since changes may have been
// missed meanwhile.
func (s *HealthStore) Watch(ctx context.Context, changed func()) {
	for ctx.Err() == nil {
		ps := s.rdb.Subscribe(ctx, healthChannel)
		if _, err := ps.Receive(ctx); err != nil {
			ps.Close()
			if ctx.Err() == nil {
				s.log.Debug().Err(err).Msg("redisstore: health: subscribe failed; retrying")
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

// healthValues are rec's field values in healthFields order; times are
// unix ms (0 for the zero time).
func healthValues(r health.BackendState) []string {
	t := func(x time.Time) string {
		if x.IsZero() {
			return "0"
		}
		return strconv.FormatInt(x.UnixMilli(), 10)
	}
	return []string{string(r.State), string(r.Circuit), strconv.Itoa(r.ConsecutivePass),
		strconv.Itoa(r.ConsecutiveFail), t(r.UpdatedAt), t(r.ChangedAt), t(r.OpenUntil),
		strconv.FormatInt(r.CooldownMS, 10), t(r.LastTrial), r.Reason, r.Node}
}

// parseHealth reads a record from its field values in healthFields order.
func parseHealth(name string, v []string) health.BackendState {
	v = append(v, make([]string, max(0, len(healthFields)-len(v)))...)
	n := func(s string) int64 { x, _ := strconv.ParseInt(s, 10, 64); return x }
	t := func(s string) time.Time {
		if x := n(s); x != 0 {
			return time.UnixMilli(x)
		}
		return time.Time{}
	}
	return health.BackendState{Name: name, State: health.State(v[0]), Circuit: health.Circuit(v[1]),
		ConsecutivePass: int(n(v[2])), ConsecutiveFail: int(n(v[3])), UpdatedAt: t(v[4]), ChangedAt: t(v[5]),
		OpenUntil: t(v[6]), CooldownMS: n(v[7]), LastTrial: t(v[8]), Reason: v[9], Node: v[10]}
}

// ScanHashes returns the hash keys matching pattern, sorted and without
// duplicates, from every master of a cluster.
func ScanHashes(ctx context.Context, rdb redis.UniversalClient, pattern string) ([]string, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	scan := func(ctx context.Context, c redis.Cmdable) error {
		var cursor uint64
		for {
			keys, next, err := c.ScanType(ctx, cursor, pattern, scanBatch, "hash").Result()
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
