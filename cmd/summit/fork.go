package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/fork"
	"github.com/summit-dev/summit/session/gitws"
	"github.com/summit-dev/summit/session/live"
)

// forkFlags are what makes a session a fork: the plan read from the parent recording, and where
// the fork's workspace goes.
type forkFlags struct {
	plan *fork.Plan
	into string // the fork's workspace ("" = $XDG_DATA_HOME/summit/forks/<session id>)
	// named is the --workspace the user gave ("" when none): an imported session's folder
	// (another tool's cwd, maybe another repository on the machine) is copied only when it is
	// the folder the user named.
	named string
}

// replayed reports whether ev is one of the parent's events a fork records again at its start
// (seq 2 to the fork point): progress and observers start after them. Nil-safe.
func (ff *forkFlags) replayed(ev session.Event) bool {
	return ff != nil && ev.Seq > 1 && ev.Seq <= ff.plan.Parent.Seq
}

// restore writes the fork's workspace and returns the session's fork start and that workspace.
// It never writes into the parent's workspace: a snapshot is written out of git into a new
// folder (gitws.Restore); failing that, the parent workspace as it is now is snapshotted and
// written out the same way.
func (ff *forkFlags) restore(id string, stderr io.Writer) (*live.ForkStart, string, error) {
	dir := ff.into
	if dir == "" {
		base, err := dataDir()
		if err != nil {
			return nil, "", fmt.Errorf("where to put the fork's workspace: %w (use --into DIR)", err)
		}
		dir = filepath.Join(base, "forks", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A fork that cannot be restored leaves no half-written folder: the folder goes again
	// (it was missing or empty before).
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, os.ErrNotExist)
	if _, err := gitws.NewFolder(dir); err != nil { // refuses a folder that holds anything
		return nil, "", err
	}
	ok := false
	defer func() {
		if !ok {
			removeForkDir(dir, created)
		}
	}()
	p := ff.plan
	parentWS := p.ParentStarted.Workspace
	var notes []string
	restored := ""
	var res gitws.Restored
	var err error
	if s := p.Snapshot; s != nil {
		res, err = gitws.Restore(ctx, parentWS, s.Private, s.Commit, dir, gitws.Options{})
		if err == nil {
			restored = fmt.Sprintf("snapshot %s: %s (#%d)", short(s.Commit), s.What, s.Seq)
			if s.After {
				restored += ", the first recorded after the fork point; no /apply came between, but hand edits between the two are in it"
			}
		} else if !errors.Is(err, gitws.ErrSnapshotGone) {
			return nil, "", err
		} else if b := fork.BundlePath(p.Parent.Path); fileExists(b) {
			// The git dir is gone (summit demo's, after it quit) but its commits were kept
			// beside the recording.
			res, err = gitws.RestoreBundle(ctx, b, s.Commit, dir, gitws.Options{})
			switch {
			case err == nil:
				restored = fmt.Sprintf("snapshot %s: %s (#%d), kept in %s", short(s.Commit), s.What, s.Seq, b)
			case !errors.Is(err, gitws.ErrSnapshotGone):
				return nil, "", err
			}
		}
		if restored == "" {
			gone := fmt.Sprintf("the recorded snapshot %s (%s) is gone from its repository (the git dir that held it was removed: summit gc, or git gc), and no bundle of it is kept beside the recording", short(s.Commit), s.What)
			notes = append(notes, gone)
			fmt.Fprintf(stderr, "summit: fork: %s\n", session.Sanitize(gone))
		}
	}
	if restored == "" {
		// No snapshot to start from: the parent workspace as it is now, which may hold later
		// changes than the fork point had.
		why := ""
		home, _ := os.UserHomeDir()
		_, imported := p.ParentStarted.Config["imported_from"]
		switch st, serr := os.Stat(parentWS); {
		case parentWS == "":
			why = "the recording names no workspace and holds no snapshot"
		case serr != nil || !st.IsDir():
			why = fmt.Sprintf("the parent workspace %q no longer exists and the recording holds no snapshot of it", parentWS)
		case filepath.Clean(parentWS) == "/" || home != "" && filepath.Clean(parentWS) == filepath.Clean(home):
			// A session run in the home folder (or /): copying it would copy everything.
			why = fmt.Sprintf("the parent workspace %q is a home or root folder, which summit does not copy", parentWS)
		case imported && !sameDir(ff.named, parentWS):
			// The source's cwd may be any repository on the machine: summit does not follow
			// it into a folder the user did not name.
			why = fmt.Sprintf("the imported session's folder %q was recorded by another tool, and summit copies it only when you name it (--workspace %s)", parentWS, parentWS)
		case imported && !gitws.InRepository(ctx, parentWS):
			// Another tool's session names a folder summit never snapshotted; without git's
			// ignore files nothing bounds what a copy would take.
			why = fmt.Sprintf("the imported session's folder %q is not a repository and the recording holds no snapshot of it", parentWS)
		}
		if why != "" {
			// Nothing to rebuild from: the fork starts in an empty folder.
			if res.Dir, err = gitws.NewFolder(dir); err != nil {
				return nil, "", err
			}
			restored = "an empty folder: " + why
		} else {
			commit, private, serr := gitws.SnapshotNow(ctx, parentWS, gitws.Options{SessionID: id})
			if serr != nil {
				return nil, "", serr
			}
			if res, err = gitws.Restore(ctx, parentWS, private, commit, dir, gitws.Options{}); err != nil {
				return nil, "", err
			}
			restored = "the parent workspace as it is now (the recording holds no snapshot at or before the fork point): files may differ from the fork point"
		}
		fmt.Fprintf(stderr, "summit: fork: %s\n", session.Sanitize(restored))
	}
	if res.Prefix != "" {
		notes = append(notes, fmt.Sprintf("the parent workspace is the folder %s of its repository: the parent's subagents' changes do not fit this workspace, and /apply and /converge refuse them (/retry makes them again)", res.Prefix))
	}
	fmt.Fprintf(stderr, "summit: fork of %s at #%d, in %s\n", session.Sanitize(p.Parent.SessionID), p.Parent.Seq, session.Sanitize(res.Dir))
	ok = true
	return &live.ForkStart{Plan: p, Restored: restored, Notes: notes, Foreign: res.Prefix != ""}, res.Dir, nil
}

// sameDir reports whether a and b name the same folder ("" names none).
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	x, errx := os.Stat(a)
	y, erry := os.Stat(b)
	return errx == nil && erry == nil && os.SameFile(x, y)
}

// removeForkDir undoes a fork's folder: removed when the fork made it, emptied when it was an
// empty folder before (a non-empty one is refused before anything is written).
func removeForkDir(dir string, created bool) {
	if created {
		os.RemoveAll(dir)
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// dataDir is $XDG_DATA_HOME/summit, else ~/.local/share/summit.
func dataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "summit"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "summit"), nil
}

// forkWorkbench opens the workbench on a fork of the recording at path, at seq, with the
// defaults of summit fork (the replay's F key).
func forkWorkbench(path string, seq uint64, stderr io.Writer) error {
	p, err := fork.Load(path, seq)
	if err != nil {
		return badFile(err)
	}
	f := &sessionFlags{workspace: ".", mode: "acceptEdits", parallel: 8, fork: &forkFlags{plan: p}}
	if _, imported := p.ParentStarted.Config["imported_from"]; imported {
		// Another tool's cwd is not a folder the user named here.
	} else if ws := p.ParentStarted.Workspace; ws != "" {
		if st, err := os.Stat(ws); err == nil && st.IsDir() {
			f.workspace = ws
		}
	}
	return workbench(f, stderr, forkHint(p, seq), nil)
}

// forkHint is the fork's first notice: the reviews still open there (fork.KeepsReview), else
// what to do with the subagents the fork interrupted.
func forkHint(p *fork.Plan, seq uint64) string {
	var open []string
	for _, cv := range p.State.Convergences {
		if fork.KeepsReview(cv) {
			for _, cf := range cv.Conflicts {
				if cf.Resolution == nil {
					open = append(open, cf.ID)
				}
			}
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("Forked at #%d: the review of %s is open (ctrl+o), /resolve settles it.", seq, strings.Join(open, ", "))
	}
	return fmt.Sprintf("Forked at #%d. /retry a subagent the fork interrupted, or /delegate anew.", seq)
}

func newFork(stdout, stderr io.Writer) *cobra.Command {
	f := &sessionFlags{}
	ff := &forkFlags{}
	var at uint64
	var scriptPath string
	c := &cobra.Command{
		Use:   "fork FILE --at SEQ [--script FILE|-]",
		Short: "Continue a recorded session live from any of its events",
		Long: `Fork starts a new session from the state of a recording at one of its events: every
subagent that had stopped keeps its result, every one still running is shown as interrupted
(/retry sa-N runs its task again, or with --agent-type another agent), a convergence waiting
for review stays open (/resolve cf-N settles it in the fork; one still computing is
interrupted, and /converge runs it again), and the workspace is
rebuilt from the recorded snapshots in a new folder (--into; default
~/.local/share/summit/forks/<session id>), never over your files.

The new recording starts with SessionForked, which names the parent (path, session id, seq and
a content hash), followed by the parent's events up to that point: it replays on its own.

Without --script the workbench opens on the fork; with it the script runs headless, as with
summit run. Config and agents come from --workspace (default: the parent's workspace when it
still exists); the fork's .summit/ (its recording, input history and inventory) is written in
the fork's folder, never in the directory it was run from.

When the parent's snapshot is gone from its git dir (summit demo removes its own when it
quits), the fork restores it from the bundle kept beside the recording (<id>.bundle); with
neither, it says so and starts from the parent's workspace as it is now.`,
		Example: "  summit fork testdata/recordings/valid.jsonl --at 42\n" +
			"  summit fork testdata/recordings/valid.jsonl --at 17 --script testdata/scripts/explore.summit --approve shell",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("at") {
				return usageErr("fork needs --at SEQ: the event to continue from (replay shows seqs; inspect counts them)\nusage: %s", cmd.UseLine())
			}
			p, err := fork.Load(args[0], at)
			if err != nil {
				return badFile(err)
			}
			ff.plan = p
			f.fork = ff
			_, imported := p.ParentStarted.Config["imported_from"]
			if cmd.Flags().Changed("workspace") {
				ff.named = f.workspace
			} else if ws := existingDir(p.ParentStarted.Workspace); !imported && ws != "" {
				f.workspace = ws
			}
			return headlessOrWorkbench(cmd, f, scriptPath, forkHint(p, at), stdout, stderr)
		},
	}
	c.Flags().Uint64Var(&at, "at", 0, "the seq of the event to continue from")
	c.Flags().StringVar(&scriptPath, "script", "", "run this script headless instead of opening the workbench (- for stdin)")
	c.Flags().StringVar(&ff.into, "into", "", "the new folder for the fork's workspace (missing or empty)")
	c.Flags().StringVar(&f.approve, "approve", "none", "headless: decide permission requests: none, shell or all")
	f.register(c)
	return c
}
