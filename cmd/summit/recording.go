package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/compare"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
	"github.com/summit-dev/summit/ui"
)

// recordedNote is what a closed workbench session prints on stderr: where its recording is,
// and the exact command that replays it, spelled as this summit was run (selfCommand).
func recordedNote(path string) string { return recordedNoteAs(selfCommand(), path) }

func recordedNoteAs(self, path string) string {
	return session.Sanitize(fmt.Sprintf("summit: recorded %s\nreplay it with: %s replay %s\n", path, self, shellQuote(path)) + installHint(self))
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe characters.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@%=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// load reads a recording and folds it into st with apply (session.Apply, or a spool's Apply),
// printing the reader's warnings (torn last line, unknown types, lenient skips) to stderr. Any
// error is a bad file (exit 1). Decoding runs on every core, the fold on this goroutine, and
// memory is bounded whatever the file's size.
func load(path string, opts record.ReadOptions, st *session.State, apply func(*session.State, session.Event) error, stderr io.Writer) error {
	rep, err := record.FoldFile(path, opts, st, apply)
	for _, w := range rep.Warnings {
		fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(path+": "+w))
	}
	if err != nil {
		if os.IsNotExist(err) {
			return badFile(fmt.Errorf("%s: no such file", path))
		}
		return badFile(fmt.Errorf("%s: %w", path, err))
	}
	return nil
}

// readerHeap bounds the heap of the recording readers (inspect, replay --print): they read a
// file of any size through a few chunks at a time, and what they keep (the folded state
// without transcript text, the spool's memory) is small, so the garbage collector is asked
// to keep the heap under this (a soft limit) and otherwise to collect four times less often
// than by default, which saves it most of its work. GOMEMLIMIT and GOGC, when set, win. The
// settings are restored when the command returns (the tests run commands in one process).
const readerHeap = 160 << 20

func boundReaderHeap() (restore func()) {
	limit, percent := int64(-1), -2
	if os.Getenv("GOMEMLIMIT") == "" {
		limit = debug.SetMemoryLimit(readerHeap)
	}
	if os.Getenv("GOGC") == "" {
		percent = debug.SetGCPercent(400)
	}
	return func() {
		if limit >= 0 {
			debug.SetMemoryLimit(limit)
		}
		if percent != -2 {
			debug.SetGCPercent(percent)
		}
	}
}

func newReplay(stdout, stderr io.Writer) *cobra.Command {
	var (
		print, lenient   bool
		speed            float64
		from             uint64
		beside, syncMode string
		nats             natsOnly // reattach.go
	)
	c := &cobra.Command{
		Use:   "replay FILE [--beside FILE2 [--sync seq|time|off]]",
		Short: "Replay a session recording (--print: the final state as plain text, no TTY)",
		Long: `Replay folds a session recording with the same fold a live session uses.

With --print it renders the final state as plain text and needs no terminal: the tree, each
subagent's transcript in order, the session log, convergences with their conflicts and
resolutions, permission decisions and the playbook. The output is deterministic, so a live run
and its replay can be compared byte for byte.

With --beside FILE2 the interactive replay shows FILE2 in a second pane beside FILE. The
focused recording leads (w gives the lead to the other) and the other follows it: to the same
seq (--sync seq, the default), to the same time since its start (--sync time), or not at all
(off); s cycles through the three.

A recording whose session did not end (its summit was killed) while subagents still ran on
remote runners opens with a question naming them: typing reattach and enter ends the replay
and resumes the session on the recording, as summit resume FILE does (NATS from --nats,
--creds and --insecure, else runners: in the user config); esc keeps the read-only replay.`,
		Example: "  summit replay testdata/recordings/valid.jsonl --print\n  summit replay testdata/recordings/valid.jsonl --beside testdata/recordings/unknown-type.jsonl --sync time",
		Args:    exactlyOneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(speed >= 0.25 && speed <= 16) { // NaN is neither
				return usageErr("--speed must be from 0.25 to 16, got %g", speed)
			}
			if beside != "" {
				sync, err := ui.ParseSync(syncMode)
				if err != nil {
					return usageErr("%v", err)
				}
				if print {
					return usageErr("--beside is for the interactive replay, not --print")
				}
				return replaySplitUI(args[0], beside, sync, lenient, speed, from)
			}
			if !print {
				return replayUI(args[0], lenient, speed, from, nats)
			}
			defer boundReaderHeap()()
			// The transcripts' items and the log stay out of the state, in a spool (memory up
			// to a limit, then a temporary file), and are written out as they are read back:
			// what stays in memory does not grow with the recording's length.
			sp := render.NewTextSpool(0)
			defer sp.Close()
			st := &session.State{}
			if err := load(args[0], record.ReadOptions{Lenient: lenient}, st, sp.Apply, stderr); err != nil {
				return err
			}
			return sp.Print(stdout, st)
		},
	}
	c.Flags().BoolVar(&print, "print", false, "render the final state as plain text and exit")
	c.Flags().BoolVar(&lenient, "lenient", false, "skip and count malformed lines instead of failing")
	c.Flags().Float64Var(&speed, "speed", 1, "playback speed multiplier (interactive replay)")
	c.Flags().Uint64Var(&from, "from", 0, "start playback at this seq (interactive replay)")
	c.Flags().StringVar(&beside, "beside", "", "a second recording, shown beside the first (interactive replay)")
	c.Flags().StringVar(&syncMode, "sync", "seq", "with --beside: the second follows the first by seq, time or off")
	nats.register(c)
	return c
}

func newInspect(stdout, stderr io.Writer) *cobra.Command {
	var asJSON, lenient bool
	c := &cobra.Command{
		Use:   "inspect FILE [FILE2]",
		Short: "Print session metrics, or compare two recordings (FILE FILE2)",
		Long: `Inspect folds a session recording and prints its metrics: subagent spawns and spawn
rate, success rate, average completion time by agent type, permission escalations, convergence
conflict rate, timeouts and retries, plus event counts by type, the session id and the duration.

With two recordings it compares them: overall and per agent type, the duration, tokens, cost,
tool calls, retries, permission escalations, conflicts and outcomes of each, side by side with
the difference (B minus A); the first event where they diverge (the command lines in order,
then each subagent's tool calls, results and decisions), with its seq on each side; and the
change each ended with for every file either changed (A only, B only, same or different,
with +/- line counts). --json prints the comparison as one object (see session/compare).`,
		Example: "  summit inspect testdata/recordings/valid.jsonl --json\n  summit inspect testdata/recordings/valid.jsonl testdata/recordings/unknown-type.jsonl",
		Args:    oneOrTwoFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			defer boundReaderHeap()()
			if len(args) == 2 {
				return inspectCompare(args[0], args[1], lenient, asJSON, stdout, stderr)
			}
			// The metrics are counters: the reader leaves out the transcripts' text, and the
			// state counts items without keeping them (nor the log), so it takes the same
			// memory whatever the recording's length.
			st := &session.State{}
			st.SetCountOnly()
			if err := load(args[0], record.ReadOptions{Lenient: lenient, NoText: true}, st, session.Apply, stderr); err != nil {
				return err
			}
			m := render.ComputeMetrics(st)
			if asJSON {
				return writeJSON(stdout, m)
			}
			// The session id, agent types, outcomes and event types are what the recording says.
			var b strings.Builder
			if err := m.WriteText(&b); err != nil {
				return err
			}
			_, err := io.WriteString(stdout, session.Sanitize(b.String()))
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the metrics (or the comparison) as JSON")
	c.Flags().BoolVar(&lenient, "lenient", false, "skip and count malformed lines instead of failing")
	return c
}

// inspectCompare is inspect A B: each recording folded once, streaming and without keeping
// transcript text (see compare.Trace), then compared.
func inspectCompare(pathA, pathB string, lenient, asJSON bool, stdout, stderr io.Writer) error {
	var traces [2]*compare.Trace
	for i, p := range []string{pathA, pathB} {
		t := compare.NewTrace(p)
		// The fingerprints are taken from the transcripts' text, so the reader decodes it;
		// Trace.Fold drops it before the state sees it.
		if err := load(p, record.ReadOptions{Lenient: lenient}, t.State(), t.Fold, stderr); err != nil {
			return err
		}
		traces[i] = t
	}
	rep, err := compare.Compare(traces[0], traces[1])
	if err != nil {
		return badFile(err)
	}
	if asJSON {
		return writeJSON(stdout, rep)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, session.Sanitize(b.String()))
	return err
}

func oneOrTwoFiles(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 1, 2:
		return nil
	case 0:
		return usageErr("%s needs a recording FILE\nusage: %s", cmd.Name(), cmd.UseLine())
	}
	return usageErr("%s takes one FILE, or two to compare, got %d arguments\nusage: %s", cmd.Name(), len(args), cmd.UseLine())
}

func exactlyOneFile(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		return nil
	case 0:
		return usageErr("%s needs a recording FILE\nusage: %s", cmd.Name(), cmd.UseLine())
	}
	return usageErr("%s takes one FILE, got %d arguments\nusage: %s", cmd.Name(), len(args), cmd.UseLine())
}
