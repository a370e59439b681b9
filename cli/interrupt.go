package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Interrupts. Every command exits ExitInterrupted within a second of the
// first SIGINT (Ctrl-C) or SIGTERM, keeping what it finished in whole
// files. A command that works for long takes its context from
// interruptible, in one line,
//
//	ctx, stop := interruptible()
//	defer stop()
//
// and, once the context is done, closes what it was writing and returns
// interruptedf's error, which says what was kept and how to go on. For
// whatever does not watch the context (a command blocked writing to a
// full pipe, or reading a FIFO), MainProcess ends the process
// InterruptGrace after the signal (the command's stopGrace, if it sets
// one), with ExitInterrupted and one line; a second signal ends it at
// once. Files stay whole all the same: stormsim writes them atomically, or
// a line at a time where a cut line is dropped on resume.

// InterruptGrace is how long after the first signal MainProcess lets a
// command stop on its own before it ends the process.
const InterruptGrace = 750 * time.Millisecond

// interruptSignals are the signals that interrupt a command.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// interruptible is a context cancelled by the first SIGINT or SIGTERM.
func interruptible() (context.Context, func()) {
	return signal.NotifyContext(context.Background(), interruptSignals...)
}

// interruptedf is the error of a command stopped by a signal: exit
// ExitInterrupted with the message, which says what was kept.
func interruptedf(format string, args ...any) error {
	return &exitError{code: ExitInterrupted, err: fmt.Errorf(format, args...)}
}

// guardInterrupts ends the process with ExitInterrupted when the command
// named cmd is still running grace after the first signal, or at a second
// one. stop ends the guard.
func (e *env) guardInterrupts(cmd string, grace time.Duration) (stop func()) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, interruptSignals...)
	done := make(chan struct{})
	go func() {
		var late <-chan time.Time
		for {
			select {
			case <-done:
				return
			case sig := <-signals:
				if late != nil {
					fmt.Fprintf(e.stderr, "stormsim %s: interrupted again (%v): ended at once\n", cmd, sig)
					e.exit(ExitInterrupted)
					return
				}
				late = time.After(grace)
			case <-late:
				fmt.Fprintf(e.stderr, "stormsim %s: interrupted; ended %v after the signal, before it stopped on its own\n", cmd, grace)
				e.exit(ExitInterrupted)
				return
			}
		}
	}()
	return func() {
		signal.Stop(signals)
		close(done)
	}
}
