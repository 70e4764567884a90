package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// The load benchmark: the simulators answer with realistic first-token
// delays, a pool of whisper servers decodes the audio, and one poise node
// takes ever more sessions until p99 first useful content passes sla_ms;
// the ramp runs several times, each on a fresh node.
var (
	loadSteps      = []int{250, 500, 1000, 1500, 2000, 2500, 3000, 3500} // sessions per step, until one misses a target
	loadStepFor    = 15 * time.Second                                    // traffic per step
	overheadFor    = 12 * time.Second                                    // light traffic for the engine's added latency
	directCalls    = 40                                                  // direct vendorsim calls for the same
	directParallel = 4                                                   // of them at once, as the 4 sessions ask
	loadWhispers   = 8                                                   // whisper servers in the pool
	loadMixed      = load.Profile{Name: "mixed", Audio: true, Typed: true, QuestionGap: 4 * time.Second}
	loadMix        = []load.Profile{loadMixed, typist, typist, typist} // one session in four streams audio
	loadFirstToken = map[string]string{simVendorA: "450ms", simVendorB: "600ms", simLocal: "300ms"}
)

// loadDialers is how many sessions open at once: fewer than poise's
// pre_hello_per_address (32), or it sheds the oldest sockets that have not
// said hello yet (all the load comes from 127.0.0.1).
const loadDialers = 24

// loadReport is the load benchmark's figures.
type loadReport struct {
	SLAms   float64 `json:"sla_ms"`
	Delays  string  `json:"delays"`
	Pinning string  `json:"pinning"` // how poise and the traffic shared the CPUs
	// CoalesceMS is the nodes' stream.coalesce_ms, when -coalesce-ms set
	// it (0: poise's default).
	CoalesceMS int `json:"coalesce_ms,omitempty"`
	// UpstreamTLS says the model simulators served HTTPS (HTTP/2), with
	// -upstream-tls.
	UpstreamTLS bool      `json:"upstream_tls,omitempty"`
	Runs        []loadRun `json:"runs"`
	// Stats are each step's median and spread over the runs.
	Stats []stepStats `json:"stats"`
	// MaxSessions is the median run's largest step within the SLA at p99
	// with no errors or losses, with the spread over the runs;
	// MaxWithCaptions the same for steps whose caption p95 was also
	// within the SLA, with no caption missed.
	MaxSessions     stat           `json:"max_sessions"`
	MaxWithCaptions stat           `json:"max_with_captions"`
	Idle            idleReport     `json:"idle"`
	Overhead        overheadReport `json:"overhead"`
}

// loadRun is one run of the ramp.
type loadRun struct {
	Steps           []loadStep `json:"steps"`
	MaxSessions     int        `json:"max_sessions"`
	MaxWithCaptions int        `json:"max_with_captions"`
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
	// CPU figures are over the traffic window (every session open, before
	// the drain), from /proc accounting (utime + stime).
	WindowS         float64   `json:"window_s"`
	CPU             float64   `json:"server_cores"`                // poise's CPU use, in cores
	CPUPerSessionUS float64   `json:"server_cpu_us_per_session_s"` // poise's CPU per open session per second, in µs
	LoadCPU         float64   `json:"loadgen_cores"`               // the load generator's (this process)
	SimsCPU         float64   `json:"sims_cores"`                  // the simulators'
	MachineBusy     float64   `json:"machine_busy"`                // share of the machine's CPU time busy; -1 unknown
	CPUsBusy        []float64 `json:"cpus_busy"`                   // each CPU's busy share (pinned: CPU 0 is poise's)
	RSSMiB          float64   `json:"server_rss_mib"`
	Pass            bool      `json:"pass"`
}

// loadBenchmark runs the load measurements on their own simulators and
// nodes: the engine's overhead, the idle sessions, then o.runs ramps.
func (s *suite) loadBenchmark(ctx context.Context, root string, o loadOptions) (*loadReport, error) {
	rig, err := s.startLoadRig(ctx, root, o)
	if err != nil {
		return nil, err
	}
	defer rig.stop()
	rep := &loadReport{SLAms: suiteSLAms, Pinning: rig.pn.mode, Delays: fmt.Sprintf("first token: vendor-a %s, vendor-b %s, local %s; 20 ms between chunks; %d whisper servers at 20 ms a decode",
		loadFirstToken[simVendorA], loadFirstToken[simVendorB], loadFirstToken[simLocal], loadWhispers), CoalesceMS: o.coalesceMS,
		UpstreamTLS: o.upstreamTLS}
	n, err := rig.node(ctx, "overhead")
	if err != nil {
		return nil, err
	}
	rep.Overhead, err = s.overhead(ctx, n, rig.sims[simVendorA].url)
	n.p.stop()
	if err != nil {
		return nil, err
	}
	s.log("load: engine overhead: poise p50 %.0f ms vs direct p50 %.0f ms", rep.Overhead.PoiseP50, rep.Overhead.DirectP50)
	if n, err = rig.node(ctx, "idle"); err != nil {
		return nil, err
	}
	rep.Idle, err = idleMemory(ctx, n, o.idle, o.profile)
	n.p.stop()
	if err != nil {
		return nil, err
	}
	s.logIdle(rep.Idle)
	for i := range o.runs {
		if n, err = rig.node(ctx, fmt.Sprintf("ramp-%d", i+1)); err != nil {
			return nil, err
		}
		run, err := s.ramp(ctx, n, rig.sims, o.steps, i+1, o.profile)
		n.p.stop()
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, run)
	}
	rep.Stats = aggregate(rep.Runs)
	rep.MaxSessions, rep.MaxWithCaptions = largest(rep.Runs)
	return rep, nil
}

func (s *suite) logIdle(i idleReport) {
	if i.DialFailed != "" {
		s.log("load: %d of %d idle sessions opened; first failure: %s", i.Sessions, i.Asked, i.DialFailed)
	}
	s.log("load: %d idle sessions: %.1f KiB heap, %.1f KiB RSS, %.2f goroutines per session (after %d collections %.1f KiB heap, %.1f KiB RSS, %.1f KiB stacks); %d of %d dropped sessions resumed, p50 %.0f ms, p99 %.0f ms",
		i.Sessions, i.HeapKiB, i.RSSKiB, i.Goroutines, settleCollections, i.HeapGCKiB, i.RSSGCKiB, i.StackKiB, i.Resumed, i.Resumes, i.ResumeP50, i.ResumeP99)
}

// loadRig is the load benchmark's simulators and how its processes are
// placed on the CPUs.
type loadRig struct {
	s          *suite
	dir        string
	sims       map[string]*sim
	pn         pinning
	coalesceMS int    // the nodes' stream.coalesce_ms, 0 for poise's default
	stop       func() // stops the simulators (writing their profiles) and the profile, unpins this process
}

// startLoadRig starts the load simulators, pins them and this process to
// the traffic's CPUs, and starts the traffic's profile if asked.
func (s *suite) startLoadRig(ctx context.Context, root string, o loadOptions) (*loadRig, error) {
	r := &loadRig{s: s, dir: filepath.Join(s.work, "load"), pn: choosePinning(o.pin), coalesceMS: o.coalesceMS}
	s.log("load: %s", r.pn.mode)
	for _, d := range []string{r.dir, o.profile} {
		if err := os.MkdirAll(cmp.Or(d, r.dir), 0o755); err != nil {
			return nil, err
		}
	}
	var tlsArgs []string
	if o.upstreamTLS {
		var err error
		if tlsArgs, err = trustSimCert(r.dir); err != nil {
			return nil, err
		}
	}
	sims, err := startSims(ctx, s.bins, r.dir, loadSims(root, o.profile, tlsArgs))
	if err != nil {
		return nil, err
	}
	r.sims = sims
	fail := func(err error) (*loadRig, error) {
		stopSims(sims)
		unpinSelf()
		return nil, err
	}
	for _, sm := range sims {
		if err := pin(sm.p.cmd.Process.Pid, r.pn.traffic); err != nil {
			return fail(err)
		}
	}
	if err := pin(os.Getpid(), r.pn.traffic); err != nil {
		return fail(err)
	}
	stopProfile, err := profileSelf(o.profile)
	if err != nil {
		return fail(err)
	}
	r.stop = func() {
		stopProfile()
		stopSims(sims)
		if r.pn.traffic != "" {
			unpinSelf()
		}
	}
	return r, nil
}

// config is a node's configuration: the suite's, on the rig's simulators,
// with the rig's stream.coalesce_ms if set.
func (r *loadRig) config() poiseConfig {
	cfg := baseConfig(r.sims)
	if r.coalesceMS > 0 {
		cfg.Stream.CoalesceMS = &r.coalesceMS
	}
	return cfg
}

// node starts a poise node on the rig's simulators, on poise's CPU.
func (r *loadRig) node(ctx context.Context, name string) (*node, error) {
	n, err := startNode(ctx, r.s.bins, r.dir, name, r.config(), nil)
	if err != nil {
		return nil, err
	}
	if err := pin(n.p.cmd.Process.Pid, r.pn.poise); err != nil {
		n.p.stop()
		return nil, err
	}
	if r.pn.poise != "" {
		if err := waitGOMAXPROCS(ctx, n, cpuCount(r.pn.poise)); err != nil {
			r.s.log("load: %v; measuring anyway", err) // a figure with a note beats no figure
		}
	}
	return n, nil
}

// gomaxprocsWait bounds waitGOMAXPROCS: the Go runtime rereads its CPU
// affinity every few seconds.
const gomaxprocsWait = 15 * time.Second

// waitGOMAXPROCS waits until the pinned node schedules on as many threads
// as it has CPUs (go_sched_gomaxprocs_threads), so that the ramp measures
// the process as it runs on its CPU, not two threads taking turns on one.
func waitGOMAXPROCS(ctx context.Context, n *node, want int) error {
	deadline := time.Now().Add(gomaxprocsWait)
	for {
		if err := n.scrape(ctx); err != nil {
			return err
		}
		got := n.metric("go_sched_gomaxprocs_threads")
		if got == float64(want) || got == 0 { // 0: not exported; nothing to wait for
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: %s pinned to %d CPUs still has GOMAXPROCS %.0f after %v", n.name, want, got, gomaxprocsWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// loadSims are the load benchmark's simulators; with profile set each
// writes its CPU profile there.
func loadSims(root, profile string, tlsArgs []string) []simSpec {
	var specs []simSpec
	for _, m := range []struct{ name, tokenDelay string }{{simVendorA, "20ms"}, {simVendorB, "20ms"}, {simLocal, "30ms"}} {
		args := []string{"-first-token-delay", loadFirstToken[m.name], "-token-delay", m.tokenDelay}
		specs = append(specs, simSpec{m.name, append(args, tlsArgs...)})
	}
	transcripts := filepath.Join(root, "cmd/chaos/testdata/transcripts_en.txt")
	for i := range loadWhispers {
		name := simWhisper
		if i > 0 {
			name = fmt.Sprintf("%s-%d", simWhisper, i+1)
		}
		specs = append(specs, simSpec{name, []string{"-inference-delay", "20ms", "-transcripts", transcripts}})
	}
	if profile != "" {
		for i := range specs {
			specs[i].args = append(specs[i].args, "-cpuprofile", filepath.Join(profile, "sim-"+specs[i].name+".pprof"))
		}
	}
	return specs
}

// ramp runs the steps on n until one misses a target; with profile set,
// each step's CPU profile of poise goes there.
func (s *suite) ramp(ctx context.Context, n *node, sims map[string]*sim, steps []int, run int, profile string) (loadRun, error) {
	var lr loadRun
	captionsOK := true // every step so far had its captions within the SLA
	for _, sessions := range steps {
		st, err := s.loadStep(ctx, n, sims, sessions, run, profile)
		if err != nil {
			return lr, err
		}
		s.log("load run %d: %d sessions: p99 first content %.0f ms, %.1f%% within SLA, captions p95 %.0f ms (%d missed), %d errors, %d lost; poise %.2f cores, %.0f µs per session-second; loadgen %.2f, simulators %.2f cores; CPUs busy %s; pass %v",
			run, st.Sessions, st.FirstP99, 100*st.FirstShare, st.CaptionP95, st.CaptionMissed, st.Errors, st.Lost,
			st.CPU, st.CPUPerSessionUS, st.LoadCPU, st.SimsCPU, busyText(st.CPUsBusy), st.Pass)
		lr.Steps = append(lr.Steps, st)
		if !st.Pass {
			break
		}
		lr.MaxSessions = sessions
		if captionsOK = captionsOK && st.CaptionP95 <= suiteSLAms && st.CaptionMissed == 0; captionsOK {
			lr.MaxWithCaptions = sessions
		}
	}
	return lr, nil
}

// loadStep runs sessions for loadStepFor on n. The CPU figures cover the
// traffic window: from the moment every session is open until the
// traffic stops (the drain, with few messages, is left out). With profile
// set, poise's CPU profile over the window goes to
// profile/poise-run<run>-<sessions>.pprof.
func (s *suite) loadStep(ctx context.Context, n *node, sims map[string]*sim, sessions, run int, profile string) (loadStep, error) {
	r, err := load.Start(ctx, load.Config{Servers: []string{n.url}, Sessions: sessions, Profiles: loadMix,
		Duration: loadStepFor, Seed: s.seed, SLA: suiteSLAms * time.Millisecond, Clip: s.clip, Dialers: loadDialers})
	if err != nil {
		return loadStep{}, err
	}
	pid := n.p.cmd.Process.Pid
	from := markStep(pid, sims)
	prof := n.profileCPU(ctx, profile, fmt.Sprintf("poise-run%d-%d.pprof", run, sessions), time.Until(r.Started().Add(loadStepFor)))
	select {
	case <-time.After(time.Until(r.Started().Add(loadStepFor))):
	case <-ctx.Done():
	}
	to := markStep(pid, sims)
	if err := prof(); err != nil {
		s.log("load: %v", err) // a missing profile costs no figure
	}
	res := r.Wait()
	if err := ctx.Err(); err != nil {
		return loadStep{}, err
	}
	if err := n.scrape(ctx); err != nil {
		return loadStep{}, err
	}
	if err := writeJSON(filepath.Join(s.out, "results", fmt.Sprintf("load-run%d-%d.json", run, sessions)), res); err != nil {
		return loadStep{}, err
	}
	sum := load.Summarize(res, slaAllowance)
	window := to.cpu.at.Sub(from.cpu.at)
	st := loadStep{Sessions: sessions, Opened: res.Opened, Questions: sum.Questions, FirstShare: sum.FirstShare(),
		FirstP50: sum.FirstP50, FirstP99: sum.FirstP99, ByFirst: sum.ByFirst, Captions: sum.Captions,
		CaptionP95: sum.CaptionP95, CaptionMissed: sum.CaptionMissed, Errors: sum.Errors, Lost: sum.Lost, Doubled: sum.Doubled,
		WindowS:         window.Seconds(),
		CPU:             cores(to.poise-from.poise, window),
		CPUPerSessionUS: perSessionSecond(to.poise-from.poise, res.Opened, window),
		LoadCPU:         from.cpu.selfCores(to.cpu), MachineBusy: from.cpu.machineBusy(to.cpu), CPUsBusy: from.cpu.cpusBusy(to.cpu),
		SimsCPU: cores(to.sims-from.sims, window),
		RSSMiB:  n.metric("process_resident_memory_bytes") / (1 << 20)}
	st.Pass = st.Opened == sessions && st.FirstP99 <= suiteSLAms && sum.NoContent == 0 &&
		st.Errors == 0 && st.Lost+st.Doubled == 0 && n.metric("poise_e2e_user_visible_errors_total") == 0
	return st, nil
}

// optionsText names the load options that change what was measured: the
// nodes' stream.coalesce_ms when -coalesce-ms set it, and the model
// simulators' HTTPS with -upstream-tls.
func (l *loadReport) optionsText() string {
	var b strings.Builder
	if l.CoalesceMS != 0 {
		fmt.Fprintf(&b, "; the node's stream.coalesce_ms %d", l.CoalesceMS)
	}
	if l.UpstreamTLS {
		b.WriteString("; the model simulators over HTTPS (HTTP/2)")
	}
	return b.String()
}

// trustSimCert writes a self-signed certificate for the model simulators
// into dir, makes it the only root of this process and of the nodes it
// starts later (SSL_CERT_FILE, which Go reads at its first TLS
// verification: the suite's scenarios, before the load benchmark, speak
// plain HTTP), and returns the simulators' flags for it.
func trustSimCert(dir string) ([]string, error) {
	cert, key, err := vendorsim.WriteSelfSigned(dir)
	if err != nil {
		return nil, err
	}
	if err := os.Setenv("SSL_CERT_FILE", cert); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	return []string{"-tls-cert", cert, "-tls-key", key}, nil
}

func (l *loadReport) markdown() string {
	var b strings.Builder
	b.WriteString("## Load\n\n")
	fmt.Fprintf(&b, "One poise node on this machine, with the load generator and the simulators beside it (%s); %s. Sessions: one in four streams the WAV in real time and types a question every 3–5 s, the others type questions. The ramp ran %d times, each on a fresh node, each until its first step that missed a target; figures are the median over the runs that reached the step, with the spread (min–max) in brackets.\n\n",
		l.Delays+l.optionsText(), l.Pinning, len(l.Runs))
	fmt.Fprintf(&b, "**Largest load within the SLA: %s concurrent sessions** (the median run's; p99 first useful content ≤ %.0f ms, no error, no lost or doubled message); with captions too (p95 ≤ %.0f ms after the utterance ends, none missed): %s.\n\n",
		l.MaxSessions.text("%.0f"), l.SLAms, l.SLAms, l.MaxWithCaptions.text("%.0f"))
	b.WriteString("| sessions | runs passed / reached | p99 first content | captions p95 | captions missed | poise cores | poise CPU per session-second | loadgen / simulators cores | poise cores ÷ simulators' |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, st := range l.Stats {
		fmt.Fprintf(&b, "| %d | %d / %d | %s ms | %s ms | %s | %s | %s µs | %s / %s | %s |\n",
			st.Sessions, st.Passed, st.Reached, st.FirstP99.text("%.0f"), st.CaptionP95.text("%.0f"), st.CaptionMissed.text("%.0f"),
			st.Cores.text("%.2f"), st.CPUPerSessionUS.text("%.0f"), st.LoadCores.text("%.2f"), st.SimsCores.text("%.2f"), st.PerSimCore.text("%.2f"))
	}
	b.WriteString("\nThe last column divides poise's CPU by the simulators', which do the same work in every run: their CPU follows the machine's speed, so the ratio compares runs on a machine whose speed drifts.\n")
	b.WriteString("\nEvery step of every run:\n\n")
	b.WriteString("| run | sessions | questions | first content ≤ sla_ms | p50 | p99 | first content by source | captions p95 (missed) | errors | lost / doubled | CPU cores: poise / loadgen / simulators; busy per CPU | poise CPU per session-second | poise RSS | within target |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---:|---|\n")
	for i, r := range l.Runs {
		for _, st := range r.Steps {
			ok := "✅"
			if !st.Pass {
				ok = "❌"
			}
			fmt.Fprintf(&b, "| %d | %d | %d | %s | %.0f ms | %.0f ms | %s | %.0f ms (%d) | %d | %d / %d | %.2f / %.2f / %.2f; %s | %.0f µs | %.0f MiB | %s |\n",
				i+1, st.Sessions, st.Questions, pct(st.FirstShare), st.FirstP50, st.FirstP99, sourcesText(st.ByFirst),
				st.CaptionP95, st.CaptionMissed, st.Errors, st.Lost, st.Doubled, st.CPU, st.LoadCPU, st.SimsCPU, busyText(st.CPUsBusy),
				st.CPUPerSessionUS, st.RSSMiB, ok)
		}
	}
	b.WriteString("\n")
	b.WriteString(l.Idle.markdown())
	o := l.Overhead
	fmt.Fprintf(&b, "**Engine's added latency** over a direct streaming call to the same simulator (light load, L1): question → `answer_start` p50 %.0f ms / p99 %.0f ms (%d questions); direct request → first content chunk p50 %.0f ms / p99 %.0f ms (%d calls); **added p50 %.1f ms**.\n",
		o.PoiseP50, o.PoiseP99, o.Questions, o.DirectP50, o.DirectP99, o.DirectCalls, o.PoiseP50-o.DirectP50)
	return b.String()
}

// busyText is "CPU 0 45%, CPU 1 98%".
func busyText(busy []float64) string {
	if len(busy) == 0 {
		return "unknown"
	}
	parts := make([]string, len(busy))
	for i, b := range busy {
		parts[i] = fmt.Sprintf("CPU %d %.0f%%", i, 100*b)
	}
	return strings.Join(parts, ", ")
}

// simsCPU is the CPU time the simulators have used.
func simsCPU(sims map[string]*sim) time.Duration {
	var d time.Duration
	for _, s := range sims {
		d += procCPU(s.p.cmd.Process.Pid)
	}
	return d
}
