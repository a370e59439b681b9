// Package plots draws stormsim's charts (PNG and SVG) with gonum/plot.
//
// Its input is plain data (Run, PolicySeries, SweepAxis, ...) so that it
// depends neither on YAML nor on the command line; FromResults converts the
// simulator's results. Every chart is a Chart, drawn in memory: written
// twice, NAME.png and NAME.svg, each atomically (a temporary file renamed
// into place), or encoded for a page (Chart.Encode). Each carries a title
// computed from the data that states the finding (how far apart the
// policies are, how many sweep points meet a limit, where storms stop
// ending), not the range; units on its axes, in the unit the ticks use;
// and a caption with the config name and seed, said once for runs that
// share them.
//
// Colours: data (policies, runs, models) take hues (seriesColors);
// reference levels (admission and claim capacity, read budget, analytic
// bound, a sweep's limit) are grey, dashed, wider and drawn beneath the
// data, one line for a level the runs share, and the legend names each.
// No data line is ever drawn in a reference's colour.
//
// Heat maps: cell labels keep three significant digits, or more when a
// value lies so close to a limit's bound that fewer would round it onto
// or across it; cells where a limit fails are hatched; a storm that never
// ended is a red cell when it has no value to show and a red outline
// around its value when it has one.
//
// Conventions shared by the time charts:
//   - time is in seconds since the failure; when the runs shown differ in
//     length by more than LogTimeRatio, the time axis is logarithmic and the
//     first window [0, w) is drawn from w/2, since a log axis cannot reach 0;
//   - a count axis is logarithmic when its largest value exceeds
//     LogCountRatio times its smallest non-zero one; empty windows are then
//     drawn at ZeroFloor (labelled 0), since a log axis cannot show 0;
//   - series longer than Options.MaxPoints are downsampled with LTTB.
package plots
