package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/fork"
	"github.com/summit-dev/summit/session/live"
	"github.com/summit-dev/summit/session/record"
)

// resumeFlags restart a session on its own recording: the fold of it, and where it is.
type resumeFlags struct {
	path  string
	state *session.State
}

// loadResume folds the recording at path (text included: the session goes on showing it).
func loadResume(path string) (*resumeFlags, error) {
	st := &session.State{}
	f, err := record.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := record.ForEach(f, record.ReadOptions{}, func(e session.Event) error { return session.Apply(st, e) }); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case !st.Started:
		return nil, fmt.Errorf("%s: no events", path)
	case st.Ended:
		return nil, fmt.Errorf("%s: the session ended (%s); summit fork %s --at SEQ continues it as a new session", path, st.EndReason, path)
	}
	return &resumeFlags{path: path, state: st}, nil
}

// reopen opens the recording to append to it.
func (r *resumeFlags) reopen(opts record.RecorderOptions, stderr io.Writer) (*record.Recorder, error) {
	rec, torn, err := record.ReopenRecorderFile(r.path, opts)
	if err == nil && torn > 0 {
		fmt.Fprintf(stderr, "summit: resume: cut the torn last line of %s (%d bytes: the session was killed mid-write)\n", session.Sanitize(r.path), torn)
	}
	return rec, err
}

// show hands the recording's events to push (the workbench's fold), before the resumed
// session's own: the workbench of a resumed session shows what happened before the restart
// as a fork's shows its parent's (nil-safe: nothing for a new session).
func (r *resumeFlags) show(push func(session.Event)) error {
	if r == nil {
		return nil
	}
	f, err := record.OpenRegular(r.path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = record.ForEach(f, record.ReadOptions{}, func(e session.Event) error {
		push(e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	return nil
}

// start is the session's resume start (nil-safe: nil for a new session).
func (r *resumeFlags) start() *live.ResumeStart {
	if r == nil {
		return nil
	}
	why := "the session was resumed on its recording: it ran in the summit that stopped"
	closing := fork.Close(r.state, why, "resume", func(sa *session.Subagent) bool {
		return sa != nil && sa.Runner != "" && sa.RunnerJob != ""
	})
	return &live.ResumeStart{State: r.state, Closing: closing}
}

func newResume(stdout, stderr io.Writer) *cobra.Command {
	f := &sessionFlags{}
	var scriptPath string
	c := &cobra.Command{
		Use:   "resume FILE [--script FILE|-]",
		Short: "Restart a session that was killed, on its own recording",
		Long: `Resume restarts a session that did not end (its summit was killed) on the same recording: it
appends to FILE with the same session id, in the recorded workspace. Subagents placed on
runners (/delegate … --on) that have not stopped are reattached: each job's event stream is
read again from the cursor the recording holds (RunnerCursor), so every event is folded once,
and their permission requests, cancellation, lease watch and change set work as before the
restart. This needs NATS (--nats URL, or runners: in the user config); without it resume
refuses and names them. What ran in the killed summit itself stops: its local subagents as
failures naming the restart (/retry sa-N runs the task again), convergences and handoffs as
interrupted, as in a fork.

Without --script the workbench opens; with it the script runs headless, as with summit run.`,
		Example: "  summit resume .summit/sessions/$ID.jsonl --nats nats://127.0.0.1:4222 --creds ~/.config/summit/nats.creds",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := loadResume(args[0])
			if err != nil {
				return badFile(err)
			}
			f.resumeOn(r, cmd.Flags().Changed("workspace"))
			return headlessOrWorkbench(cmd, f, scriptPath, fmt.Sprintf("Resumed on %s.", args[0]), stdout, stderr)
		},
	}
	c.Flags().StringVar(&scriptPath, "script", "", "run this script headless instead of opening the workbench (- for stdin)")
	c.Flags().StringVar(&f.approve, "approve", "none", "headless: decide permission requests: none, shell or all")
	f.register(c)
	return c
}

// resumeOn makes f a session resumed on r's recording, in its recorded workspace unless
// --workspace named one (summit resume, and the replay's reattach: reattach.go).
func (f *sessionFlags) resumeOn(r *resumeFlags, workspaceSet bool) {
	f.resume = r
	if ws := existingDir(r.state.Info.Workspace); ws != "" && !workspaceSet {
		f.workspace = ws
	}
}

// existingDir is dir when it names a directory that exists, else "".
func existingDir(dir string) string {
	if dir == "" {
		return ""
	}
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	return ""
}

// headlessOrWorkbench runs the session headless on scriptPath, or opens the workbench (which
// asks for permissions, unless --approve was given) with hint as its first notice.
func headlessOrWorkbench(cmd *cobra.Command, f *sessionFlags, scriptPath, hint string, stdout, stderr io.Writer) error {
	if scriptPath != "" {
		return headless(f, scriptPath, stdout, stderr)
	}
	if !cmd.Flags().Changed("approve") {
		f.approve = "" // the workbench asks
	}
	return workbench(f, stderr, hint, nil)
}
