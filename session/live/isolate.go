package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/converge"
	"github.com/summit-dev/summit/session/gitws"
	"github.com/summit-dev/summit/session/render"
)

// Isolation (DESIGN §11). A subagent whose tools can change files works in its own git
// worktree on a base snapshot of the workspace, never in the workspace: parallel builders
// cannot overwrite each other, and what each really changed is computed at its stop and
// recorded (SubagentChanges). /apply sa-N lands it with a three-way merge, /undo takes the
// last apply back, /discard drops a worktree. Read-only subagents read the main workspace.

// writingTools are the tools that can change files: a subagent with any of them is isolated.
var writingTools = []string{"write_file", "replace", "run_shell_command"}

func writes(toolset []string) bool {
	for _, t := range toolset {
		if slices.Contains(writingTools, t) {
			return true
		}
	}
	return false
}

// gitTimeout bounds one git step of isolation (a snapshot, a change set, an apply).
const gitTimeout = 2 * time.Minute

// isolated reports whether a subagent with these tools works in its own worktree.
func (x *Orchestrator) isolated(toolset []string) bool {
	return !x.o.NoIsolation && writes(toolset)
}

// repo opens the workspace's git layer on first use, so sessions without writing subagents
// never need git.
func (x *Orchestrator) repo() (*gitws.Repo, error) {
	x.repoMu.Lock()
	defer x.repoMu.Unlock()
	if x.git != nil || x.gitErr != nil {
		return x.git, x.gitErr
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	x.mu.Lock()
	bases, applies := usedIDs(x.state)
	x.mu.Unlock()
	x.git, x.gitErr = gitws.Open(ctx, x.sandbox.Root(), gitws.Options{SessionID: x.gitSession(), CacheDir: x.o.CacheDir,
		BasesUsed: bases, AppliesUsed: applies})
	if x.gitErr != nil {
		x.gitErr = fmt.Errorf("subagents that change files work in their own git worktree, and that failed: %w", x.gitErr)
	}
	return x.git, x.gitErr
}

// gitSession names the session's refs and worktrees: its id, or, when worktrees that an
// earlier run of the same (deterministic) id kept are still there, the id with .2, .3, …
func (x *Orchestrator) gitSession() string {
	cache := x.o.CacheDir
	if cache == "" {
		cache, _ = gitws.DefaultCacheDir()
	}
	id := x.o.SessionID
	for n := 2; cache != "" && n < 1000; n++ {
		if _, err := os.Stat(filepath.Join(cache, "worktrees", id)); err != nil {
			break
		}
		id = fmt.Sprintf("%s.%d", x.o.SessionID, n)
	}
	return id
}

// isolate gives a spawned subagent its worktree: a snapshot of the workspace now (shared with
// every subagent delegated while it did not change) and a detached worktree on it. Its tools
// are rooted there.
func (x *Orchestrator) isolate(s *sub) error {
	r, err := x.repo()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	base, err := r.Snapshot(ctx)
	if err != nil {
		return err
	}
	wt, err := r.AddWorktree(ctx, base, s.id)
	if err != nil {
		return err
	}
	opts := x.o.Tools
	opts.ConfineWrites = true                                                             // its shell writes only in its worktree (Landlock, where the kernel has it)
	opts.Hidden = append(summitDirs(), filepath.Join(x.sandbox.Root(), tools.PrivateDir)) // and cannot read .summit/ or summit's own directories
	opts.Network = s.def != nil && slices.Contains(s.def.Tools, agents.ToolWebFetch)      // the network only for an agent that may fetch
	opts.Hidden = append(opts.Hidden, x.otherSummitPaths(wt.Root())...)                   // nor what summit knows of elsewhere (jail.go)
	sb, err := tools.New(wt.Root(), opts)
	if err != nil {
		_ = r.Remove(ctx, wt)
		return err
	}
	s.wt, s.sandbox = wt, sb
	_, err = x.emit(s.id, session.SubagentIsolated{Base: base.ID, BaseCommit: base.Commit, Worktree: wt.Path, Private: r.Private()})
	return err
}

// captureChanges records what an isolated subagent really changed, whatever its outcome.
func (x *Orchestrator) captureChanges(s *sub) {
	if s.wt == nil {
		return
	}
	if s.sandbox != nil {
		_ = s.sandbox.Close() // its private caches; a later command makes them again
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cs, err := x.git.Changes(ctx, s.wt)
	ev := changeEvent(cs, s.wt.Base.ID)
	if err != nil {
		ev = session.SubagentChanges{Base: s.wt.Base.ID, BaseCommit: s.wt.Base.Commit, Files: []session.FileChange{}, Error: err.Error()}
	}
	_, _ = x.emit(s.id, ev)
}

// closeIsolation removes the session's worktrees (unless kept) when the session closes.
func (x *Orchestrator) closeIsolation() {
	x.repoMu.Lock()
	r := x.git
	x.repoMu.Unlock()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	_ = r.Close(ctx, x.o.KeepWorktrees)
}

// diffCmd is /diff: the recorded changes, from the event log (no worktree needed).
func (x *Orchestrator) diffCmd(line string, c commands.Diff) (Reply, error) {
	x.mu.Lock()
	sa := x.subCopyLocked(c.ID)
	var cv *session.Convergence
	if got := x.state.Convergence(c.ID); got != nil {
		cp := *got // read after mu is released: the fold keeps writing the live record
		cv = &cp
	}
	ids := x.knownIDs()
	x.mu.Unlock()
	var text string
	switch {
	case sa == nil && cv == nil:
		return x.rejectf(line, c, "unknown id %s%s", c.ID, didYouMean(c.ID, ids))
	case sa != nil && sa.Changes == nil && sa.Isolation == nil:
		return x.rejectf(line, c, "%s works in the main workspace (it cannot change files): it has no changes of its own", sa.ID)
	case sa != nil && sa.Changes == nil:
		return x.rejectf(line, c, "%s is still running: its changes are recorded when it stops", sa.ID)
	case sa != nil:
		t, err := diffText(sa.Changes.Files, c.Path)
		if err != nil {
			return x.rejectf(line, c, "%v", err)
		}
		text = t
	case cv.Batch == nil:
		// Apply reviews, results in another format, convergences still computing: what their
		// members changed, and an apply review's conflicts and settled result (verify.go).
		t, err := x.convDiffText(cv, c.Path)
		if err != nil {
			return x.rejectf(line, c, "%v", err)
		}
		text = t
	default:
		var b strings.Builder
		for _, p := range cv.Batch.Patches {
			if c.Path == "" || p.Path == c.Path {
				b.WriteString(strings.TrimRight(p.Diff, "\n") + "\n")
			}
		}
		if b.Len() == 0 {
			return x.rejectf(line, c, "%s changes no file %s", cv.ID, c.Path)
		}
		text = b.String()
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	return Reply{Output: text}, nil
}

// diffText is a change set as text: a line per file, then its diff.
func diffText(files []session.FileChange, path string) (string, error) {
	var b strings.Builder
	var names []string
	for _, f := range files {
		names = append(names, f.Path)
		if path != "" && f.Path != path && f.OldPath != path {
			continue
		}
		b.WriteString(render.FileChangeLine(f) + "\n")
		if f.Diff != "" {
			b.WriteString(strings.TrimRight(f.Diff, "\n") + "\n")
		}
	}
	switch {
	case len(files) == 0:
		return "no changes\n", nil
	case b.Len() == 0:
		return "", fmt.Errorf("no change to %s%s (changed: %s)", path, didYouMean(path, names), strings.Join(names, ", "))
	}
	return b.String(), nil
}

// applySub is /apply sa-N: a three-way merge of what the subagent changed (base → result)
// into the workspace as it is now. Clean merges land, all files or none; overlapping edits
// are named with their merged text and nothing is written.
func (x *Orchestrator) applySub(line string, c commands.Apply) (Reply, error) {
	x.mu.Lock()
	sa := x.subCopyLocked(c.SubagentID)
	ids := x.subIDs()
	mode := agents.PermissionMode(x.state.Info.PermissionMode)
	already := ""
	for _, a := range x.state.Applies {
		if sa != nil && a.Source == sa.ID && !a.Undone {
			already = a.ApplyID
		}
	}
	x.mu.Unlock()
	switch {
	case sa == nil:
		return x.rejectf(line, c, "unknown subagent %s%s", c.SubagentID, didYouMean(c.SubagentID, ids))
	case mode.Rank() < agents.ModeAcceptEdits.Rank():
		return x.rejectf(line, c, "/apply writes files and needs acceptEdits or higher; this session runs in %s", mode)
	case sa.Isolation == nil:
		return x.rejectf(line, c, "%s worked in the main workspace: it has no isolated changes to apply", sa.ID)
	case x.foreignChanges(sa.ID) != "":
		return x.rejectf(line, c, "%s", x.foreignChanges(sa.ID))
	case sa.Changes == nil:
		return x.rejectf(line, c, "%s is still running; /wait %s, then /apply it", sa.ID, sa.ID)
	case sa.Changes.Error != "":
		return x.rejectf(line, c, "%s's changes could not be read: %s", sa.ID, sa.Changes.Error)
	case len(sa.Changes.Files) == 0:
		return x.rejectf(line, c, "%s changed nothing", sa.ID)
	}
	if already != "" {
		return x.rejectf(line, c, "%s is already applied (%s); /undo takes it back", sa.ID, already)
	}
	r, err := x.repo()
	if err != nil {
		return x.rejectf(line, c, "%v", err)
	}
	ck, rep, done, err := x.precheck(line, c, sa.ID, sa, sa.Changes.BaseCommit, sa.Changes.ResultCommit) // verify.go
	if done {
		return rep, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	applied, err := r.Apply(ctx, sa.Changes.BaseCommit, sa.Changes.ResultCommit, sa.ID)
	if ce := (*gitws.ConflictError)(nil); errors.As(err, &ce) {
		return x.openApplyReview(line, c, sa.ID, []string{sa.ID}, sa.Changes.BaseCommit, sa.Changes.ResultCommit, ce)
	}
	if ok, why := x.landedAsChecked(ck, applied); err == nil && !ok {
		return x.rejectf(line, c, "nothing applied: %s", why)
	}
	if rep, ok, err := x.land(line, c, sa.ID, "", applied, err); !ok {
		return rep, err
	}
	return Reply{Output: fmt.Sprintf("%s: %s applied: %s (/undo takes it back)", applied.ID, sa.ID, strings.Join(applied.Files, ", "))}, nil
}

// land records a successful Apply of source's changes (CommandIssued, ChangesApplied) and
// reports ok; an overlap with the workspace, or any other failure, rejects the line whole
// (nothing was written) and names each overlapping file with its conflict-marked merge.
func (x *Orchestrator) land(line string, c commands.Apply, source, convergence string, applied *gitws.Applied, err error) (Reply, bool, error) {
	var ce *gitws.ConflictError
	switch {
	case errors.As(err, &ce):
		var b strings.Builder
		fmt.Fprintf(&b, "/apply %s: nothing applied: %s the workspace as it is now:\n", source, overlapWord(len(ce.Conflicts)))
		for _, cf := range ce.Conflicts {
			fmt.Fprintf(&b, "  %s (%s)\n", cf.Path, strings.Join(cf.Types, ", "))
			if cf.Merged != "" {
				b.WriteString(indentLines(cf.Merged, "    "))
			}
		}
		b.WriteString("edit the workspace so they no longer overlap, or /apply the other side first")
		rep, rerr := x.reject(line, b.String(), "") // semantic: no usage line (see rejectf)
		return rep, false, rerr
	case err != nil:
		rep, rerr := x.rejectf(line, c, "nothing applied: %v", err)
		return rep, false, rerr
	case len(applied.Files) == 0 && x.noPlaybookOps(convergence):
		// The merge kept the workspace as it is (it already has every change): nothing was
		// written, so there is nothing to record and no undo step to make, and the apply's
		// number goes back (the next apply is not apply-2 after a refused apply-1).
		if r, rerr := x.repo(); rerr == nil {
			ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
			_ = r.Discard(ctx, applied) // at worst a number is skipped
			cancel()
		}
		rep, rerr := x.rejectf(line, c, "nothing applied: %s would change no file (the workspace already has its changes, or a review kept the workspace's side); no undo step was recorded", source)
		return rep, false, rerr
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, false, err
	}
	x.mu.Lock()
	x.applied = append(x.applied, applied)
	x.mu.Unlock()
	_, err = x.emit("", session.ChangesApplied{ApplyID: applied.ID, Source: source, Files: applied.Files,
		PreCommit: applied.Pre, PostCommit: applied.Post, ConvergenceID: convergence})
	if err == nil && convergence != "" {
		_, err = x.emit("", session.DeltaBatchApplied{ConvergenceID: convergence, Files: applied.Files})
	}
	return Reply{}, err == nil, err
}

// noPlaybookOps reports whether an apply of convergence ("" = none) lands no playbook
// operation: with no file either, such an apply would change nothing.
func (x *Orchestrator) noPlaybookOps(convergence string) bool {
	if convergence == "" {
		return true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	cv := x.state.Convergence(convergence)
	return cv == nil || cv.Batch == nil || len(cv.Batch.Operations) == 0
}

func overlapWord(n int) string {
	if n == 1 {
		return "1 file overlaps"
	}
	return session.Plural(n, "file") + " overlap"
}

func indentLines(s, pre string) string {
	s = strings.TrimRight(s, "\n")
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre) + "\n"
}

// undo is /undo: the last apply of real changes, restored byte for byte, unless a file it
// touched was edited since (then nothing changes and the file is named).
func (x *Orchestrator) undo(line string, c commands.Undo) (Reply, error) {
	x.mu.Lock()
	var last *gitws.Applied
	for i := len(x.applied) - 1; i >= 0; i-- {
		if a := x.state.FindApply(x.applied[i].ID); a != nil && !a.Undone {
			last = x.applied[i]
			break
		}
	}
	x.mu.Unlock()
	if last == nil {
		return x.rejectf(line, c, "nothing to undo: no /apply of a subagent's changes is in effect")
	}
	if later := x.playbookSince(last.ID); later != "" {
		return x.rejectf(line, c, "%s cannot be undone: %s changed the playbook since; nothing was changed", last.ID, later)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	var ee *gitws.EditedError
	if err := x.git.Undo(ctx, last); errors.As(err, &ee) {
		return x.rejectf(line, c, "%s cannot be undone: edited since it was applied: %s; nothing was changed", last.ID, strings.Join(ee.Files, ", "))
	} else if err != nil {
		return x.rejectf(line, c, "%s cannot be undone: %v", last.ID, err)
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	if _, err := x.emit("", session.ApplyUndone{ApplyID: last.ID, Files: last.Files}); err != nil {
		return Reply{}, err
	}
	return Reply{Output: fmt.Sprintf("%s undone: %s restored", last.ID, strings.Join(last.Files, ", "))}, nil
}

// playbookSince names a convergence whose playbook operations were applied after the apply
// id, which undoing it would lose ("" when none).
func (x *Orchestrator) playbookSince(id string) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	a := x.state.FindApply(id)
	if a == nil || a.ConvergenceID == "" {
		return ""
	}
	for _, cv := range x.state.Convergences {
		if cv.ID != a.ConvergenceID && cv.Applied && cv.AppliedSeq > a.Seq {
			return cv.ID
		}
	}
	return ""
}

// discard is /discard sa-N: the worktree goes; the recorded changes stay.
func (x *Orchestrator) discard(line string, c commands.Discard) (Reply, error) {
	s, sa, ids := x.subNamed(c.SubagentID)
	switch {
	case sa == nil || s == nil:
		return x.rejectf(line, c, "unknown subagent %s%s", c.SubagentID, didYouMean(c.SubagentID, ids))
	case s.wt == nil:
		return x.rejectf(line, c, "%s has no worktree: it worked in the main workspace", sa.ID)
	case sa.Discarded:
		return x.rejectf(line, c, "%s's worktree is already discarded", sa.ID)
	case !sa.Stopped:
		return x.rejectf(line, c, "%s is still running; /cancel %s first", sa.ID, sa.ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	if err := x.git.Remove(ctx, s.wt); err != nil {
		return x.rejectf(line, c, "%v", err)
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	if _, err := x.emit(sa.ID, session.WorktreeDiscarded{Reason: "/discard"}); err != nil {
		return Reply{}, err
	}
	return Reply{Output: sa.ID + "'s worktree is gone; its recorded changes stay (/diff " + sa.ID + ")"}, nil
}

// applyConvReal is /apply cv-N when the members really changed files: the resolved result is
// composed on the members' base with git (files a single member changed are taken whole from
// its result commit; merged files are patched) and landed like /apply sa-N, three-way and
// all or nothing. The DeltaBatch's playbook operations apply with it.
func (x *Orchestrator) applyConvReal(line string, c commands.Apply, cv *session.Convergence, res *converge.Result, book []session.PlaybookEntry) (Reply, error) {
	x.mu.Lock()
	results := map[string]string{}
	base, baseN := "", -1
	for _, id := range cv.Members {
		sa := x.state.Subagent(id)
		if sa == nil || sa.Changes == nil || sa.Changes.Error != "" {
			continue
		}
		ch := sa.Changes
		if rb := sa.Rebased; rb != nil && rb.ConvergenceID == cv.ID {
			ch = &rb.SubagentChanges // brought onto the newest base for this convergence
		}
		results[id] = ch.ResultCommit
		var n int
		fmt.Sscanf(ch.Base, "base-%d", &n)
		if n > baseN {
			base, baseN = ch.BaseCommit, n
		}
	}
	x.mu.Unlock()
	r, err := x.repo()
	if err != nil {
		return x.rejectf(line, c, "%v", err)
	}
	var patch strings.Builder
	var takes []gitws.Take
	for _, f := range res.Files {
		if from, ok := results[res.Sources[f.Path]]; ok {
			takes = append(takes, gitws.Take{Path: f.Path, OldPath: f.OldPath, From: from})
			continue
		}
		if f.Truncated {
			return x.rejectf(line, c, "nothing applied: %s was merged from cut diffs; /apply one member's changes instead", f.Path)
		}
		patch.WriteString(strings.TrimRight(f.Diff, "\n") + "\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	result, err := r.Compose(ctx, base, patch.String(), takes)
	if err != nil {
		return x.rejectf(line, c, "nothing applied: %v", err)
	}
	if _, err := session.ApplyPlaybook(book, cv.Batch.Operations, cv.ID); err != nil {
		return x.rejectf(line, c, "nothing applied: %v", err)
	}
	ck, rep, done, err := x.precheck(line, c, cv.ID, nil, base, result) // verify.go
	if done {
		return rep, err
	}
	ctx, cancel = context.WithTimeout(context.Background(), gitTimeout) // the check may have taken long
	defer cancel()
	applied, err := r.Apply(ctx, base, result, cv.ID)
	if ce := (*gitws.ConflictError)(nil); errors.As(err, &ce) {
		return x.openApplyReview(line, c, cv.ID, cv.Members, base, result, ce)
	}
	if ok, why := x.landedAsChecked(ck, applied); err == nil && !ok {
		return x.rejectf(line, c, "nothing applied: %s", why)
	}
	if rep, ok, err := x.land(line, c, cv.ID, cv.ID, applied, err); !ok {
		return rep, err
	}
	return Reply{Output: fmt.Sprintf("%s: %s applied: %s, %s (/undo takes the files back)", applied.ID, cv.ID,
		session.Plural(len(applied.Files), "file"), session.Plural(len(cv.Batch.Operations), "playbook operation"))}, nil
}

// rebaseMembers brings the changes of members that started from an older base onto the
// newest one with git's merge machinery, records each (ChangesRebased) and marks the member
// Rebased, so the engine merges change sets of one base. A member whose changes overlap what
// moved between the bases keeps its own: the engine reports that as a base conflict.
func (x *Orchestrator) rebaseMembers(cvID string, members []converge.Member) {
	newest, n := "", -1
	var newestCommit string
	for _, m := range members {
		if m.Changes == nil || m.Changes.Error != "" {
			continue
		}
		var k int
		fmt.Sscanf(m.Changes.Base, "base-%d", &k)
		if k > n {
			newest, newestCommit, n = m.Changes.Base, m.Changes.BaseCommit, k
		}
	}
	for i, m := range members {
		ch := m.Changes
		if ch == nil || ch.Error != "" || ch.Base == newest || ch.BaseCommit == newestCommit || x.git == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
		cs, err := x.git.Rebase(ctx, ch.BaseCommit, ch.ResultCommit, newestCommit, m.ID)
		cancel()
		if err != nil {
			continue // the engine's base conflict says it
		}
		rb := session.ChangesRebased{ConvergenceID: cvID, SubagentChanges: changeEvent(cs, newest)}
		if _, err := x.emit(m.ID, rb); err != nil {
			return
		}
		members[i].Changes, members[i].Rebased = &rb.SubagentChanges, true
	}
}

// changeEvent is a gitws change set as recorded.
func changeEvent(cs gitws.ChangeSet, base string) session.SubagentChanges {
	ev := session.SubagentChanges{Base: base, BaseCommit: cs.Base, ResultCommit: cs.Result, Added: cs.Added, Removed: cs.Removed,
		Truncated: cs.Truncated, Outside: cs.Outside, Files: []session.FileChange{}}
	for _, f := range cs.Files {
		ev.Files = append(ev.Files, session.FileChange{Path: f.Path, OldPath: f.OldPath, Kind: string(f.Kind), Binary: f.Binary,
			Added: f.Added, Removed: f.Removed, OldMode: f.OldMode, NewMode: f.NewMode, Diff: f.Diff, Truncated: f.Truncated})
	}
	return ev
}

// summitDirs are summit's own directories outside any workspace: the user's config and agent
// files (~/.config/summit) and the demo's recordings (~/.local/share/summit). A confined shell
// cannot read them; its writes are confined to its worktree anyway.
func summitDirs() []string {
	var dirs []string
	if d, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "summit"))
	}
	data := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(data) {
		if home, err := os.UserHomeDir(); err == nil {
			data = filepath.Join(home, ".local", "share")
		}
	}
	if data != "" {
		dirs = append(dirs, filepath.Join(data, "summit"))
	}
	return dirs
}
