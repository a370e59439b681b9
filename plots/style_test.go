package plots

import (
	"image/color"
	"slices"
	"testing"
)

// chroma is the spread of a colour's channels (0..255): 0 for a grey.
func chroma(c color.Color) int {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	hi := max(n.R, n.G, n.B)
	lo := min(n.R, n.G, n.B)
	return int(hi) - int(lo)
}

// TestPaletteHasNoReferenceColour: data lines take hues and reference
// lines (capacity, budget, bound) greys, so a policy can never be drawn
// in the reference lines' colour; the 7th policy was once black, the
// capacity line's colour. Nine policies get nine colours.
func TestPaletteHasNoReferenceColour(t *testing.T) {
	for i, c := range seriesColors {
		if chroma(c) < 0x40 {
			t.Errorf("series colour %d %v is nearly a grey (chroma %d): it reads as a reference line", i, c, chroma(c))
		}
		for j := range i {
			if c == seriesColors[j] {
				t.Errorf("series colours %d and %d are the same", j, i)
			}
		}
	}
	for name, c := range map[string]color.Color{"reference": referenceColor, "ink": inkColor, "muted": mutedColor} {
		if chroma(c) != 0 {
			t.Errorf("%s colour %v is not a grey", name, c)
		}
	}
	if len(seriesColors) < 9 {
		t.Errorf("%d series colours for nine policy kinds", len(seriesColors))
	}
	if !slices.Equal(referenceStyle(0).Dashes, referenceDashes[0]) || referenceStyle(0).Color != referenceColor {
		t.Errorf("reference style %+v", referenceStyle(0))
	}
}
