package plots

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"stormsim/internal/quantile"
)

// reclaimChart: histogram of lease reclaim times over replications with
// the analytic bound [duration - renew_every, duration + sweep_every]
// marked. One histogram per run that has reclaim data.
func reclaimChart(runs []Run) *figure {
	withData := withReclaims(runs)
	bn := binReclaims(withData)
	p := newPlot("reclaim time: failure to routes deleted (s)", "replications")
	p.Y.Tick.Marker = linearTicks{whole: true}
	addGrid(p)
	f := &figure{title: reclaimTitle(withData)}
	maxCount := 0.0
	for i, r := range withData {
		bins := bn.bins(r.Reclaim.TimesMs)
		for _, b := range bins {
			maxCount = math.Max(maxCount, b.Weight)
		}
		c := seriesColor(i)
		h := &plotter.Histogram{Bins: bins, Width: bn.width / 1000, FillColor: withAlpha(c, 0x99), LineStyle: lineStyle(c, vg.Points(0.8), nil)}
		p.Add(h)
		label := "reclaim time (1 run)"
		if n := len(r.Reclaim.TimesMs); n > 1 {
			label = fmt.Sprintf("reclaim times (%s runs)", fmtCount(float64(n)))
		}
		if len(withData) > 1 {
			label = r.label() + " " + label
		}
		f.legend = append(f.legend, legendItem{label, h})
	}
	// A bound the runs share is drawn once; bounds that differ name their runs.
	var bounds [][2]float64
	owners := map[[2]float64][]string{}
	for _, r := range withData {
		b := r.Reclaim.BoundMs
		if _, seen := owners[b]; !seen {
			bounds = append(bounds, b)
		}
		owners[b] = append(owners[b], r.label())
	}
	for i, b := range bounds {
		sty := referenceStyle(i)
		xa, ya := scale{}, scale{}
		lower := vline(xa, ya, b[0]/1000, 0, maxCount*1.12, sty)
		p.Add(lower, vline(xa, ya, b[1]/1000, 0, maxCount*1.12, sty))
		label := fmt.Sprintf("analytic bound [%s, %s]", fmtDuration(b[0]), fmtDuration(b[1]))
		if len(bounds) > 1 {
			label = strings.Join(owners[b], ", ") + " " + label
		}
		f.legend = append(f.legend, legendItem{label, lower})
	}
	pad := (bn.hi - bn.lo) * 0.04
	p.X.Min, p.X.Max = (bn.first-pad)/1000, (bn.first+float64(bn.nbins)*bn.width+pad)/1000
	p.Y.Min, p.Y.Max = 0, math.Max(1, maxCount*1.12)
	f.caption = caption(runs, "Bound: lease duration - renew period to lease duration + sweep period")
	f.body = plotBody(p)
	return f
}

// withReclaims are the runs with reclaim times.
func withReclaims(runs []Run) []*Run {
	var out []*Run
	for i := range runs {
		if runs[i].Reclaim != nil && len(runs[i].Reclaim.TimesMs) > 0 {
			out = append(out, &runs[i])
		}
	}
	return out
}

// reclaimBinning is the reclaim histograms' bins, shared by every run:
// nbins of width ms from first, covering lo to hi (every time and bound).
type reclaimBinning struct {
	lo, hi       float64 // ms
	first, width float64 // ms
	nbins        int
}

// binReclaims bins the runs' reclaim times: bins start at the lower bound
// so that the bound lines fall on bin edges; about sqrt(n) bins across the
// bound, between 8 and 40.
func binReclaims(runs []*Run) reclaimBinning {
	lo, hi := math.Inf(1), math.Inf(-1)
	boundLo, boundHi := math.Inf(1), math.Inf(-1)
	total := 0
	for _, r := range runs {
		rc := r.Reclaim
		boundLo, boundHi = math.Min(boundLo, rc.BoundMs[0]), math.Max(boundHi, rc.BoundMs[1])
		for _, t := range rc.TimesMs {
			lo, hi = math.Min(lo, t), math.Max(hi, t)
		}
		total += len(rc.TimesMs)
	}
	lo, hi = math.Min(lo, boundLo), math.Max(hi, boundHi)
	k := min(40, max(8, int(math.Ceil(math.Sqrt(float64(total))))))
	width := (boundHi - boundLo) / float64(k)
	if !(width > 0) {
		width = math.Max(hi-lo, 1) / float64(k)
	}
	first := boundLo - math.Ceil((boundLo-lo)/width)*width
	return reclaimBinning{lo: lo, hi: hi, first: first, width: width, nbins: max(1, int(math.Ceil((hi-first)/width-1e-9)))}
}

// bins counts times (ms) into the binning's bins, whose edges are in
// seconds.
func (bn reclaimBinning) bins(times []float64) []plotter.HistogramBin {
	bins := make([]plotter.HistogramBin, bn.nbins)
	for b := range bins {
		bins[b].Min = (bn.first + float64(b)*bn.width) / 1000
		bins[b].Max = (bn.first + float64(b+1)*bn.width) / 1000
	}
	for _, t := range times {
		b := min(bn.nbins-1, max(0, int(math.Floor((t-bn.first)/bn.width))))
		bins[b].Weight++
	}
	return bins
}

// reclaimTitle says whether every reclaim time respects the bound.
func reclaimTitle(runs []*Run) string {
	var all []float64
	outside := 0
	for _, r := range runs {
		for _, t := range r.Reclaim.TimesMs {
			all = append(all, t)
			if t < r.Reclaim.BoundMs[0] || t > r.Reclaim.BoundMs[1] {
				outside++
			}
		}
	}
	if len(all) == 0 {
		return "No reclaim times"
	}
	b := runs[0].Reclaim.BoundMs
	bound := fmt.Sprintf("the analytic bound [%s, %s]", fmtDuration(b[0]), fmtDuration(b[1]))
	if len(runs) > 1 {
		bound = "their analytic bounds"
	}
	if len(all) == 1 {
		where := "inside"
		if outside > 0 {
			where = "outside"
		}
		return fmt.Sprintf("Routes reclaimed after %s, %s %s", fmtDuration(all[0]), where, bound)
	}
	slices.Sort(all)
	median := quantile.NearestRank(all, 0.5)
	if outside == 0 {
		return fmt.Sprintf("All %s reclaim times lie inside %s (median %s)", fmtCount(float64(len(all))), bound, fmtDuration(median))
	}
	return fmt.Sprintf("%s of %s reclaim times fall outside %s", fmtCount(float64(outside)), fmtCount(float64(len(all))), bound)
}
