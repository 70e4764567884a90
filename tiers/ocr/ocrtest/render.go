// Package ocrtest renders screenshots of known text for the OCR tests
// and benchmarks, and for the tests of the packages that send screenshot
// questions: code in a monospace font, a problem statement in English or
// Chinese, light or dark, at a screen scale. It reads Debian's font files
// (fonts-dejavu-core, fonts-noto-cjk), which scripts/test installs.
package ocrtest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Font files of Debian's packages.
const (
	MonoFont = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf" // fonts-dejavu-core
	SansFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"     // fonts-dejavu-core
	CJKFont  = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
)

// Theme is a screenshot's colours.
type Theme struct {
	Name   string
	Fg, Bg color.RGBA
}

// The themes of the tests: an editor's light and dark defaults.
var (
	Light = Theme{Name: "light", Fg: color.RGBA{0x1f, 0x23, 0x28, 0xff}, Bg: color.RGBA{0xff, 0xff, 0xff, 0xff}}
	Dark  = Theme{Name: "dark", Fg: color.RGBA{0xd4, 0xd4, 0xd4, 0xff}, Bg: color.RGBA{0x1e, 0x1e, 0x1e, 0xff}}
)

// Shot is one screenshot to render.
type Shot struct {
	Text  string  // lines separated by \n; tabs are not expanded
	Font  string  // a font file: MonoFont, SansFont or CJKFont
	Size  float64 // CSS pixels at scale 1 (a browser's 14 px)
	Scale float64 // the screen's device pixel ratio: 1, 1.25, 1.5, 2
	Theme Theme
	Width int // CSS pixels; 0: as wide as the longest line, plus margins
}

// Render draws s and returns the image.
func Render(s Shot) (*image.RGBA, error) {
	face, err := faceFor(s.Font, s.Size*s.Scale)
	if err != nil {
		return nil, err
	}
	defer face.Close()
	m := face.Metrics()
	lineH := (m.Ascent + m.Descent).Ceil() * 14 / 10 // line-height 1.4
	margin := int(16 * s.Scale)
	lines := strings.Split(s.Text, "\n")
	w := int(float64(s.Width) * s.Scale)
	if w == 0 {
		for _, l := range lines {
			w = max(w, font.MeasureString(face, l).Ceil())
		}
		w += 2 * margin
	}
	h := 2*margin + lineH*len(lines)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(s.Theme.Bg), image.Point{}, draw.Src)
	d := font.Drawer{Dst: img, Src: image.NewUniform(s.Theme.Fg), Face: face}
	for i, l := range lines {
		d.Dot = fixed.P(margin, margin+i*lineH+m.Ascent.Ceil())
		d.DrawString(l)
	}
	return img, nil
}

// PNG renders s as PNG bytes.
func PNG(s Shot) ([]byte, error) {
	img, err := Render(s)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var (
	fontsMu sync.Mutex
	fonts   = map[string]*opentype.Font{} // parsed font files. Guarded by fontsMu.
)

// faceFor opens the font file at the pixel size.
func faceFor(file string, px float64) (font.Face, error) {
	fontsMu.Lock()
	f, ok := fonts[file]
	if !ok {
		raw, err := os.ReadFile(file)
		if err != nil {
			fontsMu.Unlock()
			return nil, fmt.Errorf("ocrtest: font %s (Debian's fonts-dejavu-core, fonts-noto-cjk): %w", file, err)
		}
		if strings.HasSuffix(file, ".ttc") {
			c, cerr := opentype.ParseCollection(raw)
			if cerr == nil {
				f, err = c.Font(0)
			} else {
				err = cerr
			}
		} else {
			f, err = opentype.Parse(raw)
		}
		if err != nil {
			fontsMu.Unlock()
			return nil, fmt.Errorf("ocrtest: font %s: %w", file, err)
		}
		fonts[file] = f
	}
	fontsMu.Unlock()
	return opentype.NewFace(f, &opentype.FaceOptions{Size: px, DPI: 72, Hinting: font.HintingFull})
}
