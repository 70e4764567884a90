package ocr

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // screenshots arrive as PNG or JPEG
	_ "image/png"
	"slices"
)

// Image limits: what a screenshot question may carry (docs/protocol.md).
const (
	MaxBytes  = 320 << 10 // encoded bytes
	MaxPixels = 4 << 20   // width × height: a 2560×1600 screen
	MaxSide   = 4096      // pixels, either side
)

// Errors of Check; both mean the client sent something unusable.
var (
	ErrNotImage = errors.New("ocr: not a PNG or JPEG image")
	ErrTooLarge = errors.New("ocr: image over its limits")
)

// Check reports what data is: its format ("png" or "jpeg") and size,
// from the header alone (no pixels are decoded). An empty, zero-sized or
// undecodable image is ErrNotImage; one over MaxBytes, MaxPixels or
// MaxSide is ErrTooLarge. The error's text says which limit.
func Check(data []byte) (format string, width, height int, err error) {
	if len(data) == 0 {
		return "", 0, 0, fmt.Errorf("%w: no data", ErrNotImage)
	}
	if len(data) > MaxBytes {
		return "", 0, 0, fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, len(data), MaxBytes)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "png" && format != "jpeg") {
		return "", 0, 0, fmt.Errorf("%w", ErrNotImage)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return "", 0, 0, fmt.Errorf("%w: zero size", ErrNotImage)
	}
	if cfg.Width > MaxSide || cfg.Height > MaxSide || cfg.Width*cfg.Height > MaxPixels {
		return "", 0, 0, fmt.Errorf("%w: %d×%d pixels, over %d (and %d a side)", ErrTooLarge, cfg.Width, cfg.Height, MaxPixels, MaxSide)
	}
	return format, cfg.Width, cfg.Height, nil
}

// Tesseract reads text best dark on light, with letters at least about
// 20 pixels high: screenshots at scale 1 are upscaled.
const (
	minTextHeight = 20 // pixels: the median height of the lines of text
	upscale       = 2
)

// prepare decodes data (checked by Check) to the grayscale picture that
// tesseract reads best, as a binary PGM: dark themes are inverted, small
// screenshots doubled.
func prepare(data []byte) ([]byte, error) {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	gray := make([]byte, w*h)
	var sum int
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			v := byte((299*r + 587*g + 114*bl) / 1000 >> 8)
			gray[y*w+x] = v
			sum += int(v)
		}
	}
	if sum/(w*h) < 128 { // a dark theme
		for i := range gray {
			gray[i] = 255 - gray[i]
		}
	}
	k := 1
	if textHeight(gray, w, h) < minTextHeight {
		k = upscale
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "P5\n%d %d\n255\n", w*k, h*k)
	row := make([]byte, w*k)
	for y := 0; y < h; y++ {
		src := gray[y*w : (y+1)*w]
		for x, v := range src {
			for i := 0; i < k; i++ {
				row[x*k+i] = v
			}
		}
		for i := 0; i < k; i++ {
			out.Write(row)
		}
	}
	return out.Bytes(), nil
}

// textHeight estimates the height of the image's lines of text: the
// median run of consecutive rows with ink (a pixel darker than mid-grey
// on the light background). 0 when there is no ink.
func textHeight(gray []byte, w, h int) int {
	var runs []int
	run := 0
	for y := 0; y <= h; y++ {
		ink := false
		if y < h {
			for _, v := range gray[y*w : (y+1)*w] {
				if v < 128 {
					ink = true
					break
				}
			}
		}
		if ink {
			run++
		} else if run > 0 {
			runs = append(runs, run)
			run = 0
		}
	}
	if len(runs) == 0 {
		return 0
	}
	slices.Sort(runs)
	return runs[len(runs)/2]
}
