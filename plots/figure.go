package plots

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"stormsim/internal/atomicfile"
)

// Options sets the size and formats of written charts. The zero value
// gives the defaults.
type Options struct {
	Width, Height vg.Length // figure size; default 8 x 5 in
	DPI           int       // PNG resolution in dots per inch; default 150
	Formats       []string  // file formats ("png", "svg"); default both
	MaxPoints     int       // points per line before LTTB downsampling; default 2000
	// Focus, when set, names the runs (by label) the titles compare: a
	// calibration draws the real runs, the model it checks and other
	// models beside them, and its titles speak of the first two only.
	Focus []string
}

func (o Options) withDefaults() Options {
	if o.Width <= 0 {
		o.Width = 8 * vg.Inch
	}
	if o.Height <= 0 {
		o.Height = 5 * vg.Inch
	}
	if o.DPI <= 0 {
		o.DPI = 150
	}
	if len(o.Formats) == 0 {
		o.Formats = []string{"png", "svg"}
	}
	if o.MaxPoints <= 0 {
		o.MaxPoints = 2000
	}
	return o
}

// figure is one chart's page: the takeaway title on top, a legend row
// under it (outside the data area, so it never hides data), the body
// (one or more plots) and a caption at the bottom.
type figure struct {
	title   string
	legend  []legendItem
	caption string
	body    func(c draw.Canvas)
}

type legendItem struct {
	label string
	thumb plot.Thumbnailer
}

const figurePad = 10 // points around the page

func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, vg.Points(figurePad), -vg.Points(figurePad), vg.Points(figurePad*0.6), -vg.Points(figurePad))
	width := c.Max.X - c.Min.X
	top := c.Max.Y

	titleSty := textStyle(titleSize, xfont.WeightBold, inkColor)
	titleSty.YAlign = draw.YTop
	for _, line := range wrap(titleSty, f.title, width) {
		c.FillText(titleSty, vg.Point{X: c.Min.X, Y: top}, line)
		top -= titleSty.Height(line) * 1.15
	}
	if len(f.legend) > 0 {
		top -= vg.Points(3)
		top = drawLegendRows(c, f.legend, top)
	}
	top -= vg.Points(6)

	bottom := c.Min.Y
	if f.caption != "" {
		capSty := textStyle(captionSize, xfont.WeightNormal, mutedColor)
		lines := wrap(capSty, f.caption, width)
		for i := len(lines) - 1; i >= 0; i-- {
			c.FillText(capSty, vg.Point{X: c.Min.X, Y: bottom}, lines[i])
			bottom += capSty.Height(lines[i]) * 1.15
		}
		bottom += vg.Points(6)
	}
	body := c
	body.Min.Y, body.Max.Y = bottom, top
	if f.body != nil && body.Max.Y > body.Min.Y {
		f.body(body)
	}
}

// drawLegendRows lays legend entries left to right from the top edge top,
// wrapping to new rows, and returns the y below the last row.
func drawLegendRows(c draw.Canvas, items []legendItem, top vg.Length) vg.Length {
	sty := textStyle(legendSize, xfont.WeightNormal, inkColor)
	sty.YAlign = draw.YCenter
	rowH := sty.Height("Mg") * 1.35
	thumbW := vg.Points(22)
	gap, after := vg.Points(5), vg.Points(16)
	x, y := c.Min.X, top-rowH/2
	for _, it := range items {
		w := thumbW + gap + sty.Width(it.label)
		if x > c.Min.X && x+w > c.Max.X {
			x, y = c.Min.X, y-rowH
		}
		thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y - rowH*0.3},
			Max: vg.Point{X: x + thumbW, Y: y + rowH*0.3},
		}}
		it.thumb.Thumbnail(&thumb)
		c.FillText(sty, vg.Point{X: x + thumbW + gap, Y: y}, it.label)
		x += w + after
	}
	return y - rowH/2
}

// wrap breaks s into lines no wider than width at spaces.
func wrap(sty text.Style, s string, width vg.Length) []string {
	words := strings.Fields(s)
	var lines []string
	line := ""
	for _, w := range words {
		try := w
		if line != "" {
			try = line + " " + w
		}
		if line != "" && sty.Width(try) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Chart is one drawn chart: its base name and takeaway title, ready to
// be encoded as PNG or SVG, into files (Save) or in memory (Encode).
type Chart struct {
	Name  string // base name: the files are Name.png and Name.svg
	Title string // the takeaway, as drawn on top
	fig   *figure
}

func newChart(name string, f *figure) *Chart { return &Chart{Name: name, Title: f.title, fig: f} }

// Encode writes the chart to w in format, "png" or "svg", at opt's size
// (and, for PNG, resolution).
func (c *Chart) Encode(w io.Writer, format string, opt Options) error {
	opt = opt.withDefaults()
	var canvas interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(opt.Width, opt.Height), vgimg.UseDPI(opt.DPI))
		canvas = vgimg.PngCanvas{Canvas: img}
	case "svg":
		canvas = vgsvg.New(opt.Width, opt.Height)
	default:
		return fmt.Errorf("chart %s: unsupported format %q (want png or svg)", c.Name, format)
	}
	c.fig.draw(draw.New(canvas))
	_, err := canvas.WriteTo(w)
	return err
}

// Save writes the chart as dir/Name.FORMAT for each of opt's formats and
// returns the paths written. Each file appears whole or not at all.
func (c *Chart) Save(dir string, opt Options) ([]string, error) {
	opt = opt.withDefaults()
	for _, format := range opt.Formats {
		if format != "png" && format != "svg" {
			return nil, fmt.Errorf("chart %s: unsupported format %q (want png or svg)", c.Name, format)
		}
	}
	var paths []string
	for _, format := range opt.Formats {
		path := filepath.Join(dir, c.Name+"."+format)
		err := atomicfile.WriteFrom(path, atomicfile.Func(func(w io.Writer) error { return c.Encode(w, format, opt) }))
		if err != nil {
			return paths, fmt.Errorf("write %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
