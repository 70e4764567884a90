package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"

	"github.com/poise-dev/poise/cmd/loadgen/load"
)

// Chart geometry, in pixels.
const (
	chartW, chartH = 960, 540
	marginLeft     = 80
	marginRight    = 170 // the legend
	marginTop      = 60
	marginBottom   = 70
	textScale      = 2
	lineWidth      = 3
)

var (
	white    = color.RGBA{255, 255, 255, 255}
	ink      = color.RGBA{40, 40, 40, 255}
	gridInk  = color.RGBA{225, 225, 225, 255}
	faultInk = color.RGBA{255, 228, 225, 255}
)

// series is one line of a chart.
type series struct {
	name   string
	colour color.RGBA
	xs, ys []float64
}

// levelSeries are the levels' lines, in legend order, with their colours.
var levelSeries = []struct {
	level  string
	colour color.RGBA
}{
	{"L1", color.RGBA{46, 160, 67, 255}},
	{"L2", color.RGBA{31, 111, 235, 255}},
	{"L3", color.RGBA{230, 140, 20, 255}},
	{"L4", color.RGBA{210, 50, 50, 255}},
	{"offline", color.RGBA{140, 140, 140, 255}},
}

// writeChart draws the sessions at each level over the scenario's
// timeline, with the fault window shaded, as a PNG.
func writeChart(path string, sc scenario, res *load.Result, o *outcome) error {
	var lines []series
	for _, ls := range levelSeries {
		s := series{name: ls.level, colour: ls.colour}
		seen := false
		for _, smp := range res.Timeline {
			s.xs = append(s.xs, smp.AtMS/1000)
			s.ys = append(s.ys, float64(smp.Levels[ls.level]))
			seen = seen || smp.Levels[ls.level] > 0
		}
		if seen || ls.level != "offline" {
			lines = append(lines, s)
		}
	}
	band := [2]float64{-1, -1}
	for _, st := range o.Steps {
		if st.Kind == "fault" && band[0] < 0 {
			band[0] = st.AtMS / 1000
		}
		if st.Kind == "clear" {
			band[1] = st.AtMS / 1000
		}
	}
	title := fmt.Sprintf("%s: sessions per level (%d sessions)", sc.name, res.Opened)
	img := plot(title, "seconds since traffic started", lines, band, float64(res.Opened))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// plot draws lines on axes from x=0 and y=0 to the data's end and ymax,
// shading band (start and end x; -1 for none) as the fault window.
func plot(title, xLabel string, lines []series, band [2]float64, ymax float64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, chartW, chartH))
	fillRect(img, 0, 0, chartW, chartH, white)
	x0, x1 := marginLeft, chartW-marginRight
	y0, y1 := chartH-marginBottom, marginTop
	xmax := 1.0
	for _, s := range lines {
		for _, x := range s.xs {
			xmax = math.Max(xmax, x)
		}
	}
	ymax = math.Max(ymax, 1)
	px := func(x float64) int { return x0 + int(math.Round(x/xmax*float64(x1-x0))) }
	py := func(y float64) int { return y0 - int(math.Round(y/ymax*float64(y0-y1))) }

	if band[0] >= 0 {
		end := band[1]
		if end < 0 {
			end = xmax
		}
		fillRect(img, px(band[0]), y1, px(end)-px(band[0]), y0-y1, faultInk)
		drawText(img, px(band[0])+6, (y0+y1)/2, "fault", textScale, color.RGBA{200, 80, 70, 255})
	}
	xStep := niceStep(xmax)
	for x := 0.0; x <= xmax+1e-9; x += xStep {
		fillRect(img, px(x), y1, 1, y0-y1, gridInk)
		label := fmt.Sprintf("%g", x)
		drawText(img, px(x)-textWidth(label, textScale)/2, y0+10, label, textScale, ink)
	}
	yStep := niceStep(ymax)
	for y := 0.0; y <= ymax+1e-9; y += yStep {
		fillRect(img, x0, py(y), x1-x0, 1, gridInk)
		label := fmt.Sprintf("%g", y)
		drawText(img, x0-10-textWidth(label, textScale), py(y)-glyphH*textScale/2, label, textScale, ink)
	}
	fillRect(img, x0, y1, 2, y0-y1, ink)
	fillRect(img, x0, y0, x1-x0, 2, ink)
	drawText(img, (x0+x1-textWidth(xLabel, textScale))/2, y0+40, xLabel, textScale, ink)
	drawText(img, x0, 20, title, textScale, ink)

	for i, s := range lines {
		for j := 1; j < len(s.xs); j++ {
			drawLine(img, px(s.xs[j-1]), py(s.ys[j-1]), px(s.xs[j]), py(s.ys[j]), s.colour)
		}
		ly := y1 + 10 + i*30
		fillRect(img, x1+20, ly+4, 24, lineWidth+1, s.colour)
		drawText(img, x1+52, ly, s.name, textScale, ink)
	}
	return img
}

// niceStep picks a grid step of 1, 2 or 5 × 10^k giving 4 to 10 lines.
func niceStep(span float64) float64 {
	raw := span / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// drawLine draws a lineWidth-thick segment (Bresenham).
func drawLine(img *image.RGBA, xa, ya, xb, yb int, c color.Color) {
	dx, dy := abs(xb-xa), -abs(yb-ya)
	sx, sy := sign(xb-xa), sign(yb-ya)
	e := dx + dy
	for {
		fillRect(img, xa-lineWidth/2, ya-lineWidth/2, lineWidth, lineWidth, c)
		if xa == xb && ya == yb {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			xa += sx
		}
		if e2 <= dx {
			e += dx
			ya += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
