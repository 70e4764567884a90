package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
)

// measureIdle opens idle sessions (they only send heartbeats) and reports
// the server's memory per session; with -fault it then switches a demo
// fault and reports the time from each session's FSM transition (the ops
// store's timestamp) to the arrival of its level message.
func measureIdle(ctx context.Context, o options, out io.Writer) error {
	ops := newOpsClient(o.servers[0])
	before, err := ops.memory(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "server before: rss %.1f MiB, heap %.1f MiB, goroutines %.0f\n", mib(before.rss), mib(before.heap), before.goroutines)
	cfg := load.Config{Servers: o.servers[:1], Sessions: o.sessions, Dialers: o.dialers,
		Profiles: []load.Profile{{Name: "idle", Lang: o.lang}}, Duration: o.settle}
	if o.fault != "" {
		cfg.Duration += 10 * time.Second // time for the fault's level changes to arrive
	}
	if o.resumes > 0 {
		cfg.Duration += resumeFor
	}
	started := time.Now()
	r, err := load.Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "opened sessions in %v\n", time.Since(started).Round(time.Millisecond))
	after, err := waitAndMeasure(ctx, ops, o.settle)
	if err == nil && o.resumes > 0 {
		r.Drop(spread(o.resumes, r.Opened())...)
	}
	var mark time.Time
	if err == nil && o.fault != "" {
		mark = time.Now()
		err = ops.fault(ctx, o.fault, true)
		defer ops.fault(context.WithoutCancel(ctx), o.fault, false)
	}
	res := r.Wait()
	if err != nil {
		return err
	}
	n := float64(res.Opened)
	fmt.Fprintf(out, "server with %d idle sessions: rss %.1f MiB, heap %.1f MiB, goroutines %.0f\n", res.Opened, mib(after.rss), mib(after.heap), after.goroutines)
	fmt.Fprintf(out, "per idle session: rss %.1f KiB, heap %.1f KiB, goroutines %.1f\n",
		(after.rss-before.rss)/n/1024, (after.heap-before.heap)/n/1024, (after.goroutines-before.goroutines)/n)
	if o.fault != "" {
		if err := faultLatency(ctx, ops, res, mark, out); err != nil {
			return err
		}
	}
	if o.resumes > 0 {
		printResumes(out, res)
	}
	s := load.Summarize(res, 0)
	fmt.Fprintf(out, "messages: %d lost, %d doubled, %d error messages\n", s.Lost, s.Doubled, s.Errors)
	if s.Lost+s.Doubled+s.Errors > 0 {
		return errors.New("lost, doubled or error messages")
	}
	return nil
}

// resumeFor is how long dropped idle sessions have to resume.
const resumeFor = 5 * time.Second

// spread picks n of opened session numbers, evenly spread.
func spread(n, opened int) []int {
	n = min(n, opened)
	out := make([]int, n)
	for i := range out {
		out[i] = i * opened / n
	}
	return out
}

// printResumes reports the dropped sessions' resumes: from the drop to
// the welcome.
func printResumes(out io.Writer, res *load.Result) {
	var took []float64
	resumed := 0
	for _, rc := range res.Reconnects {
		if rc.Resumed {
			resumed++
		}
		if rc.BackMS >= 0 {
			took = append(took, rc.BackMS-rc.LostMS)
		}
	}
	fmt.Fprintf(out, "resumes: %d dropped, %d resumed; drop → welcome p50 %.0f ms, p99 %.0f ms, max %.0f ms\n",
		len(res.Reconnects), resumed, load.Percentile(took, 50), load.Percentile(took, 99), load.Percentile(took, 100))
}

func waitAndMeasure(ctx context.Context, ops *opsClient, settle time.Duration) (memory, error) {
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return memory{}, ctx.Err()
	}
	return ops.memory(ctx)
}

// faultLatency matches each session's first level message after mark with
// its transition in the ops store.
func faultLatency(ctx context.Context, ops *opsClient, res *load.Result, mark time.Time, out io.Writer) error {
	ts, err := ops.transitions(ctx, 2*res.Opened+100)
	if err != nil {
		return err
	}
	at := map[string]time.Time{}
	for _, t := range ts {
		if _, seen := at[t.Session]; !seen && t.At.After(mark) {
			at[t.Session] = t.At
		}
	}
	markMS := float64(mark.Sub(res.Start).Microseconds()) / 1000
	got := map[int]time.Time{}
	for _, l := range res.Levels {
		if _, seen := got[l.Session]; !seen && l.AtMS >= markMS {
			got[l.Session] = res.Start.Add(time.Duration(l.AtMS * float64(time.Millisecond)))
		}
	}
	ids := res.SessionIDs
	var lat []time.Duration
	for i, id := range ids {
		if g, ok := got[i]; ok {
			if t, ok := at[id]; ok {
				lat = append(lat, g.Sub(t))
			}
		}
	}
	if len(lat) == 0 {
		return errors.New("no level change matched a transition in the ops store")
	}
	slices.Sort(lat)
	fmt.Fprintf(out, "fault: %d of %d sessions changed level; FSM transition → client: p50 %v p99 %v max %v\n",
		len(lat), res.Opened, pct(lat, 50), pct(lat, 99), lat[len(lat)-1])
	return nil
}

func pct(d []time.Duration, p int) time.Duration {
	i := (len(d)*p + 99) / 100
	if i > 0 {
		i--
	}
	return d[i].Round(time.Microsecond)
}

func mib(b float64) float64 { return b / (1 << 20) }
