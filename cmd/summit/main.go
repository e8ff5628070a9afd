// Command summit is the terminal workbench for driving AI subagents by hand. This file only
// wires subcommands to the packages that do the work.
//
// Exit codes: 0 ok, 1 a bad or unreadable input file (or a failed run), 2 a usage error.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/cmd/summit/internal/hidetmux"
	"github.com/summit-dev/summit/session"
)

// Exit codes shared by every subcommand.
const (
	exitOK    = 0
	exitBad   = 1
	exitUsage = 2
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

func badFile(err error) error { return &exitError{exitBad, err} }

// silent is the error of an exit code whose reason was already printed.
var silent = errors.New("")

func main() {
	startupMark("main")
	hidetmux.Restore()
	// Not dumpable: no other process of the user's reads summit's memory or environment
	// (the API keys) through /proc, nor ptraces it (see agents/tools, "Process confinement").
	_ = tools.HardenProcess()
	stop := startProfile()
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	writeHeapProfile()
	os.Exit(code)
}

// startProfile writes a CPU profile of the whole run to $SUMMIT_CPUPROFILE when it is set
// (testdata/perf/live.sh reads it: which share of the process is the UI). It returns the
// function that ends it.
func startProfile() func() {
	path := os.Getenv("SUMMIT_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "summit: SUMMIT_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(os.Stderr, "summit: SUMMIT_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// writeHeapProfile writes what the heap holds at exit to $SUMMIT_MEMPROFILE when it is set
// (what a long session retains: testdata/perf reads it).
func writeHeapProfile() {
	path := os.Getenv("SUMMIT_MEMPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "summit: SUMMIT_MEMPROFILE: %v\n", err)
		return
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "summit: SUMMIT_MEMPROFILE: %v\n", err)
	}
}

// run executes the CLI with args and returns the exit code; tests call it directly.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	// Errors quote what was typed and what was found (file names, agent names, flags):
	// they are shown sanitised.
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != silent {
			fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(ee.err.Error()))
		}
		return ee.code
	}
	// Anything cobra itself rejects (unknown command or flag, wrong arg count) is usage.
	fmt.Fprintf(stderr, "summit: %s\nRun 'summit --help' for usage.\n", session.Sanitize(err.Error()))
	return exitUsage
}

// writeJSON writes v as indented JSON with session.SanitizeJSON's spelling: the same value,
// with nothing a terminal would act on or hide written raw.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(session.SanitizeJSON(b), '\n'))
	return err
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "summit",
		Short: "A terminal workbench for driving AI subagents by hand",
		Long: `summit: delegate tasks to specialised subagents, hand control to one of them, converge
the results of several, and replay the whole session from its JSONL recording.

Run without a subcommand, it opens the workbench on the current workspace (--workspace):
a tree of subagents, their live transcripts, and an input line for slash commands.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	wf := newWorkbenchFlags(root)
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		return workbench(wf, stderr, "Type /help, or /delegate \"a task\" --agent-type explore. tab completes, ? shows the keys.", nil)
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newVersion(stdout), newDemo(stderr), newReplay(stdout, stderr), newInspect(stdout, stderr), newAgents(stdout, stderr), newRun(stdout, stderr), newGC(stdout, stderr), newModels(stdout, stderr), newDoctor(stdout, stderr), newTapes(stdout, stderr), newServe(stdout, stderr), newFork(stdout, stderr), newResume(stdout, stderr), newImport(stdout, stderr), newExport(stdout, stderr), newBlame(stdout, stderr))
	root.AddCommand(newRunner(stdout, stderr)) // runner.go: remote runners over NATS
	root.AddCommand(newTrust(stdout, stderr))
	root.AddCommand(newHooks(stdout, stderr))
	suggestTypos(root) // suggest.go: did you mean, for subcommands and flags
	return root
}
