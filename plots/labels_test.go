package plots

import (
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestPlaceLabelsNeverOverlap places labels for points that coincide or
// nearly do, as overlaid runs of one policy give, and checks that no two
// labels overlap, none covers a point and all stay inside the frame.
func TestPlaceLabelsNeverOverlap(t *testing.T) {
	bounds := vg.Rectangle{Max: vg.Point{X: 400, Y: 300}}
	radius := vg.Length(4.5)
	tests := []struct {
		name   string
		points []vg.Point
	}{
		{"five on one spot", []vg.Point{{X: 200, Y: 150}, {X: 200, Y: 150}, {X: 200, Y: 150}, {X: 200, Y: 150}, {X: 200, Y: 150}}},
		{"a tight row", []vg.Point{{X: 100, Y: 100}, {X: 104, Y: 101}, {X: 108, Y: 102}, {X: 112, Y: 103}}},
		{"in a corner", []vg.Point{{X: 395, Y: 295}, {X: 390, Y: 292}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sizes := make([]vg.Point, len(tt.points))
			for i := range sizes {
				sizes[i] = vg.Point{X: 60, Y: 12}
			}
			rs := placeLabels(tt.points, sizes, radius, bounds)
			for i, r := range rs {
				if !inside(r, bounds) {
					t.Errorf("label %d at %v leaves the frame", i, r)
				}
				if !free(r, rs[:i], tt.points, radius) {
					t.Errorf("label %d at %v overlaps a label before it or a point", i, r)
				}
				if r.Max.X-r.Min.X != 60 || r.Max.Y-r.Min.Y != 12 {
					t.Errorf("label %d has size %v", i, r.Size())
				}
			}
		})
	}
}

// TestFreeDetectsOverlaps is the negative control: the overlap test that
// the placement relies on sees overlapping boxes and covered points.
func TestFreeDetectsOverlaps(t *testing.T) {
	box := vg.Rectangle{Min: vg.Point{X: 10, Y: 10}, Max: vg.Point{X: 20, Y: 20}}
	if free(box, []vg.Rectangle{{Min: vg.Point{X: 15, Y: 15}, Max: vg.Point{X: 30, Y: 30}}}, nil, 1) {
		t.Error("overlapping boxes reported free")
	}
	if free(box, nil, []vg.Point{{X: 22, Y: 15}}, 3) {
		t.Error("a box within a point's radius reported free")
	}
	if !free(box, []vg.Rectangle{{Min: vg.Point{X: 20, Y: 0}, Max: vg.Point{X: 30, Y: 10}}}, []vg.Point{{X: 30, Y: 30}}, 3) {
		t.Error("a box touching another at a corner, far from any point, reported taken")
	}
}
