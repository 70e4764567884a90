package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

func measure(ctx context.Context, o options, out io.Writer) error {
	ops := newOpsClient(o.server)
	before, err := ops.memory(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "server before: rss %.1f MiB, heap %.1f MiB, goroutines %.0f\n", mib(before.rss), mib(before.heap), before.goroutines)

	started := time.Now()
	clients, err := openSessions(ctx, o)
	defer closeAll(clients)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "opened %d sessions in %v\n", len(clients), time.Since(started).Round(time.Millisecond))
	select {
	case <-time.After(o.settle):
	case <-ctx.Done():
		return ctx.Err()
	}
	after, err := ops.memory(ctx)
	if err != nil {
		return err
	}
	n := float64(len(clients))
	fmt.Fprintf(out, "server with %d idle sessions: rss %.1f MiB, heap %.1f MiB, goroutines %.0f\n", len(clients), mib(after.rss), mib(after.heap), after.goroutines)
	fmt.Fprintf(out, "per idle session: rss %.1f KiB, heap %.1f KiB, goroutines %.1f\n",
		(after.rss-before.rss)/n/1024, (after.heap-before.heap)/n/1024, (after.goroutines-before.goroutines)/n)

	if o.fault != "" {
		if err := faultLatency(ctx, o, ops, clients, out); err != nil {
			return err
		}
	}
	return report(clients, out)
}

// faultLatency switches a demo fault on, waits until every session got a
// level message, and reports the time from each session's FSM transition
// (the ops store's timestamp) to the message's arrival.
func faultLatency(ctx context.Context, o options, ops *opsClient, clients []*client, out io.Writer) error {
	mark := time.Now()
	if err := ops.fault(ctx, o.fault, true); err != nil {
		return err
	}
	defer ops.fault(context.WithoutCancel(ctx), o.fault, false)
	deadline := time.Now().Add(o.faultLimit)
	for _, c := range clients {
		if !c.waitLevel(mark, time.Until(deadline)) {
			return fmt.Errorf("session %s got no level message within %v", c.id, o.faultLimit)
		}
	}
	ts, err := ops.transitions(ctx, 2*len(clients)+100)
	if err != nil {
		return err
	}
	at := map[string]time.Time{}
	for _, t := range ts {
		if t.At.After(mark) {
			if _, seen := at[t.Session]; !seen {
				at[t.Session] = t.At
			}
		}
	}
	var lat []time.Duration
	var spread []time.Time
	for _, c := range clients {
		got := c.firstLevelAfter(mark)
		spread = append(spread, got)
		if t, ok := at[c.id]; ok {
			lat = append(lat, got.Sub(t))
		}
	}
	if len(lat) == 0 {
		return errors.New("no transitions found in the ops store")
	}
	slices.Sort(lat)
	slices.SortFunc(spread, func(a, b time.Time) int { return a.Compare(b) })
	fmt.Fprintf(out, "fault %s: %d sessions changed level; FSM transition → client: p50 %v p90 %v p99 %v max %v\n",
		o.fault, len(lat), pct(lat, 50), pct(lat, 90), pct(lat, 99), lat[len(lat)-1])
	fmt.Fprintf(out, "fault %s: first to last session's level message: %v\n", o.fault, spread[len(spread)-1].Sub(spread[0]).Round(time.Microsecond))
	return nil
}

func report(clients []*client, out io.Writer) error {
	var gaps, dups, errs int
	for _, c := range clients {
		g, d, e := c.counts()
		gaps, dups, errs = gaps+g, dups+d, errs+e
	}
	fmt.Fprintf(out, "messages: %d seq gaps, %d duplicates, %d error messages\n", gaps, dups, errs)
	if gaps+dups+errs > 0 {
		return errors.New("lost, doubled or error messages")
	}
	return nil
}

func openSessions(ctx context.Context, o options) ([]*client, error) {
	clients := make([]*client, o.sessions)
	errs := make([]error, o.sessions)
	sem := make(chan struct{}, o.dialers)
	var wg sync.WaitGroup
	for i := range clients {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			clients[i], errs[i] = dial(ctx, o.server, o.lang)
		})
	}
	wg.Wait()
	var ok []*client
	for i, c := range clients {
		if errs[i] != nil {
			closeAll(ok)
			return nil, fmt.Errorf("session %d: %w", i, errs[i])
		}
		ok = append(ok, c)
	}
	return ok, nil
}

func closeAll(cs []*client) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(c.close)
	}
	wg.Wait()
}

func pct(d []time.Duration, p int) time.Duration {
	i := (len(d)*p + 99) / 100
	if i > 0 {
		i--
	}
	return d[i].Round(time.Microsecond)
}

func mib(b float64) float64 { return b / (1 << 20) }
