package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
)

// The load benchmark: the simulators answer with realistic first-token
// delays, a pool of whisper servers decodes the audio, and one poise node
// takes ever more sessions until p99 first useful content passes sla_ms.
var (
	loadSteps      = []int{250, 500, 1000, 1250, 1500, 2000, 3000} // sessions per step, until one misses a target
	loadStepFor    = 15 * time.Second                              // traffic per step
	loadIdle       = 1000                                          // idle sessions for memory per session
	overheadFor    = 12 * time.Second                              // light traffic for the engine's added latency
	directCalls    = 40                                            // direct vendorsim calls for the same
	directParallel = 4                                             // of them at once, as the 4 sessions ask
	loadWhispers   = 8                                             // whisper servers in the pool
	loadMixed      = load.Profile{Name: "mixed", Audio: true, Typed: true, QuestionGap: 4 * time.Second}
	loadMix        = []load.Profile{loadMixed, typist, typist, typist} // one session in four streams audio
	loadFirstToken = map[string]string{simVendorA: "450ms", simVendorB: "600ms", simLocal: "300ms"}
)

// loadReport is the load benchmark's figures.
type loadReport struct {
	SLAms       float64    `json:"sla_ms"`
	Delays      string     `json:"delays"`
	Steps       []loadStep `json:"steps"`
	MaxSessions int        `json:"max_sessions"` // largest step within the SLA at p99 with no errors or losses
	// MaxWithCaptions is the largest passing step whose caption p95 was
	// also within the SLA, with no caption missed.
	MaxWithCaptions int            `json:"max_with_captions"`
	Idle            idleReport     `json:"idle"`
	Overhead        overheadReport `json:"overhead"`
}

type loadStep struct {
	Sessions      int     `json:"sessions"`
	Opened        int     `json:"opened"`
	Questions     int     `json:"questions"`
	FirstShare    float64 `json:"first_share"`
	FirstP50      float64 `json:"first_p50_ms"`
	FirstP99      float64 `json:"first_p99_ms"`
	ByFirst       map[string]int
	Captions      int     `json:"captions"`
	CaptionP95    float64 `json:"caption_p95_ms"`
	CaptionMissed int     `json:"caption_missed"`
	Errors        int     `json:"errors"`
	Lost          int     `json:"lost"`
	Doubled       int     `json:"doubled"`
	CPU           float64 `json:"server_cpu"`   // poise's CPU use over the step, in cores
	LoadCPU       float64 `json:"loadgen_cpu"`  // the load generator's (this process), in cores
	SimsCPU       float64 `json:"sims_cpu"`     // the simulators', in cores
	MachineBusy   float64 `json:"machine_busy"` // share of the machine's CPU time busy; -1 unknown
	RSSMiB        float64 `json:"server_rss_mib"`
	Pass          bool    `json:"pass"`
}

// loadBenchmark runs the three load measurements on their own simulators
// and node.
func (s *suite) loadBenchmark(ctx context.Context, root string) (*loadReport, error) {
	specs := []simSpec{
		{simVendorA, []string{"-first-token-delay", loadFirstToken[simVendorA], "-token-delay", "20ms"}},
		{simVendorB, []string{"-first-token-delay", loadFirstToken[simVendorB], "-token-delay", "20ms"}},
		{simLocal, []string{"-first-token-delay", loadFirstToken[simLocal], "-token-delay", "30ms"}},
	}
	transcripts := filepath.Join(root, "cmd/chaos/testdata/transcripts_en.txt")
	for i := range loadWhispers {
		name := simWhisper
		if i > 0 {
			name = fmt.Sprintf("%s-%d", simWhisper, i+1)
		}
		specs = append(specs, simSpec{name, []string{"-inference-delay", "20ms", "-transcripts", transcripts}})
	}
	dir := filepath.Join(s.work, "load")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sims, err := startSims(ctx, s.bins, dir, specs)
	if err != nil {
		return nil, err
	}
	defer stopSims(sims)
	rep := &loadReport{SLAms: suiteSLAms, Delays: fmt.Sprintf("first token: vendor-a %s, vendor-b %s, local %s; 20 ms between chunks; %d whisper servers at 20 ms a decode",
		loadFirstToken[simVendorA], loadFirstToken[simVendorB], loadFirstToken[simLocal], loadWhispers)}
	start := func(name string) (*node, error) {
		return startNode(ctx, s.bins, dir, name, baseConfig(sims), nil)
	}

	n, err := start("overhead")
	if err != nil {
		return nil, err
	}
	rep.Overhead, err = s.overhead(ctx, n, sims[simVendorA].url)
	n.p.stop()
	if err != nil {
		return nil, err
	}
	s.log("load: engine overhead: poise p50 %.0f ms vs direct p50 %.0f ms", rep.Overhead.PoiseP50, rep.Overhead.DirectP50)

	if n, err = start("idle"); err != nil {
		return nil, err
	}
	rep.Idle, err = idleMemory(ctx, n, loadIdle)
	n.p.stop()
	if err != nil {
		return nil, err
	}
	s.log("load: %d idle sessions: %.1f KiB heap, %.1f KiB RSS, %.1f goroutines per session", rep.Idle.Sessions, rep.Idle.HeapKiB, rep.Idle.RSSKiB, rep.Idle.Goroutines)

	if n, err = start("ramp"); err != nil {
		return nil, err
	}
	defer n.p.stop()
	captionsOK := true // every step so far had its captions within the SLA
	for _, sessions := range loadSteps {
		st, err := s.loadStep(ctx, n, sims, sessions)
		if err != nil {
			return nil, err
		}
		s.log("load: %d sessions: p99 first content %.0f ms, %.1f%% within SLA, %d errors, %d lost; CPU poise %.2f, loadgen %.2f, simulators %.2f cores, machine %.0f%% busy; pass %v",
			st.Sessions, st.FirstP99, 100*st.FirstShare, st.Errors, st.Lost, st.CPU, st.LoadCPU, st.SimsCPU, 100*st.MachineBusy, st.Pass)
		rep.Steps = append(rep.Steps, st)
		if !st.Pass {
			break
		}
		rep.MaxSessions = sessions
		if captionsOK = captionsOK && st.CaptionP95 <= suiteSLAms && st.CaptionMissed == 0; captionsOK {
			rep.MaxWithCaptions = sessions
		}
	}
	return rep, nil
}

// loadStep runs sessions for loadStepFor on n.
func (s *suite) loadStep(ctx context.Context, n *node, sims map[string]*sim, sessions int) (loadStep, error) {
	if err := n.scrape(ctx); err != nil {
		return loadStep{}, err
	}
	cpu0, t0, mark, sims0 := n.metric("process_cpu_seconds_total"), time.Now(), markCPU(), simsCPU(sims)
	res, err := load.Measure(ctx, load.Config{Servers: []string{n.url}, Sessions: sessions, Profiles: loadMix,
		Duration: loadStepFor, Seed: s.seed, SLA: suiteSLAms * time.Millisecond, Clip: s.clip, Dialers: 64})
	if err != nil {
		return loadStep{}, err
	}
	now := markCPU()
	if err := n.scrape(ctx); err != nil {
		return loadStep{}, err
	}
	if err := writeJSON(filepath.Join(s.out, "results", fmt.Sprintf("load-%d.json", sessions)), res); err != nil {
		return loadStep{}, err
	}
	sum := load.Summarize(res, slaAllowance)
	st := loadStep{Sessions: sessions, Opened: res.Opened, Questions: sum.Questions, FirstShare: sum.FirstShare(),
		FirstP50: sum.FirstP50, FirstP99: sum.FirstP99, ByFirst: sum.ByFirst, Captions: sum.Captions,
		CaptionP95: sum.CaptionP95, CaptionMissed: sum.CaptionMissed, Errors: sum.Errors, Lost: sum.Lost, Doubled: sum.Doubled,
		CPU:     (n.metric("process_cpu_seconds_total") - cpu0) / time.Since(t0).Seconds(),
		LoadCPU: mark.selfCores(now), MachineBusy: mark.machineBusy(now),
		SimsCPU: (simsCPU(sims) - sims0).Seconds() / time.Since(t0).Seconds(),
		RSSMiB:  n.metric("process_resident_memory_bytes") / (1 << 20)}
	st.Pass = st.Opened == sessions && st.FirstP99 <= suiteSLAms && sum.NoContent == 0 &&
		st.Errors == 0 && st.Lost+st.Doubled == 0 && n.metric("poise_e2e_user_visible_errors_total") == 0
	return st, nil
}

func (l *loadReport) markdown() string {
	var b strings.Builder
	b.WriteString("## Load\n\n")
	fmt.Fprintf(&b, "One poise node on this machine, with the load generator and the simulators beside it (%s). Sessions: one in four streams the WAV in real time and types a question every 3–5 s, the others type questions.\n\n", l.Delays)
	fmt.Fprintf(&b, "**Largest load within the SLA: %d concurrent sessions** (p99 first useful content ≤ %.0f ms, no error, no lost or doubled message); with captions too (p95 ≤ %.0f ms after the utterance ends, none missed): %d.\n\n", l.MaxSessions, l.SLAms, l.SLAms, l.MaxWithCaptions)
	b.WriteString("| sessions | questions | first content ≤ sla_ms | p50 | p99 | first content by source | captions p95 (missed) | errors | lost / doubled | CPU cores: poise / loadgen / simulators; machine busy | poise RSS | within target |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---|\n")
	for _, st := range l.Steps {
		ok := "✅"
		if !st.Pass {
			ok = "❌"
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %.0f ms | %.0f ms | %s | %.0f ms (%d) | %d | %d / %d | %.2f / %.2f / %.2f; %.0f%% | %.0f MiB | %s |\n",
			st.Sessions, st.Questions, pct(st.FirstShare), st.FirstP50, st.FirstP99, sourcesText(st.ByFirst),
			st.CaptionP95, st.CaptionMissed, st.Errors, st.Lost, st.Doubled, st.CPU, st.LoadCPU, st.SimsCPU, 100*st.MachineBusy, st.RSSMiB, ok)
	}
	fmt.Fprintf(&b, "\n**Memory per idle session** (%d sessions, heartbeats only): %.1f KiB of Go heap, %.1f KiB of RSS, %.1f goroutines.\n\n",
		l.Idle.Sessions, l.Idle.HeapKiB, l.Idle.RSSKiB, l.Idle.Goroutines)
	o := l.Overhead
	fmt.Fprintf(&b, "**Engine's added latency** over a direct streaming call to the same simulator (light load, L1): question → `answer_start` p50 %.0f ms / p99 %.0f ms (%d questions); direct request → first content chunk p50 %.0f ms / p99 %.0f ms (%d calls); **added p50 %.1f ms**.\n",
		o.PoiseP50, o.PoiseP99, o.Questions, o.DirectP50, o.DirectP99, o.DirectCalls, o.PoiseP50-o.DirectP50)
	return b.String()
}

// simsCPU is the CPU time the simulators have used.
func simsCPU(sims map[string]*sim) time.Duration {
	var d time.Duration
	for _, s := range sims {
		d += procCPU(s.p.cmd.Process.Pid)
	}
	return d
}
