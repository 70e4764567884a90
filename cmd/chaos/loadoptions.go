package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
)

// Defaults of the load benchmark's options.
const (
	defaultRuns = 3      // ramps: the report gives the median and the spread
	defaultIdle = 10_000 // idle sessions held for the memory and resume figures
)

// loadOptions are the load benchmark's flags.
type loadOptions struct {
	runs  int   // times the ramp runs, each on a fresh node (default 3)
	steps []int // sessions per step (default loadSteps)
	idle  int   // idle sessions (default 10,000)
	// pin runs poise on CPU 0 and the traffic (this process and the
	// simulators) on the others, with taskset. Default on; it falls back
	// to unpinned, and says so in the report, on a single CPU or without
	// taskset.
	pin bool
	// profile is a directory for CPU profiles: poise's over each ramp
	// step, and the traffic's (this process, the load generator, and the
	// load simulators). Default none.
	profile string
	// coalesceMS is the nodes' stream.coalesce_ms; 0 (the default) leaves
	// poise's own default.
	coalesceMS int
	// upstreamTLS has the model simulators serve HTTPS, and HTTP/2 to the
	// node, as hosted vendors do, instead of plain HTTP/1.1. Default off.
	upstreamTLS bool
}

// register adds the load flags to fs.
func (l *loadOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&l.runs, "runs", defaultRuns, "times the load ramp runs; the report gives the median and the spread")
	fs.Func("steps", "comma-separated sessions per load step (default "+intsText(loadSteps)+")", func(v string) error {
		steps, err := parseInts(v)
		l.steps = steps
		return err
	})
	fs.IntVar(&l.idle, "idle", defaultIdle, "idle sessions held for the memory and resume figures")
	fs.BoolVar(&l.pin, "pin", true, "load benchmark: poise on CPU 0, the load generator and simulators on the others (taskset)")
	fs.IntVar(&l.coalesceMS, "coalesce-ms", 0, "load benchmark: the nodes' stream.coalesce_ms (0: poise's default)")
	fs.BoolVar(&l.upstreamTLS, "upstream-tls", false, "load benchmark: the model simulators serve HTTPS, and HTTP/2 to poise, as hosted vendors do")
	fs.StringVar(&l.profile, "profile", "", "write CPU profiles of poise (one per ramp step), the load generator and the load simulators into this `directory`")
}

// resolved fills the defaults in and says how the processes are pinned.
func (l loadOptions) resolved() loadOptions {
	if l.runs <= 0 {
		l.runs = defaultRuns
	}
	if len(l.steps) == 0 {
		l.steps = loadSteps
	}
	if l.idle <= 0 {
		l.idle = defaultIdle
	}
	return l
}

// pinning is how the load benchmark places its processes: the CPU lists
// of poise and of the traffic, empty when unpinned, and why.
type pinning struct {
	poise, traffic string
	mode           string // said in the report
}

// choosePinning pins when asked to and the machine allows it.
func choosePinning(want bool) pinning {
	switch {
	case !want:
		return pinning{mode: "unpinned (-pin=false): poise, the load generator and the simulators share every CPU"}
	case runtime.NumCPU() < 2:
		return pinning{mode: "unpinned: one CPU"}
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return pinning{mode: "unpinned: taskset (util-linux) not found"}
	}
	last := runtime.NumCPU() - 1
	traffic := "1"
	if last > 1 {
		traffic = fmt.Sprintf("1-%d", last)
	}
	return pinning{poise: "0", traffic: traffic,
		mode: fmt.Sprintf("pinned with taskset: poise on CPU 0, the load generator and the simulators on CPU %s", traffic)}
}

// pin sets the CPU affinity of every thread of process pid (threads
// created later inherit it). A no-op when cpus is empty.
func pin(pid int, cpus string) error {
	if cpus == "" {
		return nil
	}
	out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("chaos: taskset -a -p -c %s %d: %w: %s", cpus, pid, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// unpinSelf lets this process run on every CPU again (best effort: a
// failure leaves it on the traffic's CPUs).
func unpinSelf() {
	if runtime.NumCPU() > 1 {
		_ = pin(os.Getpid(), fmt.Sprintf("0-%d", runtime.NumCPU()-1))
	}
}

// profileSelf starts a CPU profile of this process into dir, if dir is
// set; the returned stop ends it.
func profileSelf(dir string) (stop func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, "loadgen.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// cpuCount is the number of CPUs in a taskset list ("0", "1-3", "0,2").
func cpuCount(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		switch {
		case errA != nil:
		case isRange && errB == nil && b >= a:
			n += b - a + 1
		case !isRange:
			n++
		}
	}
	return n
}

func parseInts(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("want positive integers, got %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func intsText(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
