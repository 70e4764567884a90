package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Files of the report directory.
const (
	reportFile  = "report.md"
	summaryFile = "summary.json"
	chartFile   = "l1-outage-levels.png"
)

// report is the whole run: every scenario's outcome and the load figures.
type report struct {
	Generated any         `json:"generated"`
	Command   string      `json:"command"`
	Machine   string      `json:"machine"`
	Seed      int64       `json:"seed"`
	Sessions  int         `json:"sessions"`
	Short     bool        `json:"short"`
	Outcomes  []*outcome  `json:"scenarios"`
	Load      *loadReport `json:"load,omitempty"`
	ElapsedS  float64     `json:"elapsed_s"`
}

func (r *report) failed() int {
	n := 0
	for _, o := range r.Outcomes {
		if len(o.Failures) > 0 {
			n++
		}
	}
	return n
}

func (r *report) write(dir string) error {
	if err := writeJSON(filepath.Join(dir, summaryFile), r); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, reportFile), []byte(r.markdown()), 0o644)
}

// line is the outcome in one log line.
func (o *outcome) line() string {
	s := o.Summary
	verdict := "all targets met"
	if len(o.Failures) > 0 {
		verdict = "MISSED: " + strings.Join(o.Failures, "; ")
	}
	return fmt.Sprintf("%d questions, %.1f%% first content within SLA, %.1f%% model/template, p99 %.0f ms, %d errors, %d lost, %d doubled; %s",
		s.Questions, 100*s.FirstShare(), 100*s.ContentShare(), s.FirstP99, s.Errors, s.Lost, s.Doubled, verdict)
}

func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Poise chaos and load report\n\n")
	fmt.Fprintf(&b, "Generated %v on %s by `%s` (seed %d, %d sessions per scenario, %.0f s).\n\n",
		r.Generated, r.Machine, r.Command, r.Seed, r.Sessions, r.ElapsedS)
	if len(r.Outcomes) > 0 {
		b.WriteString(scenarioTable(r.Outcomes))
		b.WriteString(scenarioNotes(r.Outcomes))
	}
	if r.Load != nil {
		b.WriteString(r.Load.markdown())
	}
	return b.String()
}

// scenarioTable is the table of targets per scenario.
func scenarioTable(os []*outcome) string {
	var b strings.Builder
	b.WriteString("| scenario | questions | first useful content ≤ sla_ms | model or template ≤ sla_ms | first content p99 / max | user-visible errors (messages / metric) | lost / doubled | level transitions | climb back after clear | verdict |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|---:|---|\n")
	for _, o := range os {
		s := o.Summary
		verdict := "✅"
		if len(o.Failures) > 0 {
			verdict = "❌ " + strings.Join(o.Failures, "; ")
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.0f / %.0f ms | %d / %.0f | %d / %d | %s | %s | %s |\n",
			o.Name, s.Questions, pct(s.FirstShare()), pct(s.ContentShare()), s.FirstP99, s.FirstMax,
			s.Errors, o.MetricErrors, s.Lost, s.Doubled, transitionsText(o.Transitions), climbText(o), verdict)
	}
	return b.String()
}

// scenarioNotes describes each scenario and the figures the table leaves
// out.
func scenarioNotes(os []*outcome) string {
	var b strings.Builder
	b.WriteString("\n### Scenarios\n\n")
	for _, o := range os {
		s := o.Summary
		fmt.Fprintf(&b, "- **%s** — %s. Steps:", o.Name, o.About)
		for _, st := range o.Steps {
			fmt.Fprintf(&b, " %.1f s %s;", st.AtMS/1000, st.What)
		}
		if len(o.Steps) == 0 {
			b.WriteString(" none;")
		}
		fmt.Fprintf(&b, " first content by source %s", sourcesText(s.ByFirst))
		if s.CoachAtSLA > 0 {
			fmt.Fprintf(&b, "; %d questions got the coach from the server's SLA timer, between sla_ms and sla_ms + 100 ms after they were asked", s.CoachAtSLA)
		}
		if s.Cut > 0 {
			fmt.Fprintf(&b, "; %d answers ended `cut`", s.Cut)
		}
		if s.Superseded+s.Offline > 0 {
			fmt.Fprintf(&b, "; %d superseded and %d asked offline (not counted)", s.Superseded, s.Offline)
		}
		if s.Captions > 0 {
			fmt.Fprintf(&b, "; %d captions, p95 %.0f ms after the utterance ended, sources %s, %d missed", s.Captions, s.CaptionP95, sourcesText(s.CaptionSources), s.CaptionMissed)
		}
		if s.Reconnects > 0 {
			fmt.Fprintf(&b, "; %d reconnects, longest %.0f ms offline, %d sessions lost", s.Reconnects, s.ResumeMaxMS, s.SessionsLost)
		}
		if o.DegradeMS >= 0 {
			fmt.Fprintf(&b, "; first level change %.1f s after the fault", o.DegradeMS/1000)
		}
		b.WriteString(".\n")
	}
	fmt.Fprintf(&b, "\nSessions per level during the L1 outage: [%s](%s).\n\n", chartFile, chartFile)
	return b.String()
}

func climbText(o *outcome) string {
	switch {
	case o.NotBack > 0:
		return fmt.Sprintf("%d not back", o.NotBack)
	case o.ClimbBackMS < 0:
		return "—"
	default:
		return fmt.Sprintf("%.1f s", o.ClimbBackMS/1000)
	}
}

func sourcesText(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	return transitionsText(m)
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
