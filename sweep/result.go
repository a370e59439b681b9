package sweep

import (
	"context"
	"path/filepath"

	"stormsim/plots"
	"stormsim/results"
)

// MaxListedPoints bounds the points a Result lists: a report's table of a
// large sweep shows the first ones and says where the rest are.
const MaxListedPoints = 500

// Result is a finished sweep read back from its directory, for a report:
// its manifest, its charts, and its points with their statistics and the
// checks each fails.
type Result struct {
	Manifest Manifest
	// Points are the first MaxListedPoints points, in grid order.
	Points []PointResult
	// Meeting is how many points hold every check (of Manifest.Checks),
	// for every policy; all of them without checks.
	Meeting int
	cv      *chartValues
}

// PointResult is one point of a finished sweep.
type PointResult struct {
	Index     int
	Values    AxisValues
	Summaries []results.Summary // per policy, every metric's statistics
	Failing   []FailedCheck     // the checks the point fails
}

// Read reads the finished sweep in dir: sweep.json and every point of
// sweep.ndjson, which must be complete.
func Read(dir string) (*Result, error) {
	m, _, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	res := &Result{Manifest: m}
	k := 0
	sc, err := scanPoints(context.Background(), m, filepath.Join(dir, PointsFile), func(r *Record, sums []results.Summary) {
		if k < MaxListedPoints {
			res.Points = append(res.Points, PointResult{Index: r.Index, Values: r.Values, Summaries: sums})
		}
		k++
	})
	if err != nil {
		return nil, err
	}
	res.cv = sc.charts
	for i, meets := range res.cv.limits.meets {
		if meets {
			res.Meeting++
		}
		if i < len(res.Points) {
			res.Points[i].Failing = res.cv.limits.failing(i)
		}
	}
	if len(res.cv.limits.checks) == 0 {
		res.Meeting = m.Points
	}
	return res, nil
}

// Charts draws the sweep's charts in memory: the files sweep -o writes.
func (r *Result) Charts(opt plots.Options) ([]*plots.Chart, error) {
	return r.cv.charts(r.Manifest, opt)
}
