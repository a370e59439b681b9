package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"stormsim/budget"
	"stormsim/config"
	"stormsim/internal/human"
	"stormsim/sim"
)

// runFlags are the flags that say how many storms to run and on how many
// goroutines; none of them changes a result byte except --replications.
type runFlags struct {
	replications int
	workers      int
	maxMemory    string
	maxTime      time.Duration
	fs           *pflag.FlagSet
}

func (f *runFlags) add(fs *pflag.FlagSet) {
	f.fs = fs
	fs.IntVar(&f.replications, "replications", 0, "run `R` seeds (seed, seed+1, ...) per policy and report mean, std, quantiles and 95% CI; default the config's replications")
	fs.IntVar(&f.workers, "workers", 0, "run `N` storms at once; default the number of CPUs (results do not depend on it)")
	fs.StringVar(&f.maxMemory, "max-memory", "", "refuse up front what would need more than `SIZE` of memory, e.g. 8GiB; default half of this machine's memory")
}

// addMaxTime adds --max-time, for the commands that run storms (a sweep
// is long by design and has none).
func (f *runFlags) addMaxTime(fs *pflag.FlagSet) {
	fs.DurationVar(&f.maxTime, "max-time", budget.DefaultMaxTime, "refuse up front a run whose computing takes at least `D` (its lower bound), e.g. 2h; 0 for no limit")
}

// limits are the machine's limits, with the memory budget of
// --max-memory and the time limit of --max-time.
func (f *runFlags) limits(cmd string) (budget.Limits, error) {
	l := budget.Machine()
	if f.fs.Lookup("max-time") != nil {
		if f.maxTime < 0 {
			return l, usageErrorf("stormsim %s: %s must be >= 0 (got %v); 0 allows any", cmd, budget.MaxTimeFlag, f.maxTime)
		}
		l = l.WithMaxTime(f.maxTime)
	}
	if f.maxMemory == "" {
		return l, nil
	}
	n, err := budget.ParseSize(f.maxMemory)
	if err != nil {
		return l, usageErrorf("stormsim %s: %s: %v", cmd, budget.MemoryFlag, err)
	}
	return l.WithMemory(n), nil
}

// overBudget turns a budget refusal into a config error located at the
// key to change (or at --replications when that flag set it).
func (f *runFlags) overBudget(err error, doc *config.Document) error {
	var oe *budget.OverError
	if !errors.As(err, &oe) {
		return err
	}
	if oe.Time && f.fs.Changed("max-time") {
		return badInput(&config.Error{Where: fmt.Sprintf("%s %v", budget.MaxTimeFlag, f.maxTime), Path: oe.Key, Problem: oe.Message})
	}
	where := doc.Where(oe.Key)
	if oe.Key == "replications" && f.fs.Changed("replications") {
		where = "--replications " + strconv.Itoa(f.replications)
	}
	return badInput(&config.Error{Where: where, Path: oe.Key, Problem: oe.Message})
}

// bound refuses a run of s whose estimate est passes the memory budget or
// the time limit, as a config error at the key to change (budget's
// CheckRun and CheckTime): what a command that runs storms calls, in one
// line, before it runs them,
//
//	if err := rf.bound(est, limits, s, doc); err != nil { return err }
func (f *runFlags) bound(est budget.Estimate, limits budget.Limits, s *sim.Scenario, doc *config.Document) error {
	if err := est.CheckRun(limits, s.Replications); err != nil {
		return f.overBudget(err, doc)
	}
	return f.overBudget(est.CheckTime(limits, s), doc)
}

// warnLong says on w that the run ahead takes at least LongRun, as the
// estimate's lower bound puts it, before it starts; validate (cmd) says
// what running it would take.
func warnLong(w io.Writer, cmd string, est budget.Estimate, limits budget.Limits) {
	if est.MinTime < LongRun {
		return
	}
	what, after := "at least %s of computing ahead", "; Ctrl-C stops it"
	if cmd == "validate" {
		what, after = "warning: running it takes at least %s of computing", ""
	}
	fmt.Fprintf(w, "stormsim %s: "+what+" (%s storm%s of up to %s clients on %d core%s, about %s of memory)%s\n",
		cmd, human.Duration(est.MinTime), human.Count(est.Storms), plural(int(min(est.Storms, 2)), "", "s"), human.Count(int64(est.Clients)),
		min(est.Concurrent, limits.Cores), plural(min(est.Concurrent, limits.Cores), "", "s"), human.Bytes(est.MemoryBytes), after)
}

// check validates the flags for command cmd. Left out, each has its
// default; given, it must be at least 1, so that 0 does not quietly mean
// the default.
func (f *runFlags) check(cmd string) error {
	if f.fs.Changed("replications") && f.replications < 1 {
		return usageErrorf("stormsim %s: --replications must be >= 1 (got %d); leave it out to run the config's replications", cmd, f.replications)
	}
	if f.fs.Changed("workers") && f.workers < 1 {
		return usageErrorf("stormsim %s: --workers must be >= 1 (got %d); leave it out to use every CPU", cmd, f.workers)
	}
	return nil
}

// sets returns the --set overrides with --replications appended, so that
// the result's config echo and hash say how many replications ran.
func (f *runFlags) sets(sets []string) []string {
	if f.replications == 0 {
		return sets
	}
	return append(append([]string(nil), sets...), "replications="+strconv.Itoa(f.replications))
}

// isTerminal reports whether w is a terminal, for live progress lines.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
