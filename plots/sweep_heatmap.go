package plots

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteHeatMap draws the heat map HeatMap draws into dir/File.{png,svg}.
func (s Sweep) WriteHeatMap(dir string, x, y SweepAxis, grid [][]float64, opt Options) ([]string, error) {
	c, err := s.HeatMap(x, y, grid, opt)
	return save(dir, c, err, opt)
}

// HeatMap draws the metric over two swept axes as a rasterized heat map
// with a colour bar. grid[yi][xi] is the metric at (x.Values[xi],
// y.Values[yi]); NaN marks a missing point (drawn grey).
func (s Sweep) HeatMap(x, y SweepAxis, grid [][]float64, opt Options) (*Chart, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := checkGrid(x, y, grid); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", s.File, err)
	}
	var factor float64
	s.Metric, factor = s.Metric.readable(grid...)
	grid = scaledGrid(grid, factor)
	hs := newHeatScale(grid)
	if s.Notes != nil && len(s.Notes) != len(grid) {
		return nil, fmt.Errorf("plots: %s: %d rows of notes for %d rows", s.File, len(s.Notes), len(grid))
	}
	f := &figure{caption: heatCaption(s.Caption, unnoted(grid, s.Notes))}
	if note := notedCaption(s.Notes); note != "" {
		f.caption += ". " + note
	}
	var flat []float64
	for _, row := range grid {
		flat = append(flat, row...)
	}
	cols := len(x.Values)
	f.title = s.Metric.bestTitle(flat, func(i int) string { return x.at(i%cols) + ", " + y.at(i/cols) })
	p := heatPanel(x, y, grid, s.Notes, hs, opt.withDefaults(), 1)
	f.body = heatBody([][]*plot.Plot{{p}}, colorBarPlot(hs, s.Metric.label()), x.label(), y.label())
	return newChart(s.File, f), nil
}

func checkGrid(x, y SweepAxis, grid [][]float64) error {
	if err := x.validate("x"); err != nil {
		return err
	}
	if err := y.validate("y"); err != nil {
		return err
	}
	if len(grid) != len(y.Values) {
		return fmt.Errorf("grid has %d rows for %d values of %s", len(grid), len(y.Values), y.Name)
	}
	for i, row := range grid {
		if len(row) != len(x.Values) {
			return fmt.Errorf("grid row %d has %d cells for %d values of %s", i, len(row), len(x.Values), x.Name)
		}
	}
	return nil
}

func scaledGrid(g [][]float64, f float64) [][]float64 {
	out := make([][]float64, len(g))
	for i, row := range g {
		out[i] = scaled(row, f)
	}
	return out
}

func heatCaption(c string, grids ...[][]float64) string {
	for _, g := range grids {
		for _, row := range g {
			for _, v := range row {
				if !finite(v) {
					if c != "" {
						c += ". "
					}
					return c + "Grey cells: no data"
				}
			}
		}
	}
	return c
}

// heatScale is the colour scale shared by every panel of a heat-map page:
// viridis over the metric, or over its log10 when the values span more
// than LogCountRatio.
type heatScale struct {
	log      bool
	min, max float64 // colour coordinates (log10 of the metric when log)
	cmap     palette.ColorMap
	colors   []color.Color
}

// viridisAnchors are nine samples of matplotlib's viridis (van der Walt &
// Smith), perceptually uniform and readable with colour-vision deficiency.
var viridisAnchors = []color.Color{
	rgb(0x44, 0x01, 0x54), rgb(0x47, 0x2c, 0x7a), rgb(0x3b, 0x51, 0x8b),
	rgb(0x2c, 0x71, 0x8e), rgb(0x21, 0x90, 0x8d), rgb(0x27, 0xad, 0x81),
	rgb(0x5c, 0xc8, 0x63), rgb(0xaa, 0xdc, 0x32), rgb(0xfd, 0xe7, 0x25),
}

func newHeatScale(grids ...[][]float64) heatScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range grids {
		for _, row := range g {
			for _, v := range row {
				if finite(v) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	hs := heatScale{min: lo, max: hi}
	switch {
	case math.IsInf(lo, 0):
		hs.min, hs.max = 0, 1
	case lo > 0 && hi > LogCountRatio*lo:
		hs.log = true
		hs.min, hs.max = math.Log10(lo), math.Log10(hi)
	}
	if hs.min == hs.max {
		// A flat grid still needs a range for the colour bar.
		pad := math.Max(math.Abs(hs.min)*0.05, 0.5)
		hs.min, hs.max = hs.min-pad, hs.max+pad
	}
	cmap, err := moreland.NewLuminance(viridisAnchors)
	if err != nil {
		panic(err) // the anchors are constant and rise in luminance
	}
	cmap.SetMin(hs.min)
	cmap.SetMax(hs.max)
	hs.cmap = cmap
	hs.colors = cmap.Palette(256).Colors()
	return hs
}

// to maps a metric value to colour coordinates (NaN stays NaN).
func (hs heatScale) to(v float64) float64 {
	if hs.log {
		if !(v > 0) {
			return math.NaN()
		}
		return math.Log10(v)
	}
	return v
}

// color is the cell colour of metric value v.
func (hs heatScale) color(v float64) color.Color {
	z := hs.to(v)
	if !finite(z) {
		return missingCellRGB
	}
	f := (z - hs.min) / (hs.max - hs.min)
	i := int(math.Round(f * float64(len(hs.colors)-1)))
	return hs.colors[min(max(i, 0), len(hs.colors)-1)]
}

// noteAt is the note of cell (r, c), "" when there is none.
func noteAt(notes [][]string, r, c int) string {
	if r < len(notes) && c < len(notes[r]) {
		return notes[r][c]
	}
	return ""
}

// unnoted is grid with its noted cells set to 0: they are drawn, not missing.
func unnoted(grid [][]float64, notes [][]string) [][]float64 {
	out := scaledGrid(grid, 1)
	for r, row := range out {
		for c := range row {
			if noteAt(notes, r, c) != "" {
				row[c] = 0
			}
		}
	}
	return out
}

// notedCaption says what the noted cells' colour means.
func notedCaption(notes [][]string) string {
	var kinds []string
	for _, row := range notes {
		for _, n := range row {
			if n != "" && !slices.Contains(kinds, n) {
				kinds = append(kinds, n)
			}
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	return "Red cells: " + strings.Join(kinds, ", ")
}

// cellImage rasterizes grid (row 0 at the bottom) with px pixels per cell
// side, so that scaling the image keeps cell edges sharp. A noted cell
// takes the note colour instead of its value's.
func cellImage(grid [][]float64, notes [][]string, hs heatScale, px int) image.Image {
	rows, cols := len(grid), len(grid[0])
	img := image.NewNRGBA(image.Rect(0, 0, cols*px, rows*px))
	for r, row := range grid {
		for c, v := range row {
			col := hs.color(v)
			if noteAt(notes, r, c) != "" {
				col = notedCellRGB
			}
			for dy := range px {
				for dx := range px {
					img.Set(c*px+dx, (rows-1-r)*px+dy, col)
				}
			}
		}
	}
	return img
}

// heatPanel is one heat map: cells at integer positions labelled with
// the swept values, each cell annotated with its value when there is room.
// tileCols is how many panels share the page width.
func heatPanel(x, y SweepAxis, grid [][]float64, notes [][]string, hs heatScale, opt Options, tileCols int) *plot.Plot {
	cols, rows := len(x.Values), len(y.Values)
	p := newPlot("", "")
	p.X.Tick.Marker = indexTicks(x.tickLabels(), 12)
	p.Y.Tick.Marker = indexTicks(y.tickLabels(), 12)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Padding = 0
		a.Tick.Length = vg.Points(2)
		a.Width = 0
	}
	// About one image pixel per output pixel: the scaled image then keeps
	// sharp cell edges (the PNG canvas interpolates when it scales).
	px := max(1, min(400, int(math.Ceil(opt.Width.Dots(float64(opt.DPI))/float64(tileCols*cols)))))
	p.Add(plotter.NewImage(cellImage(grid, notes, hs, px), -0.5, -0.5, float64(cols)-0.5, float64(rows)-0.5))

	// Room per cell, estimated from the page: the axes take about 70 pt.
	cellW := (opt.Width/vg.Length(tileCols) - vg.Points(90)) / vg.Length(cols)
	if cellW >= vg.Points(30) && rows <= 24 {
		lbl := &plotter.Labels{}
		for r, row := range grid {
			for c, v := range row {
				text, bg := fmtCompact(v), hs.color(v)
				if n := noteAt(notes, r, c); n != "" {
					text, bg = n, notedCellRGB
				} else if !finite(v) {
					continue
				}
				lbl.XYs = append(lbl.XYs, plotter.XY{X: float64(c), Y: float64(r)})
				lbl.Labels = append(lbl.Labels, text)
				sty := textStyle(cellSize, xfont.WeightNormal, contrastText(bg))
				sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
				lbl.TextStyle = append(lbl.TextStyle, sty)
			}
		}
		if len(lbl.Labels) > 0 {
			p.Add(lbl)
		}
	}
	p.X.Min, p.X.Max = -0.5, float64(cols)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(rows)-0.5
	return p
}

// contrastText is black on light cells and white on dark ones.
func contrastText(bg color.Color) color.Color {
	r, g, b, _ := bg.RGBA()
	// Rec. 709 luma on the 16-bit channels.
	if 0.2126*float64(r)+0.7152*float64(g)+0.0722*float64(b) > 0.45*0xFFFF {
		return color.Black
	}
	return color.White
}

// colorBarPlot is a horizontal colour bar with the metric on its axis.
func colorBarPlot(hs heatScale, label string) *plot.Plot {
	p := newPlot(label, "")
	p.HideY()
	p.X.Padding = 0
	p.Y.Padding = 0
	p.X.Tick.Length = vg.Points(3)
	p.Add(&plotter.ColorBar{ColorMap: hs.cmap, Colors: 256})
	if hs.log {
		p.X.Tick.Marker = logTicks{}
		p.X.Label.Text += ", log scale"
	}
	return p
}

// heatBody lays out the colour bar across the top of the body and the
// heat-map panels, aligned so that their cells line up, below it. The
// panels carry no axis names: xName and yName are drawn once for all
// (gonum pads a plot oddly when a y-axis name is longer than the axis).
func heatBody(panels [][]*plot.Plot, bar *plot.Plot, xName, yName string) func(draw.Canvas) {
	return func(c draw.Canvas) {
		nameSty := textStyle(labelSize, xfont.WeightNormal, inkColor)
		nameSty.XAlign, nameSty.YAlign = draw.XCenter, draw.YBottom
		nameH := nameSty.Height(xName)
		const barH = 46
		barW := min((c.Max.X-c.Min.X)*0.45, vg.Points(320))
		barC := c
		barC.Min.Y = c.Max.Y - vg.Points(barH)
		barC.Min.X = c.Min.X + vg.Points(8)
		barC.Max.X = barC.Min.X + barW
		bar.Draw(barC)

		rest := c
		rest.Max.Y = barC.Min.Y - vg.Points(10)
		rest.Min.Y += nameH + vg.Points(4)
		rest.Min.X += nameH + vg.Points(8)
		c.FillText(nameSty, vg.Point{X: (rest.Min.X + rest.Max.X) / 2, Y: c.Min.Y}, xName)
		ySty := nameSty
		ySty.Rotation = math.Pi / 2
		ySty.YAlign = draw.YTop
		c.FillText(ySty, vg.Point{X: c.Min.X, Y: (rest.Min.Y + rest.Max.Y) / 2}, yName)
		tiles := draw.Tiles{
			Rows: len(panels), Cols: len(panels[0]),
			PadX: vg.Points(14), PadY: vg.Points(10),
		}
		canvases := plot.Align(panels, tiles, rest)
		for j := range panels {
			for i, p := range panels[j] {
				if p != nil {
					p.Draw(canvases[j][i])
				}
			}
		}
	}
}

// panelTitle styles a small-multiple panel title.
func panelTitle(p *plot.Plot, s string) {
	p.Title.Text = s
	p.Title.TextStyle = text.Style{
		Color: inkColor, Font: sans(labelSize, xfont.WeightBold),
		XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler,
	}
	p.Title.Padding = vg.Points(4)
}
