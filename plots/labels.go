package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pointLabels draws one label beside each point of a scatter, placed when
// the chart is drawn (in canvas units, where sizes are known) so that no
// label covers another label or any point: overlaid runs often put two
// policies' points close together, and fixed offsets would stack their
// names.
type pointLabels struct {
	xys    plotter.XYs
	labels []string
	styles []text.Style
	radius vg.Length // the points' glyph radius
}

var _ plot.Plotter = (*pointLabels)(nil)

// Plot implements plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	points := make([]vg.Point, len(l.xys))
	sizes := make([]vg.Point, len(l.xys))
	for i, xy := range l.xys {
		points[i] = vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
		sizes[i] = vg.Point{X: l.styles[i].Width(l.labels[i]), Y: l.styles[i].Height(l.labels[i])}
	}
	for i, r := range placeLabels(points, sizes, l.radius, c.Rectangle) {
		sty := l.styles[i]
		sty.XAlign, sty.YAlign = text.XLeft, text.YBottom
		c.FillText(sty, r.Min, l.labels[i])
	}
}

// placeLabels chooses a box of size sizes[i] for each label beside
// points[i]: the first, in a fixed order of eight spots around the point
// (right and above first), that overlaps no box already placed and no
// point (a disc of the given radius) and stays inside bounds; when none
// is free, the same spots one label height further out, and so on. A
// label with no free spot within a few rings takes its first spot.
func placeLabels(points, sizes []vg.Point, radius vg.Length, bounds vg.Rectangle) []vg.Rectangle {
	gap := radius + vg.Points(2)
	placed := make([]vg.Rectangle, 0, len(points))
	for i, p := range points {
		w, h := sizes[i].X, sizes[i].Y
		var first vg.Rectangle
		chosen := false
		for ring := 0; ring < 6 && !chosen; ring++ {
			d := gap + vg.Length(ring)*h
			for k, spot := range []vg.Point{
				{X: p.X + d, Y: p.Y + d/2},         // right, above
				{X: p.X + d, Y: p.Y - d/2 - h},     // right, below
				{X: p.X - d - w, Y: p.Y + d/2},     // left, above
				{X: p.X - d - w, Y: p.Y - d/2 - h}, // left, below
				{X: p.X - w/2, Y: p.Y + d},         // above
				{X: p.X - w/2, Y: p.Y - d - h},     // below
				{X: p.X + d, Y: p.Y - h/2},         // right
				{X: p.X - d - w, Y: p.Y - h/2},     // left
			} {
				r := vg.Rectangle{Min: spot, Max: vg.Point{X: spot.X + w, Y: spot.Y + h}}
				if ring == 0 && k == 0 {
					first = r
				}
				if inside(r, bounds) && free(r, placed, points, radius) {
					placed = append(placed, r)
					chosen = true
					break
				}
			}
		}
		if !chosen {
			placed = append(placed, first)
		}
	}
	return placed
}

func inside(r, bounds vg.Rectangle) bool {
	return r.Min.X >= bounds.Min.X && r.Min.Y >= bounds.Min.Y && r.Max.X <= bounds.Max.X && r.Max.Y <= bounds.Max.Y
}

// free reports whether r overlaps no placed box and no point's disc.
func free(r vg.Rectangle, placed []vg.Rectangle, points []vg.Point, radius vg.Length) bool {
	for _, q := range placed {
		if r.Min.X < q.Max.X && q.Min.X < r.Max.X && r.Min.Y < q.Max.Y && q.Min.Y < r.Max.Y {
			return false
		}
	}
	for _, p := range points {
		// The nearest point of the box to the disc's centre.
		x, y := max(r.Min.X, min(p.X, r.Max.X)), max(r.Min.Y, min(p.Y, r.Max.Y))
		if (x-p.X)*(x-p.X)+(y-p.Y)*(y-p.Y) < radius*radius {
			return false
		}
	}
	return true
}
