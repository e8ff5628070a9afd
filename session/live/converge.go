package live

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/converge"
)

// conv is a /converge the orchestrator runs.
//
// Lifecycle: ConvergenceInitiated at once; a participant waits for the members (pending
// while they run), then records ConflictDetected for each conflict, ConflictResolved for
// those the method settles, ConflictReviewRequest + ManualReviewRequired for the rest, and,
// once nothing is open, the output (ConvergedResult or DeltaBatch) and ConvergenceComplete.
// /resolve records a ConflictResolved and completes the convergence after the last one.
type conv struct {
	id       string
	cmd      commands.Converge
	settled  *Event // fired when complete or waiting for review (so /wait and WaitAll return)
	analysis *converge.Analysis
	done     bool
	result   *converge.Result // the output, once complete (its Files are the real changes to land)
}

func (x *Orchestrator) converge(line string, c commands.Converge) (Reply, error) {
	if err := converge.Check(c.Strategy, c.SubagentIDs); err != nil {
		return x.rejectf(line, c, "%v", err)
	}
	x.mu.Lock()
	var subs []*sub
	bad := ""
	for _, id := range c.SubagentIDs {
		if s := x.subs[id]; s != nil && x.state.Subagent(id) != nil {
			subs = append(subs, s)
		} else if bad == "" {
			bad = id
		}
	}
	ids := x.subIDs()
	n := len(x.state.Convergences) + 1
	x.mu.Unlock()
	if bad != "" {
		return x.rejectf(line, c, "unknown subagent %s%s", bad, didYouMean(bad, ids))
	}
	for _, id := range c.SubagentIDs {
		if why := x.foreignChanges(id); why != "" {
			return x.rejectf(line, c, "%s", why)
		}
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	cv := &conv{id: "cv-" + strconv.Itoa(n), cmd: c, settled: x.clock.NewEvent()}
	x.mu.Lock()
	x.convs[cv.id] = cv
	x.mu.Unlock()
	if _, err := x.emit("", session.ConvergenceInitiated{ConvergenceID: cv.id, SubagentIDs: c.SubagentIDs,
		Strategy: c.Strategy, ConflictResolution: c.ConflictResolution, OutputFormat: c.OutputFormat}); err != nil {
		return Reply{}, err
	}
	x.clock.Go(func() { x.runConv(cv, subs) })
	return Reply{Output: fmt.Sprintf("%s: %s of %s", cv.id, c.Strategy, strings.Join(c.SubagentIDs, ", "))}, nil
}

// runConv waits for the members, then analyses.
func (x *Orchestrator) runConv(cv *conv, subs []*sub) {
	defer func() {
		x.mu.Lock()
		open := !cv.done && cv.analysis == nil
		x.mu.Unlock()
		if open {
			cv.settled.Fire() // the session ended first
		}
	}()
	if cv.cmd.Strategy == commands.StrategyFirstSuccess {
		if !x.firstSuccess(cv, subs) {
			return
		}
	}
	for _, s := range subs {
		if s.stopped.Wait(x.ctx) != nil {
			return
		}
	}
	x.mu.Lock()
	in := converge.Input{ID: cv.id, Strategy: cv.cmd.Strategy, Resolution: cv.cmd.ConflictResolution,
		Format: cv.cmd.OutputFormat, FirstConflict: x.state.Counters.Conflicts + 1,
		Playbook: slices.Clone(x.state.Playbook), Read: x.readFile}
	for _, id := range cv.cmd.SubagentIDs {
		sa := x.state.Subagent(id)
		m := converge.Member{ID: id, Outcome: sa.Outcome, Capsule: sa.Capsule, Finished: sa.StopSeq, Error: sa.LastError}
		// A subagent that changed files converges on what it really changed; one that changed
		// nothing (read-only, or proposing only) on its capsule's proposals.
		if ch := sa.Changes; ch != nil && (len(ch.Files) > 0 || ch.Error != "") {
			m.Changes = ch
		}
		in.Members = append(in.Members, m)
	}
	x.mu.Unlock()
	x.rebaseMembers(cv.id, in.Members)
	a, err := converge.Analyze(in)
	if err != nil { // Check ran at /converge and every member has stopped: not reachable
		x.finishConv(cv, nil, []string{"convergence failed: " + err.Error()})
		return
	}
	x.mu.Lock()
	cv.analysis = a
	x.mu.Unlock()
	for _, d := range a.Conflicts {
		if slices.Contains(d.Choices, converge.ChooseEdit) {
			d.EditTemplate, _ = a.EditTemplate(d.ConflictID) // what the reviewer's editor opens
		}
		if _, err := x.emit("", d); err != nil {
			return
		}
	}
	for _, r := range a.Auto {
		if _, err := x.emit("", r); err != nil {
			return
		}
	}
	var review []string
	for _, r := range a.Review {
		review = append(review, r.ConflictID)
		if _, err := x.emit("", session.ConflictReviewRequest{ConvergenceID: cv.id, ConflictID: r.ConflictID, Reason: r.Reason}); err != nil {
			return
		}
	}
	if len(review) > 0 {
		_, _ = x.emit("", session.ManualReviewRequired{ConvergenceID: cv.id, ConflictIDs: review})
		cv.settled.Fire()
		return
	}
	x.complete(cv)
}

// firstSuccess waits until a member succeeds (then cancels the others still running) or all
// have stopped. It reports false when the session ends first.
func (x *Orchestrator) firstSuccess(cv *conv, subs []*sub) bool {
	for {
		var winner *sub
		var open []*sub
		for _, s := range subs {
			if !s.stopped.Fired() {
				open = append(open, s)
				continue
			}
			s.mu.Lock()
			ok := s.outcome == session.OutcomeSuccess
			s.mu.Unlock()
			if ok && winner == nil {
				winner = s
			}
		}
		if winner != nil {
			for _, s := range open {
				s.cancel(fmt.Sprintf("%s (first_success): %s succeeded first", cv.id, winner.id))
			}
			return true
		}
		if len(open) == 0 {
			return true
		}
		// Wait for any open member to stop.
		stop := x.clock.NewEvent()
		ctx, cancel := context.WithCancel(x.ctx)
		for _, s := range open {
			x.clock.Go(func() {
				if s.stopped.Wait(ctx) == nil {
					stop.Fire()
				}
			})
		}
		err := stop.Wait(x.ctx)
		cancel()
		if err != nil {
			return false
		}
	}
}

// complete records the output and ConvergenceComplete once every conflict is resolved.
func (x *Orchestrator) complete(cv *conv) {
	x.mu.Lock()
	a := cv.analysis
	resolved := map[string]session.ConflictResolved{}
	if c := x.state.Convergence(cv.id); c != nil {
		for _, cf := range c.Conflicts {
			if cf.Resolution != nil {
				resolved[cf.ID] = *cf.Resolution
			}
		}
	}
	x.mu.Unlock()
	res, err := a.Output(resolved)
	if err != nil {
		return // a conflict is still open
	}
	x.finishConv(cv, &res, res.Notes)
}

func (x *Orchestrator) finishConv(cv *conv, res *converge.Result, notes []string) {
	x.mu.Lock()
	if cv.done {
		x.mu.Unlock()
		return
	}
	cv.done = true
	cv.result = res
	x.mu.Unlock()
	defer cv.settled.Fire()
	done := session.ConvergenceComplete{ConvergenceID: cv.id, Outcome: converge.OutcomeFailure, Notes: notes}
	if res != nil {
		if res.Batch != nil {
			if _, err := x.emit("", *res.Batch); err != nil {
				return
			}
		}
		if res.Converged != nil {
			if _, err := x.emit("", *res.Converged); err != nil {
				return
			}
		}
		done.Outcome, done.OutputSize = res.Outcome, res.Size
	}
	x.mu.Lock()
	if c := x.state.Convergence(cv.id); c != nil {
		done.ConflictCount = len(c.Conflicts)
		for _, cf := range c.Conflicts {
			if cf.Resolution != nil {
				done.ResolutionCount++
			}
		}
	}
	x.mu.Unlock()
	_, _ = x.emit("", done)
}

func (x *Orchestrator) resolve(line string, c commands.Resolve) (Reply, error) {
	x.mu.Lock()
	cf := x.state.Conflict(c.ConflictID)
	var open []string
	for _, cv := range x.state.Convergences {
		for _, o := range cv.Conflicts {
			if o.Resolution == nil {
				open = append(open, o.ID)
			}
		}
	}
	var cv *conv
	if cf != nil {
		cv = x.convs[cf.ConvergenceID]
	}
	x.mu.Unlock()
	switch {
	case cf == nil && len(open) == 0:
		return x.rejectf(line, c, "unknown conflict %s: no conflict is waiting for review%s", c.ConflictID, x.stillComputing())
	case cf == nil:
		return x.rejectf(line, c, "unknown conflict %s%s (open: %s)", c.ConflictID, didYouMean(c.ConflictID, open), strings.Join(open, ", "))
	case cf.Resolution != nil:
		return x.rejectf(line, c, "%s was already resolved by %s: %s", cf.ID, cf.Resolution.Method, cf.Resolution.Choice)
	case x.applyReviewOf(cf.ConvergenceID) != nil:
		return x.resolveApply(line, c, cf, x.applyReviewOf(cf.ConvergenceID))
	case cv == nil || cv.analysis == nil:
		return x.rejectf(line, c, "%s cannot be resolved in this session%s", cf.ID, x.whyNoReview(cf))
	}
	var r session.ConflictResolved
	var err error
	var more []session.ConflictResolved // other conflicts of the file a --whole-file settles
	switch {
	case c.WholeFile && (c.Choose == commands.ChooseEdit || c.Content != ""):
		err = fmt.Errorf("--whole-file takes a side's version of the file; it does not go with --choose edit or --content")
	case c.WholeFile:
		var rs []session.ConflictResolved
		if rs, err = cv.analysis.ResolveWholeFile(c.ConflictID, c.Choose, c.Note); err == nil {
			r = rs[0]
			x.mu.Lock()
			for _, o := range rs[1:] {
				if oc := x.state.Conflict(o.ConflictID); oc != nil && oc.Resolution == nil {
					more = append(more, o)
				}
			}
			x.mu.Unlock()
		}
	case c.Choose == commands.ChooseEdit:
		r, err = cv.analysis.ResolveEdit(c.ConflictID, c.Content, c.Note)
	case c.Content != "":
		err = fmt.Errorf("--content goes with --choose edit (the text that replaces the conflicted lines)")
	default:
		r, err = cv.analysis.Resolve(c.ConflictID, c.Choose, c.Note)
	}
	if err != nil {
		return x.rejectf(line, c, "%v", err)
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	for _, o := range append([]session.ConflictResolved{r}, more...) {
		if _, err := x.emit("", o); err != nil {
			return Reply{}, err
		}
	}
	x.complete(cv)
	x.mu.Lock()
	st := x.state.Convergence(cv.id)
	out := fmt.Sprintf("%s resolved: %s", cf.ID, c.Choose)
	if c.WholeFile {
		out = fmt.Sprintf("%s resolved: %s's whole %s", cf.ID, c.Choose, session.Sanitize(cf.File))
		for _, o := range more {
			out += fmt.Sprintf("; %s settled with it", o.ConflictID)
		}
	}
	if st != nil && st.Status == session.ConvergenceDone {
		out += fmt.Sprintf("; %s complete (%s)", cv.id, st.Outcome)
	}
	x.mu.Unlock()
	return Reply{Output: out}, nil
}

// applyReviewOf is the apply review a convergence id names, or nil.
func (x *Orchestrator) applyReviewOf(id string) *applyReview {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.applyReviews[id]
}

// apply writes a convergence's DeltaBatch to the workspace: every hunk fits or nothing
// changes; the playbook operations are checked before anything is written.
func (x *Orchestrator) apply(line string, c commands.Apply) (Reply, error) {
	if ar := x.applyReviewOf(c.ConvergenceID); ar != nil {
		return x.applyReviewed(line, c, ar)
	}
	x.mu.Lock()
	cv := x.state.Convergence(c.ConvergenceID)
	var ids []string
	for _, o := range x.state.Convergences {
		ids = append(ids, o.ID)
	}
	mode := agents.PermissionMode(x.state.Info.PermissionMode)
	book := slices.Clone(x.state.Playbook)
	var pending []string
	if cv != nil {
		for _, cf := range cv.Conflicts {
			if cf.Resolution == nil {
				pending = append(pending, cf.ID)
			}
		}
	}
	x.mu.Unlock()
	switch {
	case cv == nil:
		return x.rejectf(line, c, "unknown convergence %s%s", c.ConvergenceID, didYouMean(c.ConvergenceID, ids))
	case mode.Rank() < agents.ModeAcceptEdits.Rank():
		return x.rejectf(line, c, "/apply writes files and needs acceptEdits or higher; this session runs in %s (start it with --permission-mode acceptEdits)", mode)
	case len(pending) > 0:
		return x.rejectf(line, c, "%s is waiting for review of %s; /resolve them first", cv.ID, strings.Join(pending, ", "))
	case cv.Status != session.ConvergenceDone:
		return x.rejectf(line, c, "%s", x.notDone(cv))
	case cv.Applied:
		return x.rejectf(line, c, "%s was already applied (%s)", cv.ID, strings.Join(cv.AppliedFiles, ", "))
	case cv.Batch == nil:
		return x.rejectf(line, c, "%s has no DeltaBatch: its output is %s; converge again with --output-format delta_batch", cv.ID, orNone(cv.ResultFormat))
	case cv.Outcome == converge.OutcomeFailure:
		return x.rejectf(line, c, "%s produced no result to apply", cv.ID)
	}
	x.mu.Lock()
	var res *converge.Result
	if lc := x.convs[cv.ID]; lc != nil {
		res = lc.result
	}
	x.mu.Unlock()
	if res != nil && len(res.Files) > 0 {
		return x.applyConvReal(line, c, cv, res, book)
	}
	changes, err := converge.Plan(x.readFile, cv.Batch.Patches)
	if err != nil {
		return x.rejectf(line, c, "nothing applied: %v", err)
	}
	if _, err := session.ApplyPlaybook(book, cv.Batch.Operations, cv.ID); err != nil {
		return x.rejectf(line, c, "nothing applied: %v", err)
	}
	if rep, done, err := x.precheckPatches(line, c, cv); done { // verify.go
		return rep, err
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	if err := x.write(changes); err != nil {
		// write rolled back what it had done; the failure is on record.
		_, _ = x.emit("", session.UserNote{Text: fmt.Sprintf("/apply %s failed and changed nothing: %v", cv.ID, err)})
		return Reply{Error: "nothing applied: " + err.Error()}, nil
	}
	files := make([]string, 0, len(changes))
	for _, ch := range changes {
		files = append(files, ch.Path)
	}
	if _, err := x.emit("", session.DeltaBatchApplied{ConvergenceID: cv.ID, Files: files}); err != nil {
		return Reply{}, err
	}
	return Reply{Output: fmt.Sprintf("%s applied: %s, %s", cv.ID, session.Plural(len(files), "file"), session.Plural(len(cv.Batch.Operations), "playbook operation"))}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// readFile reads a workspace file through os.Root, which refuses paths and symlinks that
// leave the workspace.
func (x *Orchestrator) readFile(name string) ([]byte, error) {
	root, err := os.OpenRoot(x.sandbox.Root())
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(name)
}

// write applies changes all or nothing: each file is written to a temporary sibling and
// renamed over the original; on any failure the files already replaced are restored.
func (x *Orchestrator) write(changes []converge.Change) error {
	root, err := os.OpenRoot(x.sandbox.Root())
	if err != nil {
		return err
	}
	defer root.Close()
	type undo struct {
		path    string
		old     []byte
		mode    fs.FileMode
		existed bool
	}
	var done []undo
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			u := done[i]
			if u.existed {
				_ = root.WriteFile(u.path, u.old, u.mode)
			} else {
				_ = root.Remove(u.path)
			}
		}
	}
	for _, ch := range changes {
		u := undo{path: ch.Path, mode: 0o644}
		if st, err := root.Stat(ch.Path); err == nil {
			if !st.Mode().IsRegular() {
				rollback()
				return fmt.Errorf("%s is not a regular file", ch.Path)
			}
			u.existed, u.mode = true, st.Mode().Perm()
			if u.old, err = root.ReadFile(ch.Path); err != nil {
				rollback()
				return err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			rollback()
			return err
		}
		if ch.Delete {
			if err := root.Remove(ch.Path); err != nil {
				rollback()
				return err
			}
			done = append(done, u)
			continue
		}
		if dir := path.Dir(ch.Path); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				rollback()
				return err
			}
		}
		tmp := path.Join(path.Dir(ch.Path), "."+path.Base(ch.Path)+".summit-apply")
		if err := root.WriteFile(tmp, ch.Content, u.mode); err != nil {
			_ = root.Remove(tmp)
			rollback()
			return err
		}
		if err := root.Rename(tmp, ch.Path); err != nil {
			_ = root.Remove(tmp)
			rollback()
			return err
		}
		done = append(done, u)
	}
	return nil
}
