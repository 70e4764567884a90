package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/poise-dev/poise/session"
	"github.com/redis/go-redis/v9"
)

// WriteResume implements session.ResumeStore in one pipelined round trip.
func (s *Store) WriteResume(ctx context.Context, writes []session.ResumeWrite) ([]string, error) {
	cmds := make([]*redis.Cmd, 0, len(writes))
	err := s.scripted(ctx, []*redis.Script{writeResume}, func(p redis.Pipeliner) {
		cmds = cmds[:0]
		for _, w := range writes {
			cmds = append(cmds, writeResume.EvalSha(ctx, p, []string{resumeKey(w.ID), replayKey(w.ID)}, s.resumeArgs(w)...))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("redisstore: write resume state: %w", err)
	}
	var disowned []string
	for i, c := range cmds {
		if n, _ := c.Int(); n == 0 {
			disowned = append(disowned, writes[i].ID)
		}
	}
	return disowned, nil
}

func (s *Store) resumeArgs(w session.ResumeWrite) []any {
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

// TakeOverAs implements session.ResumeStore.
func (s *Store) TakeOverAs(ctx context.Context, id, token, subject string) (session.ResumeState, error) {
	res, err := takeOver.Run(ctx, s.rdb, []string{resumeKey(id), replayKey(id)}, s.owner, tokenHash(token),
		s.cfg.TTL.Milliseconds(), subject).Slice()
	if err != nil {
		return session.ResumeState{}, fmt.Errorf("redisstore: take over %s: %w", id, err)
	}
	switch code, _ := res[0].(int64); {
	case code == 0:
		return session.ResumeState{}, session.ErrNoResumeState
	case code < 0:
		return session.ResumeState{}, session.ErrResumeToken
	case len(res) < 3:
		return session.ResumeState{}, fmt.Errorf("redisstore: take over %s: short reply", id)
	}
	st, err := parseResume(id, res[1], res[2])
	if err != nil {
		return st, err
	}
	st.Token = token // the store keeps only its hash
	// The ops hash follows: later writes of the old owner are not applied.
	if err := claimSession.Run(ctx, s.rdb, []string{sessionKey(id)}, s.owner).Err(); err != nil {
		return st, fmt.Errorf("redisstore: claim %s: %w", id, err)
	}
	// The old owner stops at once; if this is lost, at its next write.
	if err := s.rdb.Publish(ctx, takeoversChannel, id+" "+s.owner).Err(); err != nil {
		s.cfg.Log.Debug().Err(err).Str("session", id).Msg("redisstore: take-over not announced")
	}
	return st, nil
}

// WatchTakeovers implements session.TakeoverFeed over the pub/sub channel
// poise:takeovers: it reports the sessions that another process took
// over, until ctx is done. go-redis resubscribes after a lost connection.
func (s *Store) WatchTakeovers(ctx context.Context, taken func(id string)) {
	sub := s.rdb.Subscribe(ctx, takeoversChannel)
	defer sub.Close()
	// Wait (bounded) for the subscription, so that take-overs from the
	// moment a hub starts are heard; without Redis, go on: the channel
	// subscribes once it can.
	rctx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	if _, err := sub.Receive(rctx); err != nil {
		s.cfg.Log.Debug().Err(err).Msg("redisstore: take-over channel not subscribed yet")
	}
	cancel()
	msgs := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-msgs:
			if !ok {
				return
			}
			if id, owner, found := strings.Cut(m.Payload, " "); found && owner != s.owner {
				taken(id)
			}
		}
	}
}

// Owns implements session.ResumeStore.
func (s *Store) Owns(ctx context.Context, id string) (bool, error) {
	o, err := s.rdb.HGet(ctx, resumeKey(id), ownerField).Result()
	switch {
	case err == redis.Nil:
		return true, nil
	case err != nil:
		return true, fmt.Errorf("redisstore: owner of %s: %w", id, err)
	}
	return o == s.owner, nil
}

// parseResume decodes takeOver's header list and replay entries.
func parseResume(id string, header, entries any) (session.ResumeState, error) {
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
	st := session.ResumeState{ID: id, Subject: h["subject"], Level: h["level"], Node: h["node"],
		AutoAnswer: h["auto_answer"] == fieldTrue}
	st.LastSeq, _ = strconv.ParseUint(h["last_seq"], 10, 64)
	if p := h["profile"]; p != "" {
		if err := json.Unmarshal([]byte(p), &st.Profile); err != nil {
			return st, fmt.Errorf("redisstore: resume state of %s: profile: %w", id, err)
		}
	}
	list, _ := entries.([]any)
	for i, e := range list {
		str, _ := e.(string)
		seqText, msg, ok := strings.Cut(str, " ")
		seq, err := strconv.ParseUint(seqText, 10, 64)
		if !ok || err != nil {
			return st, fmt.Errorf("redisstore: resume state of %s: bad replay entry %d", id, i)
		}
		if i == 0 {
			st.FirstSeq = seq
		} else if seq != st.FirstSeq+uint64(i) {
			return st, fmt.Errorf("redisstore: resume state of %s: replay not contiguous at %d", id, seq)
		}
		st.Messages = append(st.Messages, []byte(msg))
	}
	return st, nil
}
