// Package plots draws stormsim's charts (PNG and SVG) with gonum/plot.
//
// Its input is plain data (Run, PolicySeries, SweepAxis, ...) so that it
// depends neither on YAML nor on the command line; FromResults converts the
// simulator's results. Every chart is written twice, NAME.png and NAME.svg,
// each atomically (a temporary file renamed into place), and carries a title
// computed from the data (the takeaway), units on its axes and a caption with
// the config name and seed.
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
