package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
)

// baselineLevel is where sessions start and should climb back to.
const baselineLevel = "L1"

// slaAllowance is added to sla_ms when a client counts content within the
// SLA; it is zero: the client-side latency must itself be within sla_ms.
const slaAllowance = 0 * time.Millisecond

// outcome is one scenario's report row and its verdict.
type outcome struct {
	Name     string       `json:"name"`
	About    string       `json:"about"`
	Sessions int          `json:"sessions"`
	Opened   int          `json:"opened"`
	Summary  load.Summary `json:"summary"`
	// MetricErrors is poise_e2e_user_visible_errors_total over the nodes.
	MetricErrors float64 `json:"metric_user_visible_errors"`
	// Transitions counts the level changes the clients saw, by
	// "from→to (reason)".
	Transitions map[string]int `json:"transitions"`
	Steps       []stepRun      `json:"steps"`
	// DegradeMS is from the first fault step to the first level change
	// after it (-1: none).
	DegradeMS float64 `json:"degrade_ms"`
	// ClimbBackMS is from the last clear step until the last session was
	// back at L1 (-1: no session had to climb back).
	ClimbBackMS float64 `json:"climb_back_ms"`
	// NotBack counts sessions that ended the run below L1.
	NotBack int `json:"not_back"`
	// Failures are the targets this scenario missed.
	Failures []string `json:"failures"`
	Err      string   `json:"err,omitempty"`
}

// assess computes the outcome of a finished scenario.
func assess(sc scenario, res *load.Result, nodes []*node, steps []stepRun) *outcome {
	o := &outcome{Name: sc.name, About: sc.about, Sessions: res.Sessions, Opened: res.Opened,
		Summary: load.Summarize(res, slaAllowance), Transitions: map[string]int{}, Steps: steps,
		DegradeMS: -1, ClimbBackMS: -1}
	for _, n := range nodes {
		o.MetricErrors += n.metric("poise_e2e_user_visible_errors_total")
	}
	for _, l := range res.Levels {
		o.Transitions[fmt.Sprintf("%s→%s (%s)", l.From, l.To, l.Reason)]++
	}
	faultAt, clearAt := -1.0, -1.0
	for _, st := range steps {
		if st.Kind == "fault" && faultAt < 0 {
			faultAt = st.AtMS
		}
		if st.Kind == "clear" {
			clearAt = st.AtMS
		}
	}
	if faultAt >= 0 {
		for _, l := range res.Levels {
			if l.AtMS >= faultAt {
				o.DegradeMS = l.AtMS - faultAt
				break
			}
		}
	}
	o.ClimbBackMS, o.NotBack = climbBack(res, clearAt)
	o.Failures = verdict(o, res)
	if sc.expect != nil {
		o.Failures = append(o.Failures, sc.expect(o, res)...)
	}
	return o
}

// climbBack finds, after the clear at clearAt (ms), when the last session
// returned to L1 and how many never did.
func climbBack(res *load.Result, clearAt float64) (float64, int) {
	last := map[int]load.LevelRecord{}
	for _, l := range res.Levels {
		last[l.Session] = l
	}
	climb, notBack := -1.0, 0
	for _, l := range last {
		switch {
		case l.To != baselineLevel:
			notBack++
		case clearAt >= 0 && l.AtMS >= clearAt:
			climb = max(climb, l.AtMS-clearAt)
		}
	}
	return climb, notBack
}

// verdict lists the targets the scenario missed: every question gets
// useful content within sla_ms, no user-visible error, no lost or doubled
// message, every session opened and kept, every session back at L1.
func verdict(o *outcome, res *load.Result) []string {
	s := o.Summary
	var f []string
	if o.Opened < o.Sessions {
		f = append(f, fmt.Sprintf("%d of %d sessions did not open", o.Sessions-o.Opened, o.Sessions))
	}
	if s.Questions == 0 {
		f = append(f, "no questions were asked")
	}
	if s.FirstWithin < s.Questions {
		f = append(f, fmt.Sprintf("%d of %d questions without useful content within %.0f ms", s.Questions-s.FirstWithin, s.Questions, res.SLAms))
	}
	if s.Errors > 0 || o.MetricErrors > 0 {
		f = append(f, fmt.Sprintf("user-visible errors: %d error messages %v, metric %.0f", s.Errors, s.ErrorCodes, o.MetricErrors))
	}
	if s.Lost+s.Doubled > 0 {
		f = append(f, fmt.Sprintf("%d lost and %d doubled messages", s.Lost, s.Doubled))
	}
	if s.SessionsLost > 0 || s.ResumeMaxMS < 0 {
		f = append(f, fmt.Sprintf("%d sessions lost on resume", max(s.SessionsLost, 1)))
	}
	if o.NotBack > 0 {
		f = append(f, fmt.Sprintf("%d sessions did not climb back to %s", o.NotBack, baselineLevel))
	}
	for _, st := range o.Steps {
		if st.Err != "" {
			f = append(f, "step "+st.What+": "+st.Err)
		}
	}
	return f
}

// transitionsText renders the transition counts, most frequent first.
func transitionsText(t map[string]int) string {
	if len(t) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if t[a] != t[b] {
			return t[b] - t[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, t[k])
	}
	return strings.Join(parts, ", ")
}
