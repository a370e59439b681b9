package cli

import (
	"errors"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"stormsim/budget"
	"stormsim/config"
)

// runFlags are the flags that say how many storms to run and on how many
// goroutines; none of them changes a result byte except --replications.
type runFlags struct {
	replications int
	workers      int
	maxMemory    string
	fs           *pflag.FlagSet
}

func (f *runFlags) add(fs *pflag.FlagSet) {
	f.fs = fs
	fs.IntVar(&f.replications, "replications", 0, "run `R` seeds (seed, seed+1, ...) per policy and report mean, std, quantiles and 95% CI; default the config's replications")
	fs.IntVar(&f.workers, "workers", 0, "run `N` storms at once; default the number of CPUs (results do not depend on it)")
	fs.StringVar(&f.maxMemory, "max-memory", "", "refuse up front what would need more than `SIZE` of memory, e.g. 8GiB; default half of this machine's memory")
}

// limits are the machine's limits, with the memory budget of
// --max-memory.
func (f *runFlags) limits(cmd string) (budget.Limits, error) {
	l := budget.Machine()
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
	where := doc.Where(oe.Key)
	if oe.Key == "replications" && f.fs.Changed("replications") {
		where = "--replications " + strconv.Itoa(f.replications)
	}
	return badInput(&config.Error{Where: where, Path: oe.Key, Problem: oe.Message})
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
