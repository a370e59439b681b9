package budget

import (
	"fmt"

	"stormsim/internal/human"
)

// ChartFileBytes bounds one chart file (a PNG or SVG of a sweep).
const ChartFileBytes = 512 << 10

// SweepWindow is how many points a sweep keeps in flight on workers
// goroutines: enough to keep every worker busy while the earliest
// unfinished point holds the others back, few enough to bound memory.
func SweepWindow(workers int) int { return max(4, 2*workers) }

// SweepShape is what a sweep's points ask for, gathered while the plan
// checks every point.
type SweepShape struct {
	Points        int     // points to run
	Storms        int64   // storms over those points
	ClientStorms  float64 // the sum of every storm's clients
	Work          Work    // the least computing of every storm (StormWork)
	MaxClients    int     // the largest storm's clients
	MaxStormBytes int64   // the largest storm's memory
	PointValues   int64   // the most metric values one point keeps
	ChartValues   int64   // values kept to draw the charts
	KeptValues    int64   // values held until the end (a solve keeps every probe's runs)
	OutputBytes   int64   // sweep.ndjson and sweep.csv, estimated
	ChartFiles    int
}

// Sweep estimates a sweep of shape sh on workers goroutines (0: every
// core). Points stream through a window of SweepWindow points, so memory
// does not grow with the grid; the files do.
func Sweep(sh SweepShape, limits Limits, workers int) Estimate {
	e := Estimate{Storms: sh.Storms, Clients: sh.MaxClients, StormBytes: sh.MaxStormBytes}
	e.Concurrent = concurrent(sh.Storms, limits, workers)
	window := int64(min(SweepWindow(e.Concurrent), max(1, sh.Points)))
	// A point's values are held while it runs and again in its line.
	e.KeptBytes = window*sh.PointValues*(ValueBytes+JSONValueBytes) + sh.ChartValues*3*ValueBytes + sh.KeptValues*ValueBytes
	e.OutputBytes = sh.OutputBytes + int64(sh.ChartFiles)*ChartFileBytes
	e.MemoryBytes = ProcessBytes + int64(e.Concurrent)*e.StormBytes + e.KeptBytes
	e.MinTime = sh.Work.Time(e.Concurrent, limits.Cores)
	return e
}

// CheckSweep refuses a sweep estimate beyond the memory budget or the
// free disk at the output (freeDisk < 0: unknown).
func (e Estimate) CheckSweep(limits Limits, freeDisk int64, replications int, dir string) error {
	if e.MemoryBytes > limits.MemoryBytes {
		if int64(e.Concurrent)*e.StormBytes >= e.KeptBytes {
			return e.CheckRun(limits, replications)
		}
		return &OverError{Key: "replications", Message: fmt.Sprintf("%s replications keep about %s of per-run values for the points in flight, about %s of memory in all, over the budget of %s (%s): lower replications",
			human.Count(int64(replications)), human.Bytes(e.KeptBytes), human.Bytes(e.MemoryBytes), human.Bytes(limits.MemoryBytes), limits.MemoryFrom)}
	}
	if freeDisk >= 0 && e.OutputBytes > freeDisk {
		// Each run's values fill the lines: with one replication a point
		// would take about 1/replications of the room.
		if replications > 1 && e.OutputBytes/int64(replications) <= freeDisk {
			return &OverError{Key: "replications", Message: fmt.Sprintf("%s replications a point write about %s, more than the %s free at %s: lower replications, or another -o",
				human.Count(int64(replications)), human.Bytes(e.OutputBytes), human.Bytes(freeDisk), dir)}
		}
		return &OverError{Key: "axes", Message: fmt.Sprintf("the sweep writes about %s, more than the %s free at %s: fewer points, or another -o",
			human.Bytes(e.OutputBytes), human.Bytes(freeDisk), dir)}
	}
	return nil
}
