package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/poise-dev/poise/session"
)

// opsFlags are the flags of `poise ops levels|watch`.
type opsFlags struct {
	redisURL, server, token string
}

func opsFlagSet(verb string, getenv func(string) string, f *opsFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("ops "+verb, flag.ContinueOnError)
	fs.StringVar(&f.redisURL, "redis", "", "Redis `URL` holding the ops view (multi-node)")
	fs.StringVar(&f.server, "server", "http://"+defaultAddr, "a Poise server's base `URL` (single node)")
	fs.StringVar(&f.token, "token", getenv("POISE_OPS_TOKEN"), "ops bearer token (default $POISE_OPS_TOKEN)")
	return fs
}

// ops implements `poise ops levels|watch [-redis URL] [-server URL]`.
// Without -redis it reads a running server's ops API.
func ops(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	var f opsFlags
	if len(args) == 0 || (args[0] != "levels" && args[0] != "watch") {
		if len(args) > 0 && isHelp(args[0]) {
			printHelp(stdout, opsFlagSet("levels|watch", getenv, &f))
			return errHelp
		}
		return usagef("usage: poise ops levels|watch [-redis URL] [-server URL] [-token T]")
	}
	pos, err := parseFlags(opsFlagSet(args[0], getenv, &f), args[1:], stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("ops %s: unexpected argument %q", args[0], pos[0])
	}
	src, err := opsSource(f.redisURL, f.server, f.token)
	if err != nil {
		return err
	}
	defer src.close()
	if args[0] == "levels" {
		return printLevels(ctx, src, stdout)
	}
	return watch(ctx, src, stdout)
}

// opsReader is where the ops command reads sessions and transitions.
type opsReader interface {
	sessions(ctx context.Context) ([]session.SessionRecord, error)
	// follow calls fn for each transition from now on until ctx is done.
	follow(ctx context.Context, fn func(session.Transition)) error
	close()
}

func opsSource(redisURL, server, tok string) (opsReader, error) {
	if redisURL != "" {
		return newRedisOps(redisURL)
	}
	return &httpOps{base: server, token: tok, client: &http.Client{Timeout: 5 * time.Second}}, nil
}

func printLevels(ctx context.Context, src opsReader, w io.Writer) error {
	recs, err := src.sessions(ctx)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for _, r := range recs {
		counts[r.Level]++
	}
	fmt.Fprintf(w, "%d live sessions\n", len(recs))
	for _, l := range []string{"L1", "L2", "L3", "L4"} {
		fmt.Fprintf(w, "%s  %d\n", l, counts[l])
	}
	if len(recs) > 0 {
		fmt.Fprintf(w, "\n%-26s %-5s %-4s %-7s %-10s %s\n", "SESSION", "LEVEL", "LANG", "SENIOR", "CONNECTED", "NODE")
	}
	slices.SortFunc(recs, func(a, b session.SessionRecord) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
	for _, r := range recs {
		fmt.Fprintf(w, "%-26s %-5s %-4s %-7s %-10v %s\n", r.ID, r.Level, r.Lang, r.Seniority, r.Connected, r.Node)
	}
	return nil
}

func watch(ctx context.Context, src opsReader, w io.Writer) error {
	err := src.follow(ctx, func(t session.Transition) {
		fmt.Fprintf(w, "%s  %s  %s → %s  (%s)  node=%s\n", t.At.Format(time.RFC3339Nano), t.Session, t.From, t.To, t.Reason, t.Node)
	})
	if ctx.Err() != nil {
		return nil // stopped by the operator
	}
	return err
}

// httpOps reads a single server's /ops/api.
type httpOps struct {
	base, token string
	client      *http.Client
}

func (h *httpOps) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+path, nil)
	if err != nil {
		return err
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("ops: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("ops: %s: %s: %s", path, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func (h *httpOps) sessions(ctx context.Context) ([]session.SessionRecord, error) {
	var recs []session.SessionRecord
	return recs, h.get(ctx, "/ops/api/sessions", &recs)
}

// follow polls the server's transitions once a second.
func (h *httpOps) follow(ctx context.Context, fn func(session.Transition)) error {
	var since time.Time
	first := true
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		var ts []session.Transition
		if err := h.get(ctx, "/ops/api/transitions?n=1000", &ts); err != nil {
			return err
		}
		for _, t := range ts {
			if t.At.After(since) {
				if !first {
					fn(t)
				}
				since = t.At
			}
		}
		first = false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (h *httpOps) close() {}
