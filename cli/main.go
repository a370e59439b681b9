// Package cli implements the stormsim command. Each subcommand lives in its
// own file as a command value (cmdRun in run.go, ...), listed in the
// commands table.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"stormsim/budget"
	"stormsim/internal/human"
	"stormsim/internal/safetext"
	"stormsim/results"
)

// Exit codes of stormsim.
const (
	ExitOK          = 0 // success
	ExitCheckFailed = 1 // a check ran and failed, or a solve found no value that meets its requirements
	ExitUsage       = 2 // bad flags, arguments or config
	ExitInternal    = 3 // a bug or an I/O failure
	// ExitInterrupted is the shell's code for a process stopped by SIGINT
	// (128 + 2): Ctrl-C, after the output written so far was closed cleanly.
	ExitInterrupted = 130
)

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for the command list
	usage   string // arguments after "stormsim NAME"
	// takesArgs allows arguments besides flags (files to read).
	takesArgs bool
	// run executes the command, handed to it, with its arguments (after
	// the name). An error without an exit code means ExitInternal.
	run func(env *env, cmd *command, args []string) error
	// stopGrace, if set, replaces InterruptGrace: how long the command
	// may take to stop on its own after a signal.
	stopGrace time.Duration
}

// commands are stormsim's subcommands, in the order the usage lists them.
var commands = []*command{
	cmdCalibrate,
	cmdCheck,
	cmdMerge,
	cmdPlot,
	cmdPolicies,
	cmdReport,
	cmdRun,
	cmdSolve,
	cmdSweep,
	cmdValidate,
}

// env is what a command may touch of the outside world.
type env struct {
	stdout, stderr io.Writer
	// exit ends the process; nil (in tests) when the command must return
	// instead. With it, commands that run storms watch their memory.
	exit func(code int)
	// lookupEnv reads the environment, as os.LookupEnv does: where a batch
	// engine says which shard of a sweep this process runs.
	lookupEnv func(name string) (string, bool)
}

// watchMemory keeps the process under the memory budget while storms run
// (see budget.Watch). When memory passes it anyway, the estimate that let
// the run start was wrong: that is a bug, reported in one line with
// ExitInternal rather than as the runtime's out-of-memory crash.
func (e *env) watchMemory(limits budget.Limits, est budget.Estimate) (stop func()) {
	if e.exit == nil {
		return func() {}
	}
	return budget.Watch(limits.MemoryBytes, func(used int64) {
		fmt.Fprintf(e.stderr, "stormsim: internal error: memory in use reached %s, over the budget of %s (%s), though the estimate before the run was %s; "+
			"stopped here. Lower clients or replications, or raise %s\n",
			human.Bytes(used), human.Bytes(limits.MemoryBytes), limits.MemoryFrom, human.Bytes(est.MemoryBytes), budget.MemoryFlag)
		e.exit(ExitInternal)
	})
}

// lookup is the command called name, or nil.
func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// exitError carries the exit code for err.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports bad usage (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// badInput marks err as caused by the user's input (exit 2).
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: ExitUsage, err: err}
}

// Main runs stormsim with args (without the program name) and returns the
// exit code. It never panics: a panic is reported as an internal error.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	return main(&env{stdout: stdout, stderr: stderr, lookupEnv: os.LookupEnv}, args)
}

// MainProcess is Main for the stormsim process itself: it may also end the
// process, with one line and ExitInternal, when memory passes the budget
// while storms run, and with ExitInterrupted when a command has not
// stopped on its own soon after SIGINT or SIGTERM (see InterruptGrace).
func MainProcess(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, exit: os.Exit, lookupEnv: os.LookupEnv}
	name, grace := "", InterruptGrace
	if len(args) > 0 {
		name = safetext.Terminal(args[0])
		if c := lookup(args[0]); c != nil && c.stopGrace > 0 {
			grace = c.stopGrace
		}
	}
	defer e.guardInterrupts(name, grace)()
	return main(e, args)
}

func main(e *env, args []string) (code int) {
	stdout, stderr := e.stdout, e.stderr
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(stderr, safetext.OneLine(fmt.Sprintf("stormsim: internal error: %v", r)))
			code = ExitInternal
		}
	}()
	if len(args) == 0 {
		writeUsage(stderr)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) == 1 {
			writeUsage(stdout)
			return ExitOK
		}
		c := lookup(args[1])
		if c == nil || len(args) > 2 {
			fmt.Fprintf(stderr, "stormsim help: no such command %q (try: %s)\n", safetext.Terminal(strings.Join(args[1:], " ")), strings.Join(names(), ", "))
			return ExitUsage
		}
		return report(e, c.run(e, c, []string{"--help"}))
	case "version", "--version":
		fmt.Fprintf(stdout, "stormsim %s (%s, %s/%s)\n", results.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return ExitOK
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "stormsim: unknown command %q (try: %s)\n", safetext.Terminal(name), strings.Join(names(), ", "))
		return ExitUsage
	}
	return report(e, c.run(e, c, args[1:]))
}

// report prints err on one line and maps it to an exit code.
func report(e *env, err error) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(e.stderr, safetext.OneLine(err.Error()))
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitInternal
}

func names() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	return out
}

func writeUsage(w io.Writer) {
	fmt.Fprintln(w, "stormsim simulates reconnect storms: many clients retrying against a gateway that admits few.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: stormsim COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'stormsim help COMMAND' for its flags, 'stormsim --version' for the version.")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 a check failed or a solve found no value, 2 bad usage or config, 3 internal error, 130 interrupted.")
}

// flagSet returns a flag set for c that reports errors through parse.
func flagSet(c string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("stormsim "+c, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// parse parses args into fs. It returns done=true when the user asked for
// help, which it prints to stdout.
func parse(e *env, c *command, fs *pflag.FlagSet, args []string) (done bool, err error) {
	restore := guardSingleValues(fs)
	err = fs.Parse(args)
	restore()
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(e.stdout, "Usage: stormsim %s %s\n\n%s\n\nFlags:\n%s", c.name, c.usage, c.summary, fs.FlagUsages())
		return true, nil
	}
	if err != nil {
		return false, usageErrorf("stormsim %s: %v (see stormsim help %s)", c.name, err, c.name)
	}
	if fs.NArg() > 0 && !c.takesArgs {
		return false, usageErrorf("stormsim %s: unexpected argument %q (see stormsim help %s)", c.name, fs.Arg(0), c.name)
	}
	return false, nil
}

// guardSingleValues makes every flag that holds one value refuse a second
// one (-c A -c B would otherwise silently mean B) and, for a string, an
// empty one (an empty -o would otherwise mean no -o). Repeatable flags
// (arrays) are left alone. The returned function puts the flags' own values back,
// so that help text still knows their types.
func guardSingleValues(fs *pflag.FlagSet) (restore func()) {
	var flags []*pflag.Flag
	var values []pflag.Value
	fs.VisitAll(func(f *pflag.Flag) {
		if strings.HasSuffix(f.Value.Type(), "Array") || strings.HasSuffix(f.Value.Type(), "Slice") {
			return
		}
		flags, values = append(flags, f), append(values, f.Value)
		f.Value = &singleValue{Value: f.Value, flag: f}
	})
	return func() {
		for i, f := range flags {
			f.Value = values[i]
		}
	}
}

// singleValue is a flag value that may be set once, and not to "" when it
// is a string.
type singleValue struct {
	pflag.Value
	flag *pflag.Flag
}

func (v *singleValue) Set(s string) error {
	if v.flag.Changed {
		return fmt.Errorf("given twice (%s, then %s): give it once", safetext.Terminal(v.Value.String()), safetext.Terminal(s))
	}
	if s == "" && v.Value.Type() == "string" {
		return errors.New("needs a value, got an empty one")
	}
	return v.Value.Set(s)
}
