package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/gitws"
	"github.com/summit-dev/summit/session/render"
)

// Preview and verification (issue 27). Before an /apply touches the workspace, summit can
// build exactly what it would leave there (gitws.Preview: Apply's own merge, written nowhere)
// and
//   - --dry-run: show the files that would change, with their diffs, and stop;
//   - --verify CMD, or the config's verify: command: check the merged result out in a scratch
//     worktree outside the workspace and run CMD there with a subagent's confined shell
//     (writes only in that worktree, .summit/ and summit's own directories unreadable,
//     secrets scrubbed from the environment). The outcome is recorded as VerifyRan, summit's
//     measurement, before the /apply's own record. A failure refuses the apply (nothing is
//     written) unless --force, which VerifyRan records as forced.
// What lands is what was checked: Apply merges again, and when the workspace it merged into
// is not the one the check saw (edited while the command ran), the apply is taken back and
// refused.

// verifyTail is how much of a verify command's output is kept (its end: test failures are
// reported last).
const verifyTail = 4000

// verifyMaxOutput is what the shell keeps of a verify command's output before the tail is cut.
const verifyMaxOutput = 1 << 20

// verifyN numbers the scratch worktrees (their names must differ within a repository).
var verifyN atomic.Int64

// check is an /apply's preview and verification, when it asked for either.
type check struct {
	preview *gitws.Preview
	verify  *session.VerifyRan // nil when no command ran
}

// verifyCommand is the command to run for an /apply of target (an agent's, for sa-N), and
// where it came from: --verify, else the config's.
func (x *Orchestrator) verifyCommand(c commands.Apply, sa *session.Subagent) (cmd, source string) {
	if c.Verify != "" {
		return c.Verify, "flag"
	}
	v := x.o.Verify
	if sa != nil {
		return v.CommandFor(sa.AgentName, sa.AgentType), "config"
	}
	return v.Command, "config"
}

// precheck runs an /apply's --dry-run and verification on the change base→result. done is
// set when the command is over (a dry run reported, or a failed check refused); otherwise the
// caller applies and then calls landedAsChecked. A merge that conflicts with the workspace is
// left to the caller (nil check), which opens its review as before; a dry run reports it.
func (x *Orchestrator) precheck(line string, c commands.Apply, target string, sa *session.Subagent, base, result string) (ck *check, rep Reply, done bool, err error) {
	cmd, source := x.verifyCommand(c, sa)
	if !c.DryRun && cmd == "" {
		return nil, Reply{}, false, nil
	}
	r, err := x.repo()
	if err != nil {
		rep, err := x.rejectf(line, c, "%v", err)
		return nil, rep, true, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	p, perr := r.Preview(ctx, base, result, target)
	cancel()
	var ce *gitws.ConflictError
	switch {
	case errors.As(perr, &ce) && c.DryRun:
		if err := x.issue(line, c); err != nil {
			return nil, Reply{}, true, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "/apply %s --dry-run: nothing changed. %s the workspace as it is now, so /apply would open a review:\n", target, overlapWord(len(ce.Conflicts)))
		for _, cf := range ce.Conflicts {
			fmt.Fprintf(&b, "  %s (%s)\n", cf.Path, strings.Join(cf.Types, ", "))
			if cf.Merged != "" {
				b.WriteString(indentLines(cf.Merged, "    "))
			}
		}
		return nil, Reply{Output: b.String()}, true, nil
	case errors.As(perr, &ce):
		return nil, Reply{}, false, nil // the review checks the settled result when it lands
	case perr != nil:
		rep, err := x.rejectf(line, c, "nothing applied: %v", perr)
		return nil, rep, true, err
	}
	ck = &check{preview: p}
	if cmd != "" {
		v := x.runVerify(r, target, cmd, source, p)
		v.DryRun = c.DryRun
		v.Forced = c.Force && !v.Passed() && !c.DryRun
		sid := ""
		if sa != nil {
			sid = sa.ID
		}
		if _, err := x.emit(sid, v); err != nil {
			return nil, Reply{}, true, err
		}
		ck.verify = &v
		if !v.Passed() && !c.Force && !c.DryRun {
			msg := fmt.Sprintf("/apply %s: nothing applied: the check failed: %s\n%s%s",
				target, v.Measured(), tailBlock(v.Output),
				fmt.Sprintf("fix it (a new subagent, or /resolve another side), or /apply %s --force to land it anyway (recorded)", target))
			rep, err := x.reject(line, msg, "") // semantic: no usage line (see rejectf)
			return nil, rep, true, err
		}
	}
	if c.DryRun {
		if err := x.issue(line, c); err != nil {
			return nil, Reply{}, true, err
		}
		return ck, Reply{Output: dryRunText(target, p, ck.verify)}, true, nil
	}
	return ck, Reply{}, false, nil
}

// landedAsChecked makes sure an apply merged into the workspace the check saw: otherwise it
// takes the apply back and says so (ok false; the caller rejects the line).
func (x *Orchestrator) landedAsChecked(ck *check, applied *gitws.Applied) (ok bool, why string) {
	if ck == nil || applied == nil || ck.verify == nil {
		return true, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	tree, err := x.git.TreeOf(ctx, applied.Pre)
	if err == nil && tree == ck.preview.CurTree {
		return true, ""
	}
	if uerr := x.git.Undo(ctx, applied); uerr != nil {
		return false, fmt.Sprintf("the workspace changed while the check ran, and taking the apply back failed: %v", uerr)
	}
	return false, "the workspace changed while the check ran; the apply was taken back: run it again"
}

// dryRunText lists what an /apply would land: each file with its diff, then the check.
func dryRunText(target string, p *gitws.Preview, v *session.VerifyRan) string {
	var b strings.Builder
	files := p.Changes.Files
	fmt.Fprintf(&b, "/apply %s --dry-run: nothing changed; /apply %s would change %s:\n", target, target, session.Plural(len(files), "file"))
	for _, f := range files {
		b.WriteString(render.FileChangeLine(changeOf(f)) + "\n")
	}
	for _, f := range files {
		if f.Diff != "" {
			b.WriteString(strings.TrimRight(f.Diff, "\n") + "\n")
		}
	}
	if v != nil {
		b.WriteString(v.Measured() + "\n")
		if !v.Passed() {
			b.WriteString(tailBlock(v.Output))
		}
	}
	return b.String()
}

// changeOf is a gitws file change as recorded.
func changeOf(f gitws.FileChange) session.FileChange {
	return session.FileChange{Path: f.Path, OldPath: f.OldPath, Kind: string(f.Kind), Binary: f.Binary,
		Added: f.Added, Removed: f.Removed, OldMode: f.OldMode, NewMode: f.NewMode, Diff: f.Diff, Truncated: f.Truncated}
}

func tailBlock(out string) string {
	if strings.TrimSpace(out) == "" {
		return ""
	}
	return indentLines(out, "  | ")
}

// exitRe finds the exit code the shell tool appends to a failed command's output.
// Compiled on first use: no initialiser runs for a command that never verifies.
var exitRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n?\[exit code (\d+)\]\s*$`) })

// runVerify runs cmd on the merged result p in a scratch worktree (removed after) with a
// subagent's confined shell and returns its VerifyRan (not yet recorded). Its output is
// redacted here as well, since it is shown before the recording is read back.
func (x *Orchestrator) runVerify(r *gitws.Repo, target, cmd, source string, p *gitws.Preview) session.VerifyRan {
	name := fmt.Sprintf("verify-%d-%s", verifyN.Add(1), target)
	v := session.VerifyRan{Target: target, Command: cmd, Source: source, ExitCode: -1, Outcome: session.VerifyError}
	for _, f := range p.Changes.Files {
		v.Files = append(v.Files, f.Path)
	}
	timeout := time.Duration(x.o.Verify.TimeoutOr()) * time.Second
	start := time.Now()
	defer func() { v.DurationMS = time.Since(start).Milliseconds() }()
	ctx, cancel := context.WithTimeout(x.ctx, gitTimeout+timeout)
	defer cancel()
	wt, err := r.Scratch(ctx, p.Merged, name)
	if err != nil {
		v.Output = "no scratch worktree: " + err.Error()
		v.DurationMS = time.Since(start).Milliseconds()
		return v
	}
	defer r.Remove(context.Background(), wt)
	opts := x.o.Tools
	opts.ConfineWrites = true
	opts.Hidden = append(summitDirs(), filepath.Join(x.sandbox.Root(), tools.PrivateDir))
	opts.ShellTimeout = timeout
	opts.MaxResult = verifyMaxOutput
	sb, err := tools.New(wt.Root(), opts)
	if err != nil {
		v.Output = err.Error()
		v.DurationMS = time.Since(start).Milliseconds()
		return v
	}
	args, _ := json.Marshal(map[string]any{"command": cmd, "timeout_s": int(timeout / time.Second)})
	res := sb.Call(ctx, "run_shell_command", string(args))
	v.DurationMS = time.Since(start).Milliseconds()
	out := res.Output
	switch m := exitRe().FindStringSubmatchIndex(out); {
	case !res.IsError:
		v.ExitCode, v.Outcome = 0, session.VerifyPassed
	case m != nil:
		n, _ := strconv.Atoi(out[m[2]:m[3]])
		v.ExitCode, v.Outcome = n, session.VerifyFailed
		out = out[:m[0]]
		if n == 0 { // cannot happen: the shell reports no exit code for a success
			v.ExitCode = -1
		}
	case strings.Contains(out, "[timed out after"):
		v.Outcome = session.VerifyTimeout
	case strings.Contains(out, "[killed by signal"):
		v.Outcome = session.VerifyFailed
	}
	v.Output = x.red.RedactText(tail(strings.TrimRight(out, "\n"), verifyTail))
	return v
}

// tail is the end of s, at most n bytes, cut on a line (or at least a rune) boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		return "…\n" + s[i+1:]
	}
	return "…" + strings.ToValidUTF8(s, "")
}

// precheckPatches is precheck for a DeltaBatch of proposed patches (no member changed files
// for real): the patches are composed on a snapshot of the workspace to build the result.
func (x *Orchestrator) precheckPatches(line string, c commands.Apply, cv *session.Convergence) (Reply, bool, error) {
	if cmd, _ := x.verifyCommand(c, nil); !c.DryRun && cmd == "" {
		return Reply{}, false, nil
	}
	var patch strings.Builder
	for _, p := range cv.Batch.Patches {
		patch.WriteString(strings.TrimRight(p.Diff, "\n") + "\n")
	}
	r, err := x.repo()
	var base gitws.Base
	result := ""
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
		if base, err = r.Snapshot(ctx); err == nil {
			result, err = r.Compose(ctx, base.Commit, patch.String(), nil)
		}
		cancel()
	}
	if err != nil {
		rep, rerr := x.rejectf(line, c, "nothing applied: the patches could not be built into a result to show or check: %v", err)
		return rep, true, rerr
	}
	_, rep, done, err := x.precheck(line, c, cv.ID, nil, base.Commit, result)
	return rep, done, err
}

// convDiffText is /diff of a convergence without a DeltaBatch: an apply review's conflicts
// (each file's conflict-marked merge and how it was settled) and, once settled, exactly what
// /apply would land; for any other, why it has no DeltaBatch and what each member changed.
func (x *Orchestrator) convDiffText(cv *session.Convergence, path string) (string, error) {
	var b strings.Builder
	if cv.Strategy == StrategyApply {
		source := ""
		if ar := x.applyReviewOf(cv.ID); ar != nil {
			source = ar.source
		}
		fmt.Fprintf(&b, "%s reviews an /apply %s that overlaps edits made to the workspace since:\n", cv.ID, orNone(source))
		for _, cf := range cv.Conflicts {
			if path != "" && cf.File != path {
				continue
			}
			state := "waiting for review"
			if cf.Resolution != nil {
				state = "settled: " + cf.Resolution.Choice
			}
			fmt.Fprintf(&b, "%s %s (%s)\n", cf.ID, cf.File, state)
			if cf.Context != "" {
				b.WriteString(indentLines(cf.Context, "  "))
			}
		}
		if t := x.settledDiff(cv.ID, path); t != "" {
			fmt.Fprintf(&b, "/apply %s lands:\n%s", cv.ID, t)
		}
	} else {
		why := "it is still computing"
		switch {
		case cv.Status == session.ConvergenceDone && cv.ResultFormat != "":
			why = "its result is " + cv.ResultFormat
		case cv.Status == session.ConvergenceDone:
			why = "it produced no result (" + orNone(cv.Outcome) + ")"
		case cv.Status != "":
			why = "it is " + cv.Status
		}
		fmt.Fprintf(&b, "%s has no DeltaBatch (%s); what its members changed:\n", cv.ID, why)
	}
	x.mu.Lock()
	var members []*session.Subagent
	for _, id := range cv.Members {
		if sa := x.state.Subagent(id); sa != nil {
			members = append(members, sa)
		}
	}
	x.mu.Unlock()
	shown := 0
	for _, sa := range members {
		if sa.Changes == nil {
			continue
		}
		t, err := diffText(sa.Changes.Files, path)
		if err != nil {
			continue // that member did not change path
		}
		fmt.Fprintf(&b, "%s changed:\n%s", sa.ID, t)
		shown++
	}
	if shown == 0 && path != "" && !strings.Contains(b.String(), path) {
		return "", fmt.Errorf("%s changes no file %s", cv.ID, path)
	}
	return b.String(), nil
}

// settledDiff is what /apply of a settled apply review would land in the workspace as it is
// now ("" when it is not settled or cannot be computed).
func (x *Orchestrator) settledDiff(cvID, path string) string {
	x.mu.Lock()
	ar := x.applyReviews[cvID]
	pre, settled := "", ""
	if ar != nil {
		pre, settled = ar.pre, ar.settled
	}
	x.mu.Unlock()
	if settled == "" || x.git == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	p, err := x.git.Preview(ctx, pre, settled, cvID)
	if err != nil {
		return ""
	}
	var fs []session.FileChange
	for _, f := range p.Changes.Files {
		fs = append(fs, changeOf(f))
	}
	t, err := diffText(fs, path)
	if err != nil {
		return ""
	}
	return t
}
