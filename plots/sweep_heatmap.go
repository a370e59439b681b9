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
	if s.Notes != nil && len(s.Notes) != len(grid) {
		return nil, fmt.Errorf("plots: %s: %d rows of notes for %d rows", s.File, len(s.Notes), len(grid))
	}
	if err := validateLimits(s.Limits, len(y.Values), len(x.Values)); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", s.File, err)
	}
	var factor float64
	s.Metric, factor = s.Metric.readable(grid...)
	grid = scaledGrid(grid, factor)
	s.Limits = scaledLimits(s.Limits, factor)
	hs := newHeatScale(grid)
	f := &figure{caption: heatCaption(s.Caption, unnoted(grid, s.Notes))}
	for _, note := range []string{notedCaption(grid, s.Notes), limitCaption(s.Limits)} {
		if note != "" {
			f.caption += ". " + note
		}
	}
	f.title = heatTitle(s, x, y, grid)
	cells := heatCells{grid: grid, notes: s.Notes, failing: failingCells(s.Limits, len(y.Values), len(x.Values)), digits: cellDigits(s.Limits, grid)}
	p := heatPanel(x, y, cells, hs, opt.withDefaults(), 1)
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

// notedCaption says what the noted cells' colour means: red cells have
// no value, red outlines keep theirs.
func notedCaption(grid [][]float64, notes [][]string) string {
	var filled, outlined []string
	for r, row := range notes {
		for c, n := range row {
			switch {
			case n == "":
			case r < len(grid) && c < len(grid[r]) && finite(grid[r][c]):
				if !slices.Contains(outlined, n) {
					outlined = append(outlined, n)
				}
			case !slices.Contains(filled, n):
				filled = append(filled, n)
			}
		}
	}
	var parts []string
	if len(filled) > 0 {
		parts = append(parts, "Red cells: "+strings.Join(filled, ", "))
	}
	if len(outlined) > 0 {
		parts = append(parts, "red outline: "+strings.Join(outlined, ", ")+", its value kept")
	}
	s := strings.Join(parts, "; ")
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// heatCells is what a heat-map panel draws in its cells: the values, the
// notes, which cells fail a limit (row-major) and the significant digits
// of the labels.
type heatCells struct {
	grid    [][]float64
	notes   [][]string
	failing []bool
	digits  int
}

func (h heatCells) fails(r, c int) bool {
	i := r*len(h.grid[0]) + c
	return i < len(h.failing) && h.failing[i]
}

// filled reports whether cell (r, c) takes the note colour: it is noted
// and has no value to show.
func (h heatCells) filled(r, c int) bool {
	return noteAt(h.notes, r, c) != "" && !finite(h.grid[r][c])
}

// hatchPeriod and hatchWidth are the hatching of a failing cell, in
// image pixels per cell of hatchCellPx: a stripe every eighth of a cell.
const (
	hatchCellPx = 120
	hatchPeriod = 15
	hatchWidth  = 3
)

// cellImage rasterizes the cells (row 0 at the bottom) with px pixels per
// cell side, so that scaling the image keeps cell edges sharp. A noted
// cell without a value takes the note colour; a cell that fails a limit
// is hatched with diagonal stripes in its text colour, faint enough to
// read the label through.
func cellImage(h heatCells, hs heatScale, px int) image.Image {
	grid := h.grid
	rows, cols := len(grid), len(grid[0])
	img := image.NewNRGBA(image.Rect(0, 0, cols*px, rows*px))
	period := max(4, px*hatchPeriod/hatchCellPx)
	width := max(1, px*hatchWidth/hatchCellPx)
	for r, row := range grid {
		for c, v := range row {
			col := hs.color(v)
			if h.filled(r, c) {
				col = notedCellRGB
			}
			stripe := blend(col, contrastText(col), 0.4)
			hatched := h.fails(r, c)
			for dy := range px {
				for dx := range px {
					pix := col
					if hatched && (dx+dy)%period < width {
						pix = stripe
					}
					img.Set(c*px+dx, (rows-1-r)*px+dy, pix)
				}
			}
		}
	}
	return img
}

// blend mixes f of colour b into a.
func blend(a, b color.Color, f float64) color.Color {
	x, y := color.NRGBAModel.Convert(a).(color.NRGBA), color.NRGBAModel.Convert(b).(color.NRGBA)
	mix := func(p, q uint8) uint8 { return uint8(math.Round(float64(p)*(1-f) + float64(q)*f)) }
	return color.NRGBA{R: mix(x.R, y.R), G: mix(x.G, y.G), B: mix(x.B, y.B), A: 0xFF}
}

// heatPanel is one heat map: cells at integer positions labelled with
// the swept values, each cell annotated with its value when there is room.
// tileCols is how many panels share the page width.
func heatPanel(x, y SweepAxis, cells heatCells, hs heatScale, opt Options, tileCols int) *plot.Plot {
	grid, notes := cells.grid, cells.notes
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
	p.Add(plotter.NewImage(cellImage(cells, hs, px), -0.5, -0.5, float64(cols)-0.5, float64(rows)-0.5))
	for r := range rows {
		for c := range cols {
			if noteAt(notes, r, c) != "" && !cells.filled(r, c) {
				p.Add(cellOutline(c, r))
			}
		}
	}

	// Room per cell, estimated from the page: the axes take about 70 pt.
	cellW := (opt.Width/vg.Length(tileCols) - vg.Points(90)) / vg.Length(cols)
	if cellW >= vg.Points(30) && rows <= 24 {
		lbl := &plotter.Labels{}
		for r, row := range grid {
			for c, v := range row {
				text, bg := fmtCell(v, cells.digits), hs.color(v)
				switch n := noteAt(notes, r, c); {
				case cells.filled(r, c):
					text, bg = n, notedCellRGB
				case n != "":
					text += "\n" + n
				case !finite(v):
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

// cellOutline is the note colour's frame inside cell (c, r).
func cellOutline(c, r int) *plotter.Line {
	const in = 0.45
	x0, x1, y0, y1 := float64(c)-in, float64(c)+in, float64(r)-in, float64(r)+in
	return &plotter.Line{
		XYs:       plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}},
		LineStyle: lineStyle(notedCellRGB, vg.Points(2.5), nil),
	}
}

// cellDigits is how many significant digits cell labels need so that no
// label rounds a value onto or across a limit's bound: 3, or more when a
// value lies that close to one (25,040 against 25,000 needs 4).
func cellDigits(limits []Limit, grids ...[][]float64) int {
	const most = 7
	for d := 3; d < most; d++ {
		ok := true
		for _, l := range limits {
			if !finite(l.Bound) {
				continue
			}
			for _, g := range grids {
				for _, row := range g {
					for _, v := range row {
						if finite(v) && cmpFloat(roundSig(v, d), l.Bound) != cmpFloat(v, l.Bound) {
							ok = false
						}
					}
				}
			}
		}
		if ok {
			return d
		}
	}
	return most
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

// heatTitle states a heat map's finding: how many points meet the
// limits, else where storms stop ending, else how the metric moves along
// the axes and where it is best.
func heatTitle(s Sweep, x, y SweepAxis, grid [][]float64) string {
	cols := len(x.Values)
	var flat []float64
	for _, row := range grid {
		flat = append(flat, row...)
	}
	where := func(i int) string { return x.at(i%cols) + ", " + y.at(i/cols) }
	if t := s.Metric.limitTitle(s.Limits, flat, failingCells(s.Limits, len(grid), cols), where); t != "" {
		return t
	}
	if t := notesTitle(x, y, s.Notes); t != "" {
		return t
	}
	dx, dy := direction(grid), direction(transpose(grid))
	var moves string
	switch {
	case dx != 0 && dx == dy:
		moves = movesWith(dx, x.Name+" and "+y.Name)
	case dx != 0 && dy != 0:
		moves = movesWith(dx, x.Name) + " and " + movesWith(dy, y.Name)
	case dx != 0:
		moves = movesWith(dx, x.Name)
	case dy != 0:
		moves = movesWith(dy, y.Name)
	default:
		return s.Metric.bestTitle(flat, where)
	}
	lo, hi := SweepMetric{Name: s.Metric.Name, Unit: s.Metric.Unit}.extremes(flat, nil)
	return fmt.Sprintf("%s %s: from %s (%s) to %s (%s)", s.Metric.Name, moves,
		s.Metric.value(flat[lo]), where(lo), s.Metric.value(flat[hi]), where(hi))
}

// notesTitle says where storms did not end, column by column; "" when
// every cell ended.
func notesTitle(x, y SweepAxis, notes [][]string) string {
	noted, total, metastable := 0, len(x.Values)*len(y.Values), true
	var parts []string
	for c := range x.Values {
		var rows []int
		for r := range y.Values {
			if n := noteAt(notes, r, c); n != "" {
				rows = append(rows, r)
				metastable = metastable && n == "metastable"
			}
		}
		if len(rows) > 0 {
			noted += len(rows)
			parts = append(parts, x.at(c)+" "+rowsPhrase(y, rows))
		}
	}
	if noted == 0 {
		return ""
	}
	what := "Storms never end"
	if !metastable {
		what = "Not every storm ends"
	}
	return fmt.Sprintf("%s in %d of %d cells: at %s", what, noted, total, strings.Join(parts, "; at "))
}

// rowsPhrase names the y values of rows (increasing indexes): every one,
// a run from one end, or the list.
func rowsPhrase(y SweepAxis, rows []int) string {
	n := len(y.Values)
	value := y.valueAt
	contiguous := rows[len(rows)-1]-rows[0] == len(rows)-1
	switch {
	case len(rows) == n:
		return "at every " + y.Name
	case contiguous && rows[len(rows)-1] == n-1:
		return "with " + y.Name + " ≥ " + value(rows[0])
	case contiguous && rows[0] == 0:
		return "with " + y.Name + " ≤ " + value(rows[len(rows)-1])
	}
	var vs []string
	for _, r := range rows {
		vs = append(vs, value(r))
	}
	return "with " + y.Name + " = " + strings.Join(vs, ", ")
}

// direction is +1 when every row's finite values never fall from left to
// right and some rise, -1 for the reverse, 0 otherwise.
func direction(rows [][]float64) int {
	up, down := false, false
	for _, row := range rows {
		prev := math.NaN()
		for _, v := range row {
			if !finite(v) {
				continue
			}
			if finite(prev) {
				up = up || v > prev
				down = down || v < prev
			}
			prev = v
		}
	}
	switch {
	case up && !down:
		return 1
	case down && !up:
		return -1
	}
	return 0
}

func movesWith(d int, names string) string {
	switch {
	case d > 0:
		return "rises with " + names
	case strings.Contains(names, " and "):
		return "falls as " + names + " grow"
	}
	return "falls as " + names + " grows"
}

func transpose(g [][]float64) [][]float64 {
	if len(g) == 0 {
		return nil
	}
	out := make([][]float64, len(g[0]))
	for c := range out {
		for r := range g {
			out[c] = append(out[c], g[r][c])
		}
	}
	return out
}
