package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/blame"
	"github.com/summit-dev/summit/session/record"
)

func newBlame(stdout, stderr io.Writer) *cobra.Command {
	var recording, workspace string
	var asJSON, lenient bool
	c := &cobra.Command{
		Use:   "blame FILE [--recording R]",
		Short: "For each line of a file as summit left it: the subagent, convergence and resolution behind it",
		Long: `Blame reads a session recording and says, for each line of FILE, which subagent wrote
it, through which convergence and which conflict resolution, which /apply landed it, the
subagent's model, the seqs of those events, and the subagent's tokens and cost. Lines summit
did not land are "unchanged". Only the recording is read (see session/blame); the file as it
is now anchors the result, and lines summit landed that are no longer there are counted.

FILE is a path in the recording's workspace (relative to the current directory, or to the
workspace). The recording is --recording, else the newest one in the workspace's
.summit/sessions (--workspace, default the current directory).`,
		Example: "  summit blame README.md\n  summit blame README.md --recording .summit/sessions/$ID.jsonl --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if recording == "" {
				var err error
				if recording, err = newestRecording(workspace); err != nil {
					return err
				}
			}
			b := blame.New()
			if err := load(recording, record.ReadOptions{Lenient: lenient, NoText: true}, b.State(),
				func(_ *session.State, e session.Event) error { return b.Add(e) }, stderr); err != nil {
				return err
			}
			ws := b.State().Info.Workspace
			if ws == "" {
				ws = workspace
			}
			rel, err := workspacePath(ws, workspace, args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			var text []string
			if data, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(rel))); err == nil {
				text = blame.SplitLines(data)
			}
			rep := b.File(rel, text)
			if text == nil && len(rep.Applies) == 0 {
				paths := b.Paths()
				return badFile(fmt.Errorf("%s: no such file in %s, and %s landed nothing there%s", rel, ws, recording, landedIn(paths)))
			}
			if asJSON {
				return writeJSON(stdout, rep)
			}
			return blame.Render(stdout, rep)
		},
	}
	c.Flags().StringVar(&recording, "recording", "", "the recording to read (default: the newest in the workspace's .summit/sessions)")
	c.Flags().StringVar(&workspace, "workspace", ".", "the workspace whose .summit/sessions holds the default recording")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (session/blame.Report)")
	c.Flags().BoolVar(&lenient, "lenient", false, "skip and count malformed lines instead of failing")
	return c
}

func landedIn(paths []string) string {
	if len(paths) == 0 {
		return " (it landed no file)"
	}
	return " (it landed lines in " + strings.Join(paths, ", ") + ")"
}

// newestRecording is the recording in dir's .summit/sessions modified last.
func newestRecording(dir string) (string, error) {
	sessions := filepath.Join(dir, ".summit", "sessions")
	ms, _ := filepath.Glob(filepath.Join(sessions, "*.jsonl"))
	if len(ms) == 0 {
		return "", usageErr("no recording in %s: pass --recording FILE (or --workspace DIR)", sessions)
	}
	type rec struct {
		path string
		mod  int64
	}
	var rs []rec
	for _, m := range ms {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
			rs = append(rs, rec{m, st.ModTime().UnixNano()})
		}
	}
	if len(rs) == 0 {
		return "", usageErr("no recording in %s: pass --recording FILE", sessions)
	}
	slices.SortStableFunc(rs, func(a, b rec) int {
		switch {
		case a.mod > b.mod:
			return -1
		case a.mod < b.mod:
			return 1
		}
		return strings.Compare(b.path, a.path)
	})
	return rs[0].path, nil
}

// workspacePath is file as a slash path inside the recorded workspace ws: file relative to the
// current directory (or absolute) when that lies inside ws or inside the --workspace given,
// else file as a path in the workspace itself.
func workspacePath(ws, given, file string) (string, error) {
	for _, root := range []string{ws, given} {
		if root == "" {
			continue
		}
		absRoot, err1 := filepath.Abs(root)
		absFile, err2 := filepath.Abs(file)
		if err1 != nil || err2 != nil {
			continue
		}
		if r, err := filepath.Rel(absRoot, absFile); err == nil && r != "." && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r), nil
		}
	}
	if filepath.IsAbs(file) {
		return "", fmt.Errorf("%s is outside the recording's workspace %s", file, ws)
	}
	r := filepath.ToSlash(filepath.Clean(file))
	if r == "." || strings.HasPrefix(r, "../") || r == ".." {
		return "", fmt.Errorf("%s is not a file in the workspace %s", file, ws)
	}
	return r, nil
}
