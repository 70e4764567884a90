package main

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestStatOf(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		want stat
	}{
		{[]float64{612, 480, 1904}, stat{Median: 612, Min: 480, Max: 1904, N: 3}},
		{[]float64{2500, 2000}, stat{Median: 2250, Min: 2000, Max: 2500, N: 2}},
		{[]float64{0.31}, stat{Median: 0.31, Min: 0.31, Max: 0.31, N: 1}},
		{nil, stat{}},
	} {
		in := append([]float64(nil), tt.xs...)
		if got := statOf(tt.xs); got != tt.want {
			t.Errorf("statOf(%v) = %+v, want %+v", tt.xs, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.xs[i] {
				t.Errorf("statOf reordered its input: %v", tt.xs)
			}
		}
	}
	if got := (stat{Median: 612, Min: 480, Max: 1904, N: 3}).text("%.0f"); got != "612 (480–1904)" {
		t.Errorf("text %q", got)
	}
	if got := (stat{Median: 2500, Min: 2500, Max: 2500, N: 3}).text("%.0f"); got != "2500" {
		t.Errorf("text of agreeing runs %q", got)
	}
	if got := (stat{}).text("%.0f"); got != "—" {
		t.Errorf("text of no runs %q", got)
	}
}

func TestPerSessionSecond(t *testing.T) {
	// 1000 sessions for 15 s on 4.5 s of CPU: 0.3 cores, 300 µs per
	// session-second.
	if got := perSessionSecond(4500*time.Millisecond, 1000, 15*time.Second); got != 300 {
		t.Errorf("per session-second %v µs, want 300", got)
	}
	if got := cores(4500*time.Millisecond, 15*time.Second); got != 0.3 {
		t.Errorf("cores %v, want 0.3", got)
	}
	// 2500 sessions, 14.8 s, 11.1 s of CPU: exactly 300 µs again.
	if got := perSessionSecond(11100*time.Millisecond, 2500, 14800*time.Millisecond); got < 299.99 || got > 300.01 {
		t.Errorf("per session-second %v µs, want 300", got)
	}
	if perSessionSecond(time.Second, 0, time.Second) != 0 || cores(time.Second, 0) != 0 {
		t.Error("no sessions or no window gave a figure")
	}
}

func TestAggregate(t *testing.T) {
	step := func(n int, p99, capP95 float64, missed int, cpu, perSess float64, pass bool) loadStep {
		return loadStep{Sessions: n, FirstP99: p99, CaptionP95: capP95, CaptionMissed: missed, CPU: cpu, CPUPerSessionUS: perSess, Pass: pass}
	}
	runs := []loadRun{
		{Steps: []loadStep{step(250, 470, 640, 0, 0.08, 320, true), step(500, 490, 660, 0, 0.15, 300, true), step(1000, 2300, 6500, 151, 0.33, 330, false)}, MaxSessions: 500, MaxWithCaptions: 500},
		{Steps: []loadStep{step(250, 480, 642, 0, 0.09, 360, true), step(500, 516, 674, 0, 0.16, 320, true), step(1000, 671, 918, 2, 0.31, 310, true)}, MaxSessions: 1000, MaxWithCaptions: 500},
		{Steps: []loadStep{step(250, 460, 630, 0, 0.07, 280, true), step(500, 500, 650, 0, 0.14, 280, true), step(1000, 640, 900, 0, 0.30, 300, true), step(1500, 900, 1200, 0, 0.45, 300, false)}, MaxSessions: 1000, MaxWithCaptions: 1000},
	}
	for i := range runs {
		runs[i].Steps[2].SimsCPU = 0.2 // the 1000-session step's simulators
	}
	got := aggregate(runs)
	if len(got) != 4 {
		t.Fatalf("%d steps, want 4", len(got))
	}
	s1000 := got[2]
	if s1000.Sessions != 1000 || s1000.Reached != 3 || s1000.Passed != 2 {
		t.Errorf("1000: %+v", s1000)
	}
	if s1000.FirstP99 != (stat{Median: 671, Min: 640, Max: 2300, N: 3}) {
		t.Errorf("1000 p99 %+v", s1000.FirstP99)
	}
	if s1000.CaptionMissed != (stat{Median: 2, Min: 0, Max: 151, N: 3}) || s1000.CPUPerSessionUS != (stat{Median: 310, Min: 300, Max: 330, N: 3}) {
		t.Errorf("1000 missed %+v, per session %+v", s1000.CaptionMissed, s1000.CPUPerSessionUS)
	}
	if s1000.Cores.Median != 0.31 || got[0].CaptionP95.Median != 640 {
		t.Errorf("cores %+v, 250 captions %+v", s1000.Cores, got[0].CaptionP95)
	}
	if got[3].Reached != 1 || got[3].Passed != 0 || got[3].FirstP99.Median != 900 {
		t.Errorf("1500: %+v", got[3])
	}
	sla, capt := largest(runs)
	if sla != (stat{Median: 1000, Min: 500, Max: 1000, N: 3}) || capt != (stat{Median: 500, Min: 500, Max: 1000, N: 3}) {
		t.Errorf("largest %+v, with captions %+v", sla, capt)
	}
	md := (&loadReport{Runs: runs, Stats: got, MaxSessions: sla, MaxWithCaptions: capt, Pinning: "pinned"}).markdown()
	if r := s1000.PerSimCore; r.text("%.2f") != "1.55 (1.50–1.65)" || got[0].PerSimCore.Median != 0 {
		t.Errorf("1000 poise cores per simulator core %+v (%s), 250 without simulators %+v", r, r.text("%.2f"), got[0].PerSimCore)
	}
	for _, want := range []string{"**Largest load within the SLA: 1000 (500–1000) concurrent sessions**", "| 1000 | 2 / 3 | 671 (640–2300) ms |", "| 3 | 1500 |", "| 1.55 (1.50–1.65) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestLoadOptions(t *testing.T) {
	o, err := parseOptions([]string{"-only", "load", "-runs", "1", "-steps", "250, 500", "-pin=false"})
	if err != nil {
		t.Fatal(err)
	}
	l := o.load.resolved()
	if l.runs != 1 || len(l.steps) != 2 || l.steps[1] != 500 || l.pin || l.idle != defaultIdle {
		t.Errorf("options %+v", l)
	}
	if d, _ := parseOptions(nil); d.load.resolved().runs != defaultRuns || len(d.load.resolved().steps) != len(loadSteps) || !d.load.pin {
		t.Errorf("defaults %+v", d.load)
	}
	if _, err := parseOptions([]string{"-steps", "250,x"}); err == nil {
		t.Error("a bad step list was accepted")
	}
	if p := choosePinning(false); p.poise != "" || p.traffic != "" {
		t.Errorf("unpinned by request, yet %+v", p)
	}
	w, err := parseOptions([]string{"-only", "load", "-coalesce-ms", "100"})
	if err != nil || w.load.resolved().coalesceMS != 100 {
		t.Fatalf("-coalesce-ms 100: %+v, %v", w.load, err)
	}
}

// TestCoalesceReachesTheNode: -coalesce-ms sets the node's
// stream.coalesce_ms and the report says so; unset, poise keeps its own
// default.
func TestCoalesceReachesTheNode(t *testing.T) {
	sims := map[string]*sim{simVendorA: {url: "http://a"}, simVendorB: {url: "http://b"}, simLocal: {url: "http://l"}, simWhisper: {url: "http://w"}}
	for _, ms := range []int{0, 100} {
		r := &loadRig{sims: sims, coalesceMS: ms}
		raw, err := yaml.Marshal(r.config())
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Stream map[string]int `yaml:"stream"`
		}
		if err := yaml.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if v, set := back.Stream["coalesce_ms"]; set != (ms > 0) || v != ms {
			t.Errorf("-coalesce-ms %d: the node's stream is %v", ms, back.Stream)
		}
		md := (&loadReport{CoalesceMS: ms}).markdown()
		if said := strings.Contains(md, "stream.coalesce_ms 100"); said != (ms > 0) {
			t.Errorf("-coalesce-ms %d: the report says the window: %v", ms, said)
		}
	}
}

func TestCPUsBusy(t *testing.T) {
	// Two /proc/stat cpu lines a second apart (USER_HZ 100): CPU 0 busy
	// 45 of 100 jiffies, CPU 1 98 of 100 (iowait counts as idle).
	a := parseJiffies("cpu0 1000 0 500 8000 100 0 20 0 0 0")
	b := parseJiffies("cpu0 1030 0 513 8050 105 0 22 0 0 0")
	c := parseJiffies("cpu1 2000 10 700 6000 0 0 0 0 0 0")
	d := parseJiffies("cpu1 2070 10 728 6002 0 0 0 0 0 0")
	if a.total != 9620 || a.busy != 1520 {
		t.Errorf("jiffies %+v", a)
	}
	got := cpuMark{perCPU: []jiffies{a, c}}.cpusBusy(cpuMark{perCPU: []jiffies{b, d}})
	if len(got) != 2 || got[0] != 0.45 || got[1] != 0.98 {
		t.Errorf("busy %v, want [0.45 0.98]", got)
	}
	if busyText(got) != "CPU 0 45%, CPU 1 98%" || busyText(nil) != "unknown" {
		t.Errorf("text %q", busyText(got))
	}
	if m := markCPU(); len(m.perCPU) != runtime.NumCPU() {
		t.Errorf("/proc/stat gave %d CPUs, the runtime %d", len(m.perCPU), runtime.NumCPU())
	}
}

func TestCPUCount(t *testing.T) {
	for list, want := range map[string]int{"0": 1, "1": 1, "1-3": 3, "0,2-3": 3, "": 0, "x": 0} {
		if got := cpuCount(list); got != want {
			t.Errorf("cpuCount(%q) = %d, want %d", list, got, want)
		}
	}
}

// TestUpstreamTLSOption: -upstream-tls gives the model simulators, and
// only them, the certificate flags, and the report says so.
func TestUpstreamTLSOption(t *testing.T) {
	tlsArgs := []string{"-tls-cert", "cert.pem", "-tls-key", "key.pem"}
	for _, with := range []bool{false, true} {
		var args []string
		if with {
			args = tlsArgs
		}
		for _, s := range loadSims("/repo", "", args) {
			model := s.name == simVendorA || s.name == simVendorB || s.name == simLocal
			if got := slices.Contains(s.args, "-tls-cert"); got != (with && model) {
				t.Errorf("-upstream-tls %v: %s has -tls-cert: %v", with, s.name, got)
			}
		}
		md := (&loadReport{UpstreamTLS: with}).markdown()
		if said := strings.Contains(md, "over HTTPS (HTTP/2)"); said != with {
			t.Errorf("-upstream-tls %v: the report says HTTPS: %v", with, said)
		}
	}
}
