package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
)

// suite is what every scenario shares: the binaries, the simulators, the
// audio clip and the run's settings.
type suite struct {
	bins     bins
	work     string // scratch directory: configs and process logs
	out      string // report directory
	sims     map[string]*sim
	clip     *load.Clip
	seed     int64
	sessions int
	log      func(format string, args ...any)
}

// stepRun is a step as it ran.
type stepRun struct {
	AtMS float64 `json:"at_ms"`
	What string  `json:"what"`
	Kind string  `json:"kind"`
	Err  string  `json:"err,omitempty"`
}

// run runs one scenario end to end and returns its outcome; the error is
// a failure of the rig (a process that would not start), not of Poise.
func (s *suite) run(ctx context.Context, sc scenario) (*outcome, *load.Result, error) {
	dir := filepath.Join(s.work, sc.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	e := &env{bins: s.bins, dir: dir, sims: s.sims}
	defer e.close(context.WithoutCancel(ctx))
	cfg := baseConfig(s.sims)
	if sc.redis {
		r, err := startRedis(ctx, dir)
		if err != nil {
			return nil, nil, err
		}
		e.redis = r
		cfg.RedisURL = r.url()
	}
	if sc.config != nil {
		sc.config(&cfg)
	}
	var extra []string
	if sc.demo {
		extra = append(extra, "-demo")
	}
	var servers []string
	for i := range max(sc.nodes, 1) {
		n, err := startNode(ctx, s.bins, dir, fmt.Sprintf("node-%d", i+1), cfg, sc.down, extra...)
		if err != nil {
			return nil, nil, err
		}
		e.nodes = append(e.nodes, n)
		servers = append(servers, n.url)
	}
	mix := sc.mix
	if mix == nil {
		mix = suiteMix
	}
	run, err := load.Start(ctx, load.Config{Servers: servers, Sessions: s.sessions, Profiles: mix,
		Duration: sc.duration, Seed: s.seed ^ nameSeed(sc.name), SLA: suiteSLAms * time.Millisecond, Clip: s.clip})
	if err != nil {
		return nil, nil, err
	}
	steps := s.play(ctx, run.Started(), sc.steps, e)
	res := run.Wait()
	for _, n := range e.nodes {
		if n.p != nil {
			if err := n.scrape(ctx); err != nil {
				s.log("%s: %v", sc.name, err)
			}
		}
	}
	return assess(sc, res, e.nodes, steps), res, nil
}

// play runs the steps at their times after start.
func (s *suite) play(ctx context.Context, start time.Time, steps []step, e *env) []stepRun {
	var out []stepRun
	for _, st := range steps {
		select {
		case <-ctx.Done():
			return out
		case <-time.After(time.Until(start.Add(st.at))):
		}
		r := stepRun{AtMS: float64(time.Since(start).Microseconds()) / 1000, What: st.what, Kind: [...]string{"fault", "clear"}[st.kind]}
		if err := st.do(ctx, e); err != nil {
			r.Err = err.Error()
			s.log("step %q: %v", st.what, err)
		}
		out = append(out, r)
	}
	return out
}

// nameSeed derives a scenario's seed from its name, so that each
// scenario is repeatable on its own.
func nameSeed(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64() >> 1)
}
