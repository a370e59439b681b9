// Package imagediff measures how far apart two pictures are, for tests
// that hold charts to golden images: rendering is pure Go with embedded
// fonts, so the same module versions draw the same pixels, and a small
// tolerance absorbs a rasterizer's anti-aliasing changes.
package imagediff

import (
	"fmt"
	"image"
	"image/png"
	"os"
)

// Tolerance is the largest mean absolute difference per colour channel
// (0..255) still taken as the same picture. Moving a chart's capacity
// line from 5 to 6 per window costs about 0.7, dropping a policy about 29.
const Tolerance = 0.3

// MeanAbsDiff is the mean absolute difference of a and b per RGB channel
// (0..255), or -1 when their sizes differ.
func MeanAbsDiff(a, b image.Image) float64 {
	if a.Bounds().Size() != b.Bounds().Size() {
		return -1
	}
	var sum float64
	ab, bb := a.Bounds(), b.Bounds()
	for y := 0; y < ab.Dy(); y++ {
		for x := 0; x < ab.Dx(); x++ {
			r1, g1, b1, _ := a.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
			r2, g2, b2, _ := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			sum += absDiff(r1, r2) + absDiff(g1, g2) + absDiff(b1, b2)
		}
	}
	return sum / 257 / float64(3*ab.Dx()*ab.Dy())
}

func absDiff(a, b uint32) float64 {
	if a > b {
		return float64(a - b)
	}
	return float64(b - a)
}

// ReadPNG decodes the PNG at path.
func ReadPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}
