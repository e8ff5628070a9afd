package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/fork"
	"github.com/summit-dev/summit/session/gitws"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/ui"
)

// newGC is 'summit gc': the worktrees, private git dirs and refs that sessions left behind (a
// crash, or --keep-worktrees), listed first, then removed unless --dry-run. What a recording on
// disk still needs to fork (the private git dir holding its snapshots) is kept, and said so.
func newGC(stdout, stderr io.Writer) *cobra.Command {
	var dry, asJSON bool
	c := &cobra.Command{
		Use:   "gc",
		Short: "List and remove the worktrees and refs that ended sessions left behind",
		Long: `Subagents that change files work in git worktrees under the cache dir
($XDG_CACHE_HOME/summit, else ~/.cache/summit), with refs under refs/summit/<session>/ in the
workspace's repository. A session removes them when it closes; a crash or --keep-worktrees
leaves them. gc lists every leftover of a session that is not running, with the space it
takes, then removes it. Running sessions are never touched, nor anything outside
refs/summit/ and the cache dir.

A workspace that is not a git repository has a private git dir in the cache; it holds the
snapshots its recordings fork from, so it is a leftover only once its workspace is gone, and
even then gc keeps it while a recording on disk (summit demo's and forks' recordings, and the
recordings beside the sessions' workspaces) still names that workspace, and says which.
summit demo keeps its snapshots in a bundle beside its recording (<id>.bundle); gc removes a
bundle whose recording is gone. A replay that folded a recording to its end keeps that state in
the cache dir (replay/*.ckpt), so the next replay of the recording seeks at once; gc removes
the ones whose recording is gone or changed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cache, err := gitws.DefaultCacheDir()
			if err != nil {
				return badFile(err)
			}
			left, err := gitws.Leftovers(ctx, cache)
			if err != nil {
				return badFile(err)
			}
			recs := knownRecordings()
			var remove []gitws.Leftover
			var kept []string
			demoDir := ""
			if data, err := dataDir(); err == nil {
				demoDir = filepath.Join(data, "demo")
			}
			for i, l := range left {
				if l.SessionID == "" && l.Workspace != "" {
					names := recordingsOf(l.Workspace, recs)
					if len(names) > 0 && !dry && allIn(demoDir, names) {
						// A demo's private git dir, left by a summit demo older than its
						// bundles (or one whose bundle could not be written): its snapshots go
						// into bundles beside its recordings, as the demo does now, and it goes.
						if err := bundleFor(ctx, l.Workspace, names); err == nil {
							fmt.Fprintln(stdout, session.Sanitize(fmt.Sprintf("kept the snapshots of %s in %s", l.Workspace, strings.Join(bundlesOf(names), ", "))))
							names = nil
						}
					}
					if len(names) > 0 {
						left[i].KeptFor = names
						kept = append(kept, fmt.Sprintf("kept: %s, %s: the snapshots of %s (gone), which %s still fork from: %s (remove %s, then summit gc)",
							l.Dir, gitws.HumanBytes(l.Bytes), l.Workspace, plural(len(names), "recording", "recordings"), strings.Join(names, ", "), them(len(names))))
						continue
					}
				}
				remove = append(remove, l)
			}
			orphans := orphanBundles(recs)
			// Replay sidecars (the end state of a recording, for its next replay) whose
			// recording is gone or changed.
			var stale []ui.Sidecar
			if cars, err := ui.Sidecars(); err == nil {
				for _, c := range cars {
					if c.Stale != "" {
						stale = append(stale, c)
					}
				}
			}
			if asJSON {
				for _, b := range orphans {
					left = append(left, gitws.Leftover{Reason: "bundle of a recording that is gone", Dir: b, Bytes: gitws.DirSize(b)})
				}
				for _, c := range stale {
					left = append(left, gitws.Leftover{Reason: "replay sidecar: " + c.Stale, Workspace: c.Recording, Dir: c.Path, Bytes: c.Bytes})
				}
				if left == nil {
					left = []gitws.Leftover{}
				}
				if err := writeJSON(stdout, left); err != nil {
					return err
				}
			} else {
				if len(remove) == 0 && len(orphans) == 0 && len(stale) == 0 {
					fmt.Fprintln(stdout, "nothing to clean: no session left worktrees or refs behind")
				}
				var total int64
				for _, l := range remove {
					total += l.Bytes
					fmt.Fprintln(stdout, session.Sanitize(l.String())) // paths and ref names as found
				}
				for _, b := range orphans {
					n := gitws.DirSize(b)
					total += n
					fmt.Fprintln(stdout, session.Sanitize(fmt.Sprintf("bundle %s of a recording that is gone, %s", b, gitws.HumanBytes(n))))
				}
				for _, c := range stale {
					total += c.Bytes
					fmt.Fprintln(stdout, session.Sanitize(fmt.Sprintf("replay sidecar %s of %s (%s), %s", c.Path, c.Recording, c.Stale, gitws.HumanBytes(c.Bytes))))
				}
				for _, k := range kept {
					fmt.Fprintln(stdout, session.Sanitize(k))
				}
				if total > 0 {
					fmt.Fprintf(stdout, "%s in all\n", gitws.HumanBytes(total))
				}
			}
			if dry || len(remove) == 0 && len(orphans) == 0 && len(stale) == 0 {
				return nil
			}
			var errs []error
			if len(remove) > 0 {
				errs = append(errs, gitws.GC(ctx, cache, remove))
			}
			for _, b := range orphans {
				errs = append(errs, os.Remove(b))
			}
			for _, c := range stale {
				errs = append(errs, os.Remove(c.Path))
			}
			if err := errors.Join(errs...); err != nil {
				return badFile(err)
			}
			fmt.Fprintf(stderr, "summit: removed %s\n", plural(len(remove)+len(orphans)+len(stale), "leftover", "leftovers"))
			return nil
		},
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "only list what would be removed")
	c.Flags().BoolVar(&asJSON, "json", false, "list as JSON")
	return c
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// noteLeftovers tells, when a session starts in ws, what earlier sessions of that workspace left
// behind and the space it takes, once: the leftovers it named are remembered in the cache
// (noticed/<hash of ws>), and it speaks again only when there is one it has not named. Other
// workspaces' leftovers are summit gc's to list.
func noteLeftovers(ws string, stderr io.Writer) {
	cache, err := gitws.DefaultCacheDir()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	left, err := gitws.LeftoversOf(ctx, cache, ws)
	if err != nil || len(left) == 0 {
		return
	}
	var keys []string
	var size int64
	for _, l := range left {
		keys = append(keys, l.Key())
		size += l.Bytes
	}
	slices.Sort(keys)
	sum := sha256.Sum256([]byte(ws))
	mark := filepath.Join(cache, "noticed", hex.EncodeToString(sum[:8]))
	if b, err := os.ReadFile(mark); err == nil {
		seen := strings.Split(strings.TrimSpace(string(b)), "\n")
		if !slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(seen, k) }) {
			return // named before, and nothing new
		}
	}
	fmt.Fprintf(stderr, "summit: ended sessions of this workspace left %s (%s) in %s ('summit gc' lists and removes them)\n",
		plural(len(left), "leftover", "leftovers"), gitws.HumanBytes(size), session.Sanitize(cache))
	if os.MkdirAll(filepath.Dir(mark), 0o700) == nil {
		_ = os.WriteFile(mark, []byte(strings.Join(keys, "\n")+"\n"), 0o600)
	}
}

// demoCleanup is summit demo's end: the commits its recording names are kept in a bundle beside
// the recording (so forks of it still restore their files), then the private git dir of its
// temporary workspace is removed: the demo leaves nothing in the cache. When the bundle cannot
// be written the git dir stays (a leftover summit gc lists) and the reason is told.
func demoCleanup(f *sessionFlags, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if f.recorded != "" {
		commits, err := fork.Commits(f.recorded)
		if err == nil && len(commits) > 0 {
			_, err = gitws.KeepBundle(ctx, f.workspace, commits, fork.BundlePath(f.recorded), gitws.Options{})
		}
		if err != nil {
			fmt.Fprintf(stderr, "summit: the demo's snapshots could not be kept beside its recording, so its private git dir stays ('summit gc' removes it): %s\n", session.Sanitize(err.Error()))
			return
		}
	}
	if _, err := gitws.RemovePrivate(f.workspace, gitws.Options{}); err != nil {
		fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(err.Error()))
	}
}

// knownRecordings are the recordings on disk summit knows where to find: summit demo's, the
// forks' (each in its own folder's .summit/sessions), and those in .summit/sessions of every
// workspace a session record or private git dir in the cache names.
func knownRecordings() []string {
	var out []string
	if data, err := dataDir(); err == nil {
		out, _ = filepath.Glob(filepath.Join(data, "demo", "*.jsonl"))
		forks, _ := filepath.Glob(filepath.Join(data, "forks", "*", ".summit", "sessions", "*.jsonl"))
		out = append(out, forks...)
	}
	if cache, err := gitws.DefaultCacheDir(); err == nil {
		seen := map[string]bool{}
		var names []string
		recs, _ := filepath.Glob(filepath.Join(cache, "sessions", "*", "lock"))
		for _, r := range recs {
			var rec struct {
				Workspace string `json:"workspace"`
			}
			if b, err := os.ReadFile(r); err == nil && json.Unmarshal(b, &rec) == nil {
				names = append(names, rec.Workspace)
			}
		}
		dirs, _ := filepath.Glob(filepath.Join(cache, "repos", "*", "summit-workspace"))
		for _, d := range dirs {
			if b, err := os.ReadFile(d); err == nil {
				names = append(names, strings.TrimSpace(string(b)))
			}
		}
		for _, ws := range names {
			if ws == "" || seen[ws] {
				continue
			}
			seen[ws] = true
			ms, _ := filepath.Glob(filepath.Join(ws, ".summit", "sessions", "*.jsonl"))
			out = append(out, ms...)
		}
	}
	return out
}

// recordingsOf are the recordings among recs whose session ran in workspace (a fork's: whose
// parent did, since the fork restored from the parent's snapshots).
func recordingsOf(workspace string, recs []string) []string {
	var out []string
	for _, r := range recs {
		if slices.Contains(recordingWorkspaces(r), workspace) {
			out = append(out, r)
		}
	}
	return out
}

// recordingWorkspaces reads the first event of a recording: the workspace it ran in, and for
// a fork its parent's too. Nothing on an unreadable file.
func recordingWorkspaces(path string) []string {
	f, err := record.OpenRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, 4<<20), 64<<10).ReadSlice('\n')
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(line) == 0 {
		return nil
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		b, _ := io.ReadAll(io.LimitReader(io.MultiReader(strings.NewReader(string(line)), f), 4<<20))
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			line = b[:i+1]
		}
	}
	e, err := record.DecodeLine(line)
	if err != nil {
		return nil
	}
	switch d := e.Data.(type) {
	case session.SessionStarted:
		return []string{d.Workspace}
	case session.SessionForked:
		return []string{d.Started.Workspace, d.ParentStarted.Workspace}
	}
	return nil
}

// orphanBundles are the bundles in summit demo's recording folder whose recording is gone.
func orphanBundles(recs []string) []string {
	data, err := dataDir()
	if err != nil {
		return nil
	}
	bs, _ := filepath.Glob(filepath.Join(data, "demo", "*.bundle"))
	var out []string
	for _, b := range bs {
		if !slices.ContainsFunc(recs, func(r string) bool { return fork.BundlePath(r) == b }) {
			out = append(out, b)
		}
	}
	return out
}

func allIn(dir string, paths []string) bool {
	for _, p := range paths {
		if dir == "" || filepath.Dir(p) != dir {
			return false
		}
	}
	return true
}

func bundlesOf(recs []string) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fork.BundlePath(r))
	}
	return out
}

// bundleFor writes, beside each recording, the bundle of the commits it names that the
// workspace's (private) git dir holds.
func bundleFor(ctx context.Context, workspace string, recs []string) error {
	for _, r := range recs {
		commits, err := fork.Commits(r)
		if err != nil {
			return err
		}
		if _, err := gitws.KeepBundle(ctx, workspace, commits, fork.BundlePath(r), gitws.Options{}); err != nil {
			return err
		}
	}
	return nil
}
