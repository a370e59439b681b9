package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"stormsim/calibrate"
	"stormsim/config"
	"stormsim/htmlreport"
	"stormsim/sim"
)

// cmdCalibrate is stormsim calibrate.
var cmdCalibrate = &command{
	name:    "calibrate",
	summary: "run the storm against real gateways and PostgreSQL and in the simulator; report the model's error",
	usage:   "-c FILE [--set path=value]... [--policy label] -o DIR [--model A/calibrated-run-*.yaml] [--runs K] [--replications R] [--replace N] [--wait-quiet D] [--size-queue Q] [--size-bucket F] [--database-url URL] [--gateway-bin PATH] [--resume] [--overwrite]",
	run:     runCalibrate,
	// Stopping kills the gateways and drops the schemas, some 0.2 s; on a
	// busy machine it may take longer, and must not be cut short.
	stopGrace: 10 * time.Second,
}

func runCalibrate(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	var sf scenarioFlags
	sf.add(fs)
	var opt calibrate.Options
	var out outFlags
	out.add(fs, "write calibration.json, calibrated.yaml, real.ndjson, charts/ and logs/ into `DIR` (created)")
	fs.StringArrayVar(&opt.Models, "model", nil, "predict this storm with the sections fitted on another: `FILE`s (repeatable, or a quoted glob) such as A/calibrated-run-*.yaml or A/calibrated.yaml")
	fs.IntVar(&opt.Runs, "runs", calibrate.DefaultRuns, "real storms to compare, `K`; run k uses seed seed+k-1")
	fs.IntVar(&opt.Replace, "replace", -1, "replace up to `N` runs that other work disturbed by fresh ones; -1: as many as --runs")
	fs.DurationVar(&opt.WaitQuiet, "wait-quiet", 0, "before each run, wait up to `D` for other work on the machine to calm down")
	fs.IntVar(&opt.Replications, "replications", calibrate.DefaultReplications, "simulated storms per model, `R` (seeds seed .. seed+R-1)")
	fs.StringVar(&opt.DatabaseURL, "database-url", "", "PostgreSQL `URL` on loopback; default $DATABASE_URL, else a throwaway cluster if initdb is installed")
	fs.StringVar(&opt.GatewayBin, "gateway-bin", "", "the gateway binary `PATH`; default: go build ./cmd/gateway")
	fs.IntVar(&opt.MaxClients, "max-clients", calibrate.DefaultMaxClients, "refuse configs with more than `N` clients")
	fs.DurationVar(&opt.Timeout, "timeout", calibrate.DefaultTimeout, "stop everything after `D` (the real runs finished are kept; --resume goes on)")
	var size calibrate.Size
	fs.Float64Var(&size.QueueOverTimeout, "size-queue", 0, "size the storm to this machine: a warm-up measures the survivor's claim rate, then clients = `Q` handshake timeouts of claims at that rate")
	fs.Float64Var(&size.BucketFraction, "size-bucket", 0, "with the warm-up, set the token bucket's rate to `F` (0-1] of the measured claim rate")
	fs.BoolVar(&opt.Resume, "resume", false, "keep the real runs that a calibration of the same config, stopped before it ended, left in -o DIR, and run the rest")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	opt.OutDir, opt.Overwrite, opt.Derived = out.dir, out.overwrite, []string{htmlreport.File}
	if fs.Changed("size-queue") || fs.Changed("size-bucket") {
		opt.Size = &size
	}
	if opt.OutDir == "" {
		return usageErrorf("stormsim calibrate: -o/--out DIR is required")
	}
	if len(sf.policies) > 1 {
		return usageErrorf("stormsim calibrate: give at most one --policy (the real clients use one)")
	}
	if opt.Timeout <= 0 || opt.MaxClients < 1 {
		return usageErrorf("stormsim calibrate: --timeout and --max-clients must be > 0 (got %v, %d)", opt.Timeout, opt.MaxClients)
	}
	s, err := sf.load(cmd.name)
	if err != nil {
		return err
	}
	if len(sf.policies) == 1 {
		opt.Policy = sf.policies[0]
	}
	opt.Progress = e.stderr
	ctx, stop := interruptible()
	defer stop()
	rep, err := calibrate.Run(ctx, s, opt)
	var ue *calibrate.UsageError
	var ie *calibrate.InterruptedError
	switch {
	case err != nil && ctx.Err() != nil && !errors.As(err, &ie):
		return interruptedf("stormsim calibrate: interrupted before any real run finished: nothing is kept, and every process and schema it started is gone")
	case errors.As(err, &ue):
		var fe *sim.FieldError
		if errors.As(ue, &fe) {
			return usageErrorf("%s: %s: %s (got %v)", locateKey(sf, fe.Path), fe.Path, fe.Problem, fe.Got)
		}
		return usageErrorf("stormsim calibrate: %v", ue)
	case errors.As(err, &ie) && ie.Kept == 0 && ctx.Err() != nil:
		return interruptedf("stormsim calibrate: interrupted %s", ie.What())
	case errors.As(err, &ie) && ctx.Err() != nil:
		return interruptedf("stormsim calibrate: interrupted %s; continue with: %s", ie.What(), resumeCommand(cmd.name, args))
	case errors.As(err, &ie) && ie.Kept > 0: // out of --timeout
		return fmt.Errorf("stormsim calibrate: %w; continue with: %s", err, resumeCommand(cmd.name, args))
	case err != nil:
		return fmt.Errorf("stormsim calibrate: %w", err)
	}
	if err := rep.WriteSummary(e.stdout); err != nil {
		return err
	}
	page, err := writeReport(opt.OutDir)
	if err != nil {
		return fmt.Errorf("stormsim calibrate: the report: %w", err)
	}
	fmt.Fprintf(e.stdout, "\nreport: %s (every run, the fit, each model metric by metric and window by window, the charts)\n", page)
	written := []string{filepath.Join(opt.OutDir, calibrate.ReportFile)}
	if rep.FitError == "" { // runs that cannot be fitted whole have no calibrated scenario
		written = append(written, filepath.Join(opt.OutDir, calibrate.CalibratedFile))
	}
	written = append(written, filepath.Join(opt.OutDir, calibrate.RecordFile), filepath.Join(opt.OutDir, calibrate.ChartsDir)+"/")
	fmt.Fprintf(e.stdout, "written: %s\n", strings.Join(written, ", "))
	if f := rep.Failures(); len(f) > 0 {
		return &exitError{code: ExitCheckFailed, err: fmt.Errorf("stormsim calibrate: %s", f[0])}
	}
	return nil
}

// locateKey is FILE:LINE of the scenario key path (after the --set
// overrides), or the file alone when it cannot be placed.
func locateKey(sf scenarioFlags, path string) string {
	doc, err := config.LoadDocument(sf.configPath, sf.sets)
	if err != nil {
		return sf.configPath
	}
	return doc.Where(path)
}
