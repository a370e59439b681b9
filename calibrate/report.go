package calibrate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"stormsim/sim"
)

// writeReport writes rep as indented JSON, atomically, so a failed run
// never leaves half a report.
func writeReport(path string, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(data, '\n'))
}

// writeAtomic writes data to a temporary file renamed into place, readable
// by all (0644) like stormsim run's result.json: CreateTemp makes it 0600.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// calibratedYAML is calibrated.yaml: a comment saying where it comes from,
// then the calibrated scenario (config.Echo's JSON is valid YAML).
func calibratedYAML(s *sim.Scenario, rep *Report) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s calibrated against %d real run(s) of the gateway (stormsim calibrate):\n", s.Name, len(rep.Real))
	fmt.Fprintf(&b, "# capacity, network and detection fitted as in calibration.json's fit.method; everything else as in the config.\n")
	b.Write(rep.CalibratedConfig)
	b.WriteByte('\n')
	return []byte(b.String())
}

// WriteTable prints the report for a terminal: the lab checks, the fit,
// and per simulation one row per metric (real, simulated mean and 95%
// interval, relative error, inside the interval) and one per series.
func (r *Report) WriteTable(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s: %d clients, policy %s, %d real run(s) from seed %d, %d replications per model\n\n",
		r.Name, r.Clients, r.Policy, len(r.Real), r.Seed, replications(r))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tkind\tcheck\texpected\tobserved\tok")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", c.Run, c.Kind, c.Name, c.Expected, c.Observed, yesNo(c.Pass))
	}
	tw.Flush()
	f := r.Fit
	fmt.Fprintf(b, "\nfit from %d first and %d later rejected handshakes, %d admitted, %d start delays, %d claim gaps, %d 429 gaps:\n",
		f.FirstRejected, f.Rejected, f.Admitted, f.StartDelaySamples, f.AdmitGaps, f.RejectGaps)
	fmt.Fprintf(b, "  capacity     %s  (mean claim gap while backlogged %s, median 429 gap %s)\n", describeCapacity(f.Capacity), fmtMs(f.AdmitGapMs), fmtMs(f.RejectGapMs))
	fmt.Fprintf(b, "  rtt          %s  (rejected: first attempts p50 %s, later p50 %s)\n", describeDist(f.Network.RTT), fmtMs(f.FirstRejectedMs.P50), fmtMs(f.RejectedMs.P50))
	fmt.Fprintf(b, "  server_time  %s  (admitted residual p50 %s p90 %s; at gw-b p50 %s p90 %s; latency first p50 %s, later p50 %s)\n",
		describeDist(f.Network.ServerTime), fmtMs(f.ResidualMs.P50), fmtMs(f.ResidualMs.P90), fmtMs(f.AtGatewayMs.P50), fmtMs(f.AtGatewayMs.P90),
		fmtMs(f.FirstAdmittedMs.P50), fmtMs(f.AdmittedMs.P50))
	fmt.Fprintf(b, "  reject_time  %s\n", describeDistPtr(f.Network.RejectTime))
	fmt.Fprintf(b, "  legs         rejected, to decision: first from send p50 %s p90 %s, later from when due p50 %s p90 %s; decision to answer: first p50 %s p90 %s, later p50 %s p90 %s (%d first, %d later)\n",
		fmtMs(f.FirstOutMs.P50), fmtMs(f.FirstOutMs.P90), fmtMs(f.OutMs.P50), fmtMs(f.OutMs.P90),
		fmtMs(f.FirstBackMs.P50), fmtMs(f.FirstBackMs.P90), fmtMs(f.BackMs.P50), fmtMs(f.BackMs.P90), f.FirstLegs, f.Legs)
	fmt.Fprintf(b, "               admitted, send to decision: first p50 %s p90 %s, later p50 %s p90 %s\n",
		fmtMs(f.FirstAdmittedOutMs.P50), fmtMs(f.FirstAdmittedOutMs.P90), fmtMs(f.AdmittedOutMs.P50), fmtMs(f.AdmittedOutMs.P90))
	fmt.Fprintf(b, "               fitted: out %s, back %s, first out %s, first back %s\n", describeDistPtr(f.NetworkWithLegs.OutLeg),
		describeDistPtr(f.NetworkWithLegs.BackLeg), describeDistPtr(f.NetworkWithLegs.FirstOutLeg), describeDistPtr(f.NetworkWithLegs.FirstBackLeg))
	fmt.Fprintf(b, "               server time with legs %s  (admitted latency - own out leg - time at gw-b - median back: p50 %s p90 %s)\n",
		describeDist(f.NetworkWithLegs.ServerTime), fmtMs(f.LegsResidualMs.P50), fmtMs(f.LegsResidualMs.P90))
	fmt.Fprintf(b, "  first wave   detection %s  (per client: kill to its first attempt's decision, less its initial wait: p50 %s p90 %s max %s)\n",
		describeDistPtr(f.FirstArrival), fmtMs(f.FirstArrivalMs.P50), fmtMs(f.FirstArrivalMs.P90), fmtMs(f.FirstArrivalMs.Max))
	fmt.Fprintf(b, "  shared       shared_every %v  (per run: %s ms; retries sent late against their plan by p50 %s p90 %s)\n",
		f.SharedEvery, fmtList(f.SharedEveryMsRuns), fmtMs(f.RetryLagMs.P50), fmtMs(f.RetryLagMs.P90))
	fmt.Fprintf(b, "  stall        %s  (gw-b's first decision after the kill per run: %s ms; over the earliest arrival: %s ms, fitted %s)\n",
		describeDistPtr(f.Stall), fmtList(f.StallEndsMs), fmtList(f.StallExcessMs), describeDistPtr(f.StallExcess))
	fmt.Fprintf(b, "  decide_per_s %.0f/s, after the stall %.0f/s  (gw-b's decisions / its busy time per run: %s; after the stall: %s)\n",
		f.DecidePerS, f.DecideAfterStallPerS, fmtList(f.DecidePerSRuns), fmtList(f.DecideAfterStallPerSRuns))
	fmt.Fprintf(b, "  detection    %s  (the rtt variants': first attempt sent after the SIGKILL, less the initial wait: p50 %s, max %s)\n",
		describeDist(f.Detection.Delay), fmtMs(f.StartDelayMs.P50), fmtMs(f.StartDelayMs.Max))
	for _, sm := range r.Simulations {
		fmt.Fprintf(b, "\n%s model vs real (sim 95%% interval: central 95%% of replications; twin: the replications with the real runs' seeds)\n", sm.Label)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "metric\treal\tsim mean\tsim 95% interval\trel error\tinside\ttwin\ttwin error\treal pct\t")
		for _, m := range sm.Metrics {
			fmt.Fprintf(tw, "%s\t%s\t%s\t[%s, %s]\t%s\t%s\t%s\t%s\t%.0f%%\t\n", m.Metric, fmtValue(m.Real, m.Unit), fmtValue(m.SimMean, m.Unit),
				fmtValue(m.SimLo, m.Unit), fmtValue(m.SimHi, m.Unit), fmtRel(m.RelError), yesNo(m.Inside), fmtValue(m.SimTwin, m.Unit),
				fmtRel(m.TwinRelError), 100*m.RealPercentile)
		}
		tw.Flush()
		tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "series per window\tinside spread\tinside 95% band\tW1\tKS\tW1 p\treal/sim sd\t")
		for _, c := range sm.Series {
			if c.Pass == nil {
				fmt.Fprintf(tw, "%s\t%d/%d\t%d/%d\t-\t-\t-\t-\t\n", c.Series, c.WindowsInsideEnvelope, c.Windows, c.WindowsInside, c.Windows)
				continue
			}
			fmt.Fprintf(tw, "%s\t%d/%d\t%d/%d\t%.0f ms\t%.3f\t%.2f\t%s\t\n", c.Series, c.WindowsInsideEnvelope, c.Windows,
				c.WindowsInside, c.Windows, c.W1Ms, c.KS, c.W1P, fmtRatio(c.SpreadRatio))
		}
		tw.Flush()
	}
	fmt.Fprintln(b, "\nmodels compared (attempts and time to all reconnected: sim mean vs real mean; series: windows inside the spread)")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tattempts err\tlast reconnect err\tattempts/window\taccepts/window\t")
	for _, sm := range append(slices.Clone(r.Simulations), r.Variants...) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", sm.Label, metricErr(sm, "attempts"), metricErr(sm, "convergence_ms"),
			seriesInside(sm, "attempts"), seriesInside(sm, "accepts"))
	}
	tw.Flush()
	fmt.Fprintln(b, "\nagreement")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, a := range r.Agreement {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Simulation, a.Name, a.Criterion, a.Observed, passFail(a.Pass))
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

func replications(r *Report) int {
	if len(r.Simulations) == 0 {
		return 0
	}
	return r.Simulations[0].Replications
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

func fmtMs(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.3gs", v/1000)
	}
	return fmt.Sprintf("%.3gms", v)
}

func fmtValue(v float64, unit string) string {
	if unit == "ms" {
		return fmt.Sprintf("%.0f ms", v)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func fmtRel(v float64) string {
	if math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*v)
}

// metricErr is a simulation's relative error on metric, "-" if absent.
func metricErr(sm Simulation, metric string) string {
	for _, m := range sm.Metrics {
		if m.Metric == metric {
			return fmtRel(m.RelError)
		}
	}
	return "-"
}

// seriesInside is "inside/windows (pass)" for a count series.
func seriesInside(sm Simulation, series string) string {
	for _, c := range sm.Series {
		if c.Series == series && c.Pass != nil {
			return fmt.Sprintf("%d/%d %s", c.WindowsInsideEnvelope, c.Windows, passFail(*c.Pass))
		}
	}
	return "-"
}

// fmtList prints values to 0.1 (ms), comma-separated.
func fmtList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, ", ")
}

// fmtRatio prints a SpreadRatio, "-" when there is none (one real run).
func fmtRatio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", r)
}
