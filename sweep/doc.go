// Package sweep runs a scenario over a grid of config values and writes
// one summary line per grid point, a CSV and charts.
//
// A sweep file (parsed by config.ParseSweep) names a base scenario, axes
// and metrics:
//
//	base: seed-token-bucket.yaml        # relative to the sweep file; or scenario: {...}
//	replications: 10                    # optional: runs per policy per point
//	axes:                               # crossed into a grid, first axis slowest
//	  admission.rate: {from: 10, to: 200, steps: 8, scale: log}
//	  admission.burst: [5, 10, 20, 40]
//	metrics: [convergence_ms, p95(database.peak_rows_per_s)]
//
// An axis is a config key path (as for --set) with a list of YAML values or
// a range {from, to, steps, scale: linear|log} of numbers or durations. A
// range's ends are exact; durations in between are rounded to the
// microsecond; integer ends give integers; other numbers keep 6
// significant digits. Each point is the base with every axis value set
// (config.Document.Clone and SetValue), resolved and validated before
// anything runs, one at a time (Plan.Check): no point is kept, and
// Plan.Point builds any of them again, so a grid of a million points
// plans in constant memory. A point's id lists its values
// ("admission.rate=10 admission.burst=5") and its index is its place in
// the grid, so both are stable.
//
// Metrics name a result field (results.MetricRef) of every policy, or of
// one with results[LABEL].FIELD, optionally with a statistic over
// replications, mean by default: p95(connect_ms.p99).
//
// Output in the directory: sweep.json (the manifest: axes, metrics, the
// sweep's hash), sweep.ndjson (one Record per point in grid order,
// streamed as points finish: each metric named once, then every run's
// value), sweep.csv (one row per point and policy, with the statistics
// over replications) and charts (a line chart for one axis, a heat map for
// two, small multiples for three). Points run on a pool of workers, at
// most budget.SweepWindow of them in flight; a cancelled run stops after
// the points already finished, each line whole, and --resume goes on.
// Shards (--shard I/N, or --shard auto in a Kubernetes Indexed Job or a
// Slurm array) write sweep.json and their points only; Merge joins them
// into what an unsharded run writes, byte for byte, reading the shards as
// streams.
package sweep
