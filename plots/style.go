package plots

import (
	"image/color"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// seriesColors are the data's colours: the Okabe-Ito palette (Okabe &
// Ito 2008, "Color Universal Design"), which stays distinct under the
// common colour-vision deficiencies, without its black, which is the
// reference lines' (capacity, budget, bound) family; wine and olive from
// Paul Tol's muted scheme make nine, one for each policy kind. Every one
// is a hue, none a grey (TestPaletteHasNoReferenceColour). Yellow comes
// last: it is hard to see on white.
var seriesColors = []color.Color{
	rgb(0x00, 0x72, 0xB2), // blue
	rgb(0xD5, 0x5E, 0x00), // vermillion
	rgb(0x00, 0x9E, 0x73), // bluish green
	rgb(0xCC, 0x79, 0xA7), // reddish purple
	rgb(0xE6, 0x9F, 0x00), // orange
	rgb(0x56, 0xB4, 0xE9), // sky blue
	rgb(0x88, 0x22, 0x55), // wine
	rgb(0x99, 0x99, 0x33), // olive
	rgb(0xF0, 0xE4, 0x42), // yellow
}

// runDashes tell overlaid runs apart when their policies share a colour.
var runDashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(1.5), vg.Points(3)},
}

// referenceDashes style reference levels (capacity, budget), one pattern
// per level, never solid so that they read apart from data. With
// referenceColor, a grey no data line takes, and drawn wider and beneath
// the data, a reference stays visible where a line runs along it.
var referenceDashes = [][]vg.Length{
	{vg.Points(5), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2.5)},
	{vg.Points(9), vg.Points(3), vg.Points(1.5), vg.Points(3)},
	{vg.Points(12), vg.Points(4)},
}

var (
	inkColor       = rgb(0x22, 0x22, 0x22) // text and axes
	mutedColor     = rgb(0x66, 0x66, 0x66) // captions, reference lines
	gridColor      = rgb(0xE4, 0xE4, 0xE4)
	shadeColor     = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 0x38}
	referenceColor = rgb(0x80, 0x80, 0x80) // capacity, budget and bound lines, beneath the data
	missingCellRGB = rgb(0xD9, 0xD9, 0xD9)
	notedCellRGB   = rgb(0xB2, 0x18, 0x2B) // a heat-map cell marked by a note (a storm that never ended)
)

// Font sizes in points.
const (
	titleSize   = 13
	labelSize   = 10.5
	tickSize    = 9
	legendSize  = 9.5
	captionSize = 8
	cellSize    = 8
)

func rgb(r, g, b uint8) color.Color { return color.NRGBA{R: r, G: g, B: b, A: 0xFF} }

func seriesColor(i int) color.Color { return seriesColors[i%len(seriesColors)] }

func runDash(i int) []vg.Length { return runDashes[i%len(runDashes)] }

func referenceDash(i int) []vg.Length { return referenceDashes[i%len(referenceDashes)] }

// referenceStyle is the i-th reference level's line: grey, dashed and
// wider than the data drawn over it.
func referenceStyle(i int) draw.LineStyle {
	return lineStyle(referenceColor, vg.Points(2.4), referenceDash(i))
}

// sans returns Liberation Sans (embedded in gonum/plot, so PNGs render the
// same on every machine) at size points.
func sans(size vg.Length, weight xfont.Weight) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Weight: weight, Size: size}
}

func textStyle(size vg.Length, weight xfont.Weight, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    sans(size, weight),
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: plot.DefaultTextHandler,
	}
}

// newPlot returns a plot without title (the figure draws it) in the house
// style: sans-serif text, light axes, light grid drawn by addGrid.
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(labelSize, xfont.WeightNormal)
		a.Label.TextStyle.Color = inkColor
		a.Tick.Label.Font = sans(tickSize, xfont.WeightNormal)
		a.Tick.Label.Color = inkColor
		a.LineStyle.Color = mutedColor
		a.Tick.LineStyle.Color = mutedColor
		a.Tick.Length = vg.Points(4)
		a.Padding = vg.Points(2)
		a.Tick.Marker = linearTicks{}
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Label.Padding = vg.Points(3)
	p.Y.Label.Padding = vg.Points(4)
	return p
}

// addGrid draws light grid lines at the labelled ticks, behind the data
// (call it before adding data plotters).
func addGrid(p *plot.Plot) {
	g := plotter.NewGrid()
	g.Vertical = draw.LineStyle{Color: gridColor, Width: vg.Points(0.6)}
	g.Horizontal = g.Vertical
	p.Add(g)
}

func lineStyle(c color.Color, width vg.Length, dashes []vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: width, Dashes: dashes}
}

// pointLabelStyle is the text beside a labelled point, in its colour.
func pointLabelStyle(c color.Color) text.Style {
	return textStyle(legendSize, xfont.WeightBold, c)
}

// withAlpha returns c with opacity a (0 transparent, 255 opaque).
func withAlpha(c color.Color, a uint8) color.NRGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}
