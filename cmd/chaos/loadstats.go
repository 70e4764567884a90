package main

import (
	"fmt"
	"slices"
	"time"
)

// stat is one figure over the ramp's runs: the median and the spread.
type stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"` // runs that gave the figure
}

// statOf is the median (the mean of the two middle values for an even
// count) and the min–max of xs; zero for none. It does not change xs.
func statOf(xs []float64) stat {
	if len(xs) == 0 {
		return stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// text is "median (min–max)" in format f, or just the value when the
// runs agree or there was one.
func (s stat) text(f string) string {
	if s.N == 0 {
		return "—"
	}
	m := fmt.Sprintf(f, s.Median)
	lo, hi := fmt.Sprintf(f, s.Min), fmt.Sprintf(f, s.Max)
	if lo == hi {
		return m
	}
	return fmt.Sprintf("%s (%s–%s)", m, lo, hi)
}

// perSessionSecond is the CPU time spent per active session-second, in
// µs: cpu over sessions held for window. Zero when nothing was held.
func perSessionSecond(cpu time.Duration, sessions int, window time.Duration) float64 {
	if sessions <= 0 || window <= 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / (float64(sessions) * window.Seconds())
}

// cores is the CPU time used over window, in cores.
func cores(cpu, window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return cpu.Seconds() / window.Seconds()
}

// stepStats are one step's figures over the runs that reached it.
type stepStats struct {
	Sessions        int  `json:"sessions"`
	Reached         int  `json:"runs_reached"`
	Passed          int  `json:"runs_passed"`
	FirstP99        stat `json:"first_p99_ms"`
	CaptionP95      stat `json:"caption_p95_ms"`
	CaptionMissed   stat `json:"caption_missed"`
	Cores           stat `json:"server_cores"`
	CPUPerSessionUS stat `json:"server_cpu_us_per_session_s"`
	LoadCores       stat `json:"loadgen_cores"`
	SimsCores       stat `json:"sims_cores"`
	// PerSimCore is poise's cores over the simulators': they do the same
	// work in every run, so their CPU follows the machine's speed, and
	// the ratio compares runs across a machine's drift (0: not measured).
	PerSimCore stat `json:"server_cores_per_sim_core"`
}

// aggregate gives, per step that any run reached (in step order), the
// median and spread of its figures over the runs.
func aggregate(runs []loadRun) []stepStats {
	var order []int
	by := map[int][]loadStep{}
	for _, r := range runs {
		for _, st := range r.Steps {
			if _, seen := by[st.Sessions]; !seen {
				order = append(order, st.Sessions)
			}
			by[st.Sessions] = append(by[st.Sessions], st)
		}
	}
	slices.Sort(order)
	out := make([]stepStats, 0, len(order))
	for _, n := range order {
		sts := by[n]
		col := func(f func(loadStep) float64) stat {
			xs := make([]float64, len(sts))
			for i, st := range sts {
				xs[i] = f(st)
			}
			return statOf(xs)
		}
		ss := stepStats{Sessions: n, Reached: len(sts),
			FirstP99:        col(func(st loadStep) float64 { return st.FirstP99 }),
			CaptionP95:      col(func(st loadStep) float64 { return st.CaptionP95 }),
			CaptionMissed:   col(func(st loadStep) float64 { return float64(st.CaptionMissed) }),
			Cores:           col(func(st loadStep) float64 { return st.CPU }),
			CPUPerSessionUS: col(func(st loadStep) float64 { return st.CPUPerSessionUS }),
			LoadCores:       col(func(st loadStep) float64 { return st.LoadCPU }),
			SimsCores:       col(func(st loadStep) float64 { return st.SimsCPU }),
			PerSimCore:      col(loadStep.perSimCore)}
		for _, st := range sts {
			if st.Pass {
				ss.Passed++
			}
		}
		out = append(out, ss)
	}
	return out
}

// perSimCore is the step's poise cores over its simulators' cores, 0
// when the simulators' CPU was not measured.
func (st loadStep) perSimCore() float64 {
	if st.SimsCPU <= 0 {
		return 0
	}
	return st.CPU / st.SimsCPU
}

// largest is the median and spread over the runs of the largest load
// within the SLA, and of the same with captions.
func largest(runs []loadRun) (sla, captions stat) {
	var a, b []float64
	for _, r := range runs {
		a = append(a, float64(r.MaxSessions))
		b = append(b, float64(r.MaxWithCaptions))
	}
	return statOf(a), statOf(b)
}
