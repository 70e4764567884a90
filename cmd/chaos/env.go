package main

import (
	"context"
	"fmt"
	"net/http"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// env is one scenario's world: the shared simulators, the scenario's
// poise nodes and, for the Redis scenarios, its redis-server. Steps act on
// it.
type env struct {
	bins  bins
	dir   string
	sims  map[string]*sim
	nodes []*node
	redis *redisProc
}

// fault sets a simulator's fault on model ("*": every model).
func (e *env) fault(ctx context.Context, simName, model string, f vendorsim.Fault) error {
	return e.sims[simName].setFault(ctx, model, f)
}

// clear removes the faults of the named simulators.
func (e *env) clear(ctx context.Context, names ...string) error {
	for _, n := range names {
		if err := e.sims[n].clear(ctx); err != nil {
			return err
		}
	}
	return nil
}

// demoFault switches a poise -demo fault on every node.
func (e *env) demoFault(ctx context.Context, name string, on bool) error {
	for _, n := range e.nodes {
		if err := call(ctx, http.MethodPost, n.url+"/ops/api/demo/faults", map[string]any{"fault": name, "on": on}, nil); err != nil {
			return err
		}
	}
	return nil
}

// killNode scrapes node i's metrics one last time and kills it (SIGKILL).
func (e *env) killNode(ctx context.Context, i int) error {
	n := e.nodes[i]
	if err := n.scrape(ctx); err != nil {
		return err
	}
	n.p.kill()
	n.p = nil
	return nil
}

// stopRedis kills redis-server (SIGKILL: no goodbye to its clients).
func (e *env) stopRedis() error {
	if e.redis == nil || e.redis.p == nil {
		return fmt.Errorf("chaos: no redis to stop")
	}
	e.redis.p.kill()
	e.redis.p = nil
	return nil
}

// startRedis starts redis-server again on its port, empty.
func (e *env) startRedis(ctx context.Context) error {
	if e.redis == nil {
		return fmt.Errorf("chaos: no redis in this scenario")
	}
	return e.redis.start(ctx)
}

// close stops the scenario's nodes and redis; the simulators are shared
// and only reset.
func (e *env) close(ctx context.Context) {
	for _, n := range e.nodes {
		if n.p != nil {
			n.p.stop()
		}
	}
	if e.redis != nil && e.redis.p != nil {
		e.redis.p.stop()
	}
	for _, s := range e.sims {
		s.reset(ctx)
	}
}
