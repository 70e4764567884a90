package main

import (
	"image/color"
	"os"
	"strings"
	"testing"

	"github.com/poise-dev/poise/cmd/loadgen/load"
)

func TestAssess(t *testing.T) {
	res := &load.Result{SLAms: 1500, Sessions: 2, Opened: 2,
		Questions: []load.QuestionRecord{
			{Session: 0, ID: "t1", FirstMS: 400, AnswerMS: 400, FirstKind: "answer", Level: "L1"},
			{Session: 1, ID: "t1", FirstMS: 1501, AnswerMS: 2000, FirstKind: "coach", Level: "L2"},
		},
		Levels: []load.LevelRecord{
			{Session: 0, AtMS: 4000, From: "L1", To: "L2", Reason: "vendor_all_down"},
			{Session: 1, AtMS: 4100, From: "L1", To: "L2", Reason: "vendor_all_down"},
			{Session: 0, AtMS: 11500, From: "L2", To: "L1", Reason: "recovered"},
			{Session: 1, AtMS: 12000, From: "L2", To: "L1", Reason: "recovered"},
		},
	}
	steps := []stepRun{{AtMS: 3000, Kind: "fault", What: "down"}, {AtMS: 10000, Kind: "clear", What: "up"}}
	o := assess(scenario{name: "x"}, res, nil, steps)
	if o.DegradeMS != 1000 || o.ClimbBackMS != 2000 || o.NotBack != 0 {
		t.Errorf("degrade %v climb %v not back %d", o.DegradeMS, o.ClimbBackMS, o.NotBack)
	}
	if o.Transitions["L1→L2 (vendor_all_down)"] != 2 || o.Transitions["L2→L1 (recovered)"] != 2 {
		t.Errorf("transitions %v", o.Transitions)
	}
	if len(o.Failures) != 1 || !strings.Contains(o.Failures[0], "1 of 2 questions") {
		t.Errorf("failures %q: want the late question only", o.Failures)
	}

	res.Levels = res.Levels[:3] // session 1 stays at L2
	if o := assess(scenario{}, res, nil, steps); o.NotBack != 1 || len(o.Failures) != 2 {
		t.Errorf("not back %d, failures %q", o.NotBack, o.Failures)
	}
}

func TestPlotDrawsEachSeries(t *testing.T) {
	green := color.RGBA{0, 200, 0, 255}
	blue := color.RGBA{0, 0, 200, 255}
	lines := []series{
		{name: "L1", colour: green, xs: []float64{0, 10}, ys: []float64{10, 10}},
		{name: "L2", colour: blue, xs: []float64{0, 10}, ys: []float64{0, 10}},
	}
	img := plot("test", "seconds", lines, [2]float64{2, 4}, 10)
	midX := (marginLeft + chartW - marginRight) / 2
	topY := marginTop
	if img.RGBAAt(midX, topY) != green {
		t.Errorf("the L1 line is not at the top at mid-chart: %v", img.RGBAAt(midX, topY))
	}
	midY := (marginTop + chartH - marginBottom) / 2
	found := false
	for dx := -2; dx <= 2; dx++ {
		found = found || img.RGBAAt(midX+dx, midY) == blue
	}
	if !found {
		t.Error("the rising L2 line does not cross the middle of the chart")
	}
	faultX := marginLeft + (chartW-marginRight-marginLeft)*3/10 // x = 3 s, inside the band
	if img.RGBAAt(faultX, chartH-marginBottom-100) != faultInk {
		t.Errorf("the fault band is not shaded: %v", img.RGBAAt(faultX, chartH-marginBottom-100))
	}
}

func TestNiceStep(t *testing.T) {
	for _, tt := range []struct{ span, want float64 }{{24, 5}, {10, 2}, {27.5, 5}, {1000, 200}, {6, 1}} {
		if got := niceStep(tt.span); got != tt.want {
			t.Errorf("niceStep(%v) = %v, want %v", tt.span, got, tt.want)
		}
	}
}

func TestGlyphsAreFiveBySeven(t *testing.T) {
	for r, g := range glyphs {
		for _, row := range g {
			if len(row) != glyphW || strings.Trim(row, "#.") != "" {
				t.Errorf("glyph %q has row %q", r, row)
			}
		}
	}
}

func TestExpectations(t *testing.T) {
	o := &outcome{Opened: 2, Transitions: map[string]int{"L1→L2 (vendor_all_down)": 2, "L2→L1 (recovered)": 1},
		Summary: load.Summary{CaptionSources: map[string]int{"whisper@127.0.0.1:1": 3}}}
	res := &load.Result{}
	if got := everySession("L1→L2 (vendor_all_down)")(o, res); len(got) != 0 {
		t.Errorf("every session went down, yet: %q", got)
	}
	if got := everySession("L2→L1 (recovered)")(o, res); len(got) != 1 {
		t.Errorf("one session of two recovered, yet: %q", got)
	}
	if got := captionsFrom("cloud")(o, res); len(got) != 1 {
		t.Errorf("no cloud captions, yet: %q", got)
	}
	if got := captionsFrom("whisper")(o, res); len(got) != 0 {
		t.Errorf("whisper captions, yet: %q", got)
	}
	if got := resumed(o, res); len(got) != 1 {
		t.Errorf("no reconnects, yet: %q", got)
	}
	res.Reconnects = []load.ReconnectRecord{{Resumed: true}}
	if got := resumed(o, res); len(got) != 0 {
		t.Errorf("a resume, yet: %q", got)
	}
}

func TestProcCPU(t *testing.T) {
	before := markCPU()
	x := 0
	for i := range 50_000_000 {
		x ^= i
	}
	_ = x
	if d := procCPU(os.Getpid()); d <= 0 {
		t.Errorf("this process used %v of CPU", d)
	}
	if b := before.machineBusy(markCPU()); b < -1 || b > 1 {
		t.Errorf("machine busy share %v", b)
	}
	if procCPU(-1) != 0 {
		t.Error("a missing process has CPU time")
	}
}
