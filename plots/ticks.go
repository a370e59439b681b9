package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// linearTicks labels about six "nice" values (steps of 1, 2, 2.5 or 5
// times a power of ten); gonum's DefaultTicks aims for three, which is
// sparse on a wide chart. With whole set, steps are whole numbers (for
// counts).
type linearTicks struct {
	whole bool
}

var _ plot.Ticker = linearTicks{}

func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	step := niceStep((hi - lo) / 6)
	if t.whole {
		step = math.Max(1, math.Round(step))
	}
	biggest := math.Max(math.Abs(lo), math.Abs(hi))
	var ticks []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: formatTick(v, step, biggest)})
	}
	return ticks
}

// niceStep rounds raw up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// formatTick writes v with as many decimals as step needs. On an axis
// reaching 10,000 (biggest is its largest magnitude) every label takes a k
// or M suffix, so that wide labels do not crowd it and all read alike.
func formatTick(v, step, biggest float64) string {
	switch {
	case v == 0:
		return "0"
	case biggest >= 1e7:
		return trimFloat(v/1e6, decimalsFor(step/1e6)) + "M"
	case biggest >= 1e4:
		return trimFloat(v/1e3, decimalsFor(step/1e3)) + "k"
	}
	return trimFloat(v, decimalsFor(step))
}

// decimalsFor is the number of decimals that shows every multiple of step.
func decimalsFor(step float64) int {
	d := 0
	for s := step; d < 6 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, s); s *= 10 {
		d++
	}
	return d
}

func trimFloat(v float64, decimals int) string {
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// logTicks marks an axis whose coordinates are log10 of the data (see
// scale). It labels powers of ten, adding 2 and 5 (or every digit) when the
// axis spans too few decades to show two labels otherwise; gonum's LogTicks
// can leave an axis without any label in that case. Digits 2..9 of each
// decade get unlabelled minor ticks. With zero set, the floor gets a tick
// labelled 0.
type logTicks struct {
	floor float64
	zero  bool
}

var _ plot.Ticker = logTicks{}

func (t logTicks) Ticks(logLo, logHi float64) []plot.Tick {
	if !(logHi > logLo) || math.IsInf(logLo, 0) || math.IsInf(logHi, 0) {
		return nil
	}
	lo, hi := math.Pow(10, logLo), math.Pow(10, logHi)
	decades := math.Log10(hi / lo)
	labelled := map[int]bool{1: true}
	switch {
	case decades < 0.8:
		labelled = map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true}
	case decades < 3.2:
		labelled = map[int]bool{1: true, 2: true, 5: true}
	}
	// Too many decades crowd the labels: label every other one.
	every := 1
	if decades > 7 {
		every = 2
	}
	var ticks []plot.Tick
	if t.zero && t.floor >= lo*(1-1e-9) && t.floor <= hi {
		ticks = append(ticks, plot.Tick{Value: math.Log10(t.floor), Label: "0"})
	}
	minLabelled := lo * (1 - 1e-9)
	if t.zero {
		// Keep the "0" label from colliding with the next label.
		minLabelled = t.floor * 1.9
	}
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		base := math.Pow(10, float64(e))
		for d := 1; d <= 9; d++ {
			v := float64(d) * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			tk := plot.Tick{Value: math.Log10(v)}
			if labelled[d] && (d != 1 || e%every == 0) && v >= minLabelled {
				tk.Label = formatLogTick(v)
			}
			ticks = append(ticks, tk)
		}
	}
	return ticks
}

func formatLogTick(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// percentTicks labels a 0..1 axis in per cent.
type percentTicks struct{}

func (percentTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for v := 0.0; v <= 1.0001; v += 0.25 {
		if v >= lo-1e-9 && v <= hi+1e-9 {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.Itoa(int(math.Round(v*100))) + "%"})
		}
	}
	return ticks
}

// indexTicks labels the integer positions 0..len(labels)-1 of a grid axis,
// thinning the labels when there are too many to read.
func indexTicks(labels []string, maxLabels int) plot.ConstantTicks {
	every := 1
	for len(labels)/every > maxLabels {
		every++
	}
	ticks := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		ticks[i] = plot.Tick{Value: float64(i)}
		if i%every == 0 {
			ticks[i].Label = l
		}
	}
	return ticks
}
