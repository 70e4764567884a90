package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
)

// loadName selects the load benchmark in -only.
const loadName = "load"

// Suite sizes.
const (
	defaultSessions = 24 // per scenario in the full run
	shortSessions   = 8  // per scenario in the short (CI) run
	shortScale      = 0.6
)

type options struct {
	command  string   // the command line, as the report names it
	out      string   // report directory
	only     []string // scenario names; empty: all (or the CI subset with short)
	short    bool
	sessions int
	seed     int64
	binDir   string // prebuilt poise and vendorsim; empty: build them
	bench    bool   // run the load benchmark
	// timeScale multiplies every scenario's duration and step times
	// (default 1; -short uses shortScale).
	timeScale float64
	// outage is how long the L1 regional outage lasts (default 2 minutes;
	// -short keeps the scenario's own 10 s).
	outage time.Duration
	load   loadOptions
	log    io.Writer
}

func parseOptions(args []string) (options, error) {
	o := options{log: os.Stderr, command: strings.Join(append([]string{"go run ./cmd/chaos"}, args...), " ")}
	var only string
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.StringVar(&o.out, "out", "artifacts/chaos", "report `directory`")
	fs.StringVar(&only, "only", "", "comma-separated scenario names, and \""+loadName+"\" for the load benchmark (default: all)")
	fs.BoolVar(&o.short, "short", false, "the CI subset: few sessions, no load benchmark")
	fs.IntVar(&o.sessions, "sessions", 0, fmt.Sprintf("sessions per scenario (default %d, %d with -short)", defaultSessions, shortSessions))
	fs.Int64Var(&o.seed, "seed", 1, "seed of the sessions' questions and timing")
	fs.StringVar(&o.binDir, "bin", "", "`directory` with prebuilt poise and vendorsim binaries (default: build them)")
	fs.DurationVar(&o.outage, "outage", 2*time.Minute, "how long the L1 regional outage lasts (not with -short)")
	fs.BoolVar(&o.bench, "load", true, "run the load benchmark after the scenarios (never with -short)")
	o.load.register(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if only != "" {
		o.only = strings.Split(only, ",")
	}
	if o.sessions <= 0 {
		o.sessions = defaultSessions
		if o.short {
			o.sessions = shortSessions
		}
	}
	o.bench = o.bench && !o.short && (len(o.only) == 0 || slices.Contains(o.only, loadName))
	o.timeScale = 1
	if o.short {
		o.timeScale = shortScale
		o.outage = 0
	}
	return o, nil
}

func run(ctx context.Context, args []string) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	rep, err := runSuite(ctx, o)
	if err != nil {
		return err
	}
	if n := rep.failed(); n > 0 {
		return fmt.Errorf("%d scenarios missed a target; see %s", n, filepath.Join(o.out, reportFile))
	}
	return nil
}

// pick returns the scenarios o asks for, in suite order.
func pick(o options) ([]scenario, error) {
	var out []scenario
	for _, sc := range scenarios {
		if len(o.only) > 0 && slices.Contains(o.only, sc.name) || len(o.only) == 0 && (!o.short || sc.ci) {
			out = append(out, sc)
		}
	}
	for _, n := range o.only {
		if n != loadName && !slices.ContainsFunc(scenarios, func(sc scenario) bool { return sc.name == n }) {
			return nil, fmt.Errorf("unknown scenario %q", n)
		}
	}
	return out, nil
}

// runSuite builds the binaries, runs the scenarios (and the load
// benchmark), and writes the report into o.out.
func runSuite(ctx context.Context, o options) (*report, error) {
	began := time.Now()
	defer http.DefaultClient.CloseIdleConnections() // the control calls' keep-alive connections
	logf := func(format string, args ...any) {
		fmt.Fprintf(o.log, "%6.1fs  %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
	chosen, err := pick(o)
	if err != nil {
		return nil, err
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.out, "results"), 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "poise-chaos-")
	if err != nil {
		return nil, err
	}
	logf("work directory (configs, process logs): %s", work)
	b, err := buildBins(ctx, root, o.binDir, work)
	if err != nil {
		return nil, err
	}
	logf("binaries ready")
	clip, err := load.LoadClip(filepath.Join(root, "asr/testdata/en_questions.wav"), filepath.Join(root, "asr/testdata/boundaries.json"))
	if err != nil {
		return nil, err
	}
	transcripts := filepath.Join(root, "cmd/chaos/testdata/transcripts_en.txt")
	sims, err := startSims(ctx, b, work, suiteSims(transcripts))
	if err != nil {
		return nil, err
	}
	defer stopSims(sims)
	s := &suite{bins: b, work: work, out: o.out, sims: sims, clip: clip, seed: o.seed, sessions: o.sessions, log: logf}
	rep := &report{Generated: time.Now().UTC(), Command: o.command, Machine: machine(), Seed: o.seed, Sessions: o.sessions, Short: o.short}
	for _, sc := range chosen {
		logf("scenario %s: %s", sc.name, sc.about)
		oc, res, err := s.run(ctx, sc.lasting(o.outage).scaled(o.timeScale))
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.name, err)
		}
		if err := writeJSON(filepath.Join(o.out, "results", sc.name+".json"), res); err != nil {
			return nil, err
		}
		if sc.chart {
			if err := writeChart(filepath.Join(o.out, chartFile), sc, res, oc); err != nil {
				return nil, err
			}
		}
		logf("scenario %s: %s", sc.name, oc.line())
		rep.Outcomes = append(rep.Outcomes, oc)
	}
	if o.bench {
		lr, err := s.loadBenchmark(ctx, root, o.load.resolved())
		if err != nil {
			return nil, fmt.Errorf("load benchmark: %w", err)
		}
		rep.Load = lr
	}
	rep.ElapsedS = time.Since(began).Seconds()
	if err := rep.write(o.out); err != nil {
		return nil, err
	}
	logf("report: %s", filepath.Join(o.out, reportFile))
	if rep.failed() == 0 {
		os.RemoveAll(work)
	} else {
		logf("process logs and configs kept in %s", work)
	}
	return rep, nil
}

// suiteSims are the scenarios' simulators, with realistic delays.
func suiteSims(transcripts string) []simSpec {
	return []simSpec{
		{simVendorA, []string{"-first-token-delay", "400ms", "-token-delay", "20ms"}},
		{simVendorB, []string{"-first-token-delay", "500ms", "-token-delay", "20ms"}},
		{simLocal, []string{"-first-token-delay", "300ms", "-token-delay", "30ms"}},
		{simWhisper, []string{"-inference-delay", "60ms", "-transcripts", transcripts}},
		{simSTT, []string{"-inference-delay", "300ms", "-transcripts", transcripts}},
	}
}

// buildBins builds poise and vendorsim into work, or uses those in dir.
func buildBins(ctx context.Context, root, dir, work string) (bins, error) {
	if dir == "" {
		dir = filepath.Join(work, "bin")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+"/", "./cmd/poise", "./cmd/vendorsim")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return bins{}, fmt.Errorf("go build: %w\n%s", err, out)
		}
	}
	b := bins{poise: filepath.Join(dir, "poise"), vendorsim: filepath.Join(dir, "vendorsim")}
	for _, p := range []string{b.poise, b.vendorsim} {
		if _, err := os.Stat(p); err != nil {
			return b, err
		}
	}
	return b, nil
}

// moduleRoot is the directory of Poise's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run chaos inside the poise module")
	}
	return filepath.Dir(mod), nil
}

func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
