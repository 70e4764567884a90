package main

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// suiteLimit bounds the short suite; it takes about a minute and a half.
const suiteLimit = 4 * time.Minute

// TestShortSuite is the CI run of the chaos suite: the scenarios marked
// ci, with few sessions and a shortened timeline, against real poise,
// vendorsim and redis-server processes. Its thresholds are the targets:
// every question gets useful content within sla_ms, no user-visible
// error, no lost or doubled message, every session back at L1.
func TestShortSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos suite builds and starts processes; not with -short")
	}
	defer goleak.VerifyNone(t)
	o := options{out: t.TempDir(), short: true, sessions: shortSessions, seed: 1, timeScale: shortScale, log: testLog{t}}
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is needed by the Redis scenarios: %v", err)
		}
		t.Logf("redis-server not installed: running the scenarios that need no Redis")
		for _, sc := range scenarios {
			if sc.ci && !sc.redis {
				o.only = append(o.only, sc.name)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), suiteLimit)
	defer cancel()
	rep, err := runSuite(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outcomes) < 2 {
		t.Fatalf("%d scenarios ran", len(rep.Outcomes))
	}
	for _, oc := range rep.Outcomes {
		t.Run(oc.Name, func(t *testing.T) {
			s := oc.Summary
			if oc.Opened != oc.Sessions {
				t.Errorf("%d of %d sessions opened", oc.Opened, oc.Sessions)
			}
			if s.Questions < oc.Sessions {
				t.Errorf("only %d questions counted", s.Questions)
			}
			if s.FirstWithin != s.Questions {
				t.Errorf("%d of %d questions had first useful content within sla_ms (p99 %.0f ms, max %.0f ms)", s.FirstWithin, s.Questions, s.FirstP99, s.FirstMax)
			}
			if s.Errors != 0 || oc.MetricErrors != 0 {
				t.Errorf("user-visible errors: %d error messages %v, poise_e2e_user_visible_errors_total %.0f", s.Errors, s.ErrorCodes, oc.MetricErrors)
			}
			if s.Lost != 0 || s.Doubled != 0 || s.SessionsLost != 0 {
				t.Errorf("%d lost, %d doubled messages, %d sessions lost", s.Lost, s.Doubled, s.SessionsLost)
			}
			if len(oc.Failures) > 0 {
				t.Errorf("missed targets: %s", strings.Join(oc.Failures, "; "))
			}
		})
	}
	checkReportFiles(t, o.out, rep)
}

// checkReportFiles checks that the report, its summary, the per-scenario
// results and the outage chart were written.
func checkReportFiles(t *testing.T, dir string, rep *report) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(dir, reportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, oc := range rep.Outcomes {
		if !strings.Contains(string(md), "| "+oc.Name+" |") {
			t.Errorf("report has no row for %s", oc.Name)
		}
		if _, err := os.Stat(filepath.Join(dir, "results", oc.Name+".json")); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, summaryFile)); err != nil {
		t.Error(err)
	}
	if slices.ContainsFunc(rep.Outcomes, func(o *outcome) bool { return o.Name == "l1-outage" }) {
		f, err := os.Open(filepath.Join(dir, chartFile))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := png.Decode(f); err != nil {
			t.Errorf("chart: %v", err)
		}
	}
}

// testLog writes the suite's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestPick(t *testing.T) {
	short, err := pick(options{short: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range short {
		names = append(names, sc.name)
	}
	if !slices.Equal(names, []string{"l1-outage", "rate-limit-429", "partial-outage", "stream-cut", "local-timeout", "node-killed"}) {
		t.Errorf("short run: %v", names)
	}
	all, _ := pick(options{})
	if len(all) != len(scenarios) {
		t.Errorf("full run: %d of %d scenarios", len(all), len(scenarios))
	}
	if _, err := pick(options{only: []string{"l1-outage", "no-such"}}); err == nil {
		t.Error("an unknown scenario name was accepted")
	}
	if got, _ := pick(options{only: []string{loadName}}); len(got) != 0 {
		t.Errorf("-only load picked scenarios %v", got)
	}
}

func TestScenariosAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range scenarios {
		if seen[sc.name] {
			t.Errorf("two scenarios named %s", sc.name)
		}
		seen[sc.name] = true
		last := time.Duration(0)
		for _, st := range sc.steps {
			if st.at < last || st.at >= sc.duration {
				t.Errorf("%s: step %q at %v is out of order or after the traffic (%v)", sc.name, st.what, st.at, sc.duration)
			}
			last = st.at
		}
		if sc.nodes > 1 && !sc.redis {
			t.Errorf("%s: several nodes need Redis to share sessions", sc.name)
		}
	}
	for _, want := range []string{"l1-outage", "rate-limit-429", "partial-outage", "quota-402", "model-404", "dns-failure", "slow-first-token",
		"stream-stall", "stream-cut", "local-timeout", "templates-down", "whisper-down", "redis-down", "node-killed"} {
		if !seen[want] {
			t.Errorf("the suite lacks %s", want)
		}
	}
}

func TestScaled(t *testing.T) {
	sc := scenario{duration: 10 * time.Second, steps: []step{{at: 2 * time.Second}, {at: 5 * time.Second}}}
	got := sc.scaled(0.6)
	if got.duration != 6*time.Second || got.steps[0].at != 1200*time.Millisecond || got.steps[1].at != 3*time.Second {
		t.Errorf("scaled: %v %v %v", got.duration, got.steps[0].at, got.steps[1].at)
	}
	if sc.steps[0].at != 2*time.Second {
		t.Error("scaled changed the original steps")
	}
}

func TestOutageLasting(t *testing.T) {
	sc := scenarios[0].lasting(2 * time.Minute)
	if sc.name != "l1-outage" || sc.duration != 134*time.Second {
		t.Fatalf("%s lasts %v, want l1-outage lasting 134s", sc.name, sc.duration)
	}
	last := sc.steps[len(sc.steps)-1]
	if last.at != 123*time.Second || sc.steps[0].at != 3*time.Second {
		t.Fatalf("fault from %v to %v, want 3s to 123s", sc.steps[0].at, last.at)
	}
	if same := scenarios[1].lasting(2 * time.Minute); same.duration != scenarios[1].duration {
		t.Fatalf("a scenario without a fault window changed: %v", same.duration)
	}
}
