package live

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/gitws"
)

// Apply reviews. /apply sa-N or cv-N whose changes overlap edits made to the workspace
// meanwhile does not fail: it opens a review in the same prompt as a convergence's. It is
// recorded as a convergence of strategy "apply" (over sa-N, or cv-N's members) with one
// conflict of kind "apply" per overlapping file (choices: the source takes its version of the
// file, none keeps the workspace's).
// When every file is settled, the merge is prepared with the choices (the workspace's state
// then is the base) and /apply cv-K lands it, three-way, all or nothing, like any apply.

// StrategyApply is the strategy of an apply review's convergence.
const StrategyApply = "apply"

type applyReview struct {
	source       string            // sa-N
	base, result string            // the change being applied
	files        map[string]string // conflict id → path
	pre, settled string            // prepared once every conflict is resolved
}

// openApplyReview records the review of an /apply of source (sa-N, or cv-N with its members)
// whose change base→result overlapped the workspace.
func (x *Orchestrator) openApplyReview(line string, c commands.Apply, source string, members []string, base, result string, ce *gitws.ConflictError) (Reply, error) {
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	x.mu.Lock()
	cvID := fmt.Sprintf("cv-%d", len(x.state.Convergences)+1)
	first := x.state.Counters.Conflicts + 1
	cv := &conv{id: cvID, settled: x.clock.NewEvent()}
	x.convs[cvID] = cv
	ar := &applyReview{source: source, base: base, result: result, files: map[string]string{}}
	x.applyReviews[cvID] = ar
	x.mu.Unlock()
	if _, err := x.emit("", session.ConvergenceInitiated{ConvergenceID: cvID, SubagentIDs: members,
		Strategy: StrategyApply, ConflictResolution: commands.ResolutionManual, OutputFormat: commands.FormatDeltaBatch}); err != nil {
		return Reply{}, err
	}
	var ids []string
	for i, cf := range ce.Conflicts {
		id := fmt.Sprintf("cf-%d", first+i)
		ar.files[id] = cf.Path
		ids = append(ids, id)
		d := session.ConflictDetected{ConvergenceID: cvID, ConflictID: id, Kind: "apply", File: cf.Path,
			Sides: []session.ConflictSide{
				{SubagentID: source, Value: sideText(cf.Theirs, cf.Binary)},
				{SubagentID: "workspace", Value: sideText(cf.Ours, cf.Binary)},
			},
			Context: cf.Merged, Choices: []string{source, commands.ChooseNone}}
		if _, err := x.emit("", d); err != nil {
			return Reply{}, err
		}
		why := fmt.Sprintf("%s changed %s, and so did the workspace since (%s)", source, cf.Path, strings.Join(cf.Types, ", "))
		if _, err := x.emit("", session.ConflictReviewRequest{ConvergenceID: cvID, ConflictID: id, Reason: why}); err != nil {
			return Reply{}, err
		}
	}
	if _, err := x.emit("", session.ManualReviewRequired{ConvergenceID: cvID, ConflictIDs: ids}); err != nil {
		return Reply{}, err
	}
	cv.settled.Fire()
	verb := "overlap"
	if len(ids) == 1 {
		verb = "overlaps"
	}
	return Reply{Output: fmt.Sprintf("%s: %s %s edits made to the workspace since: review %s (ctrl+o), then /apply %s",
		source, session.Plural(len(ids), "file"), verb, strings.Join(ids, ", "), cvID)}, nil
}

// sideText is one side of an overlapping file, for the review.
func sideText(s *gitws.Side, binary bool) string {
	switch {
	case s == nil:
		return "(deleted)"
	case binary:
		return "(binary, " + s.OID[:min(len(s.OID), 12)] + ")"
	}
	return string(s.Content)
}

// resolveApply settles one file of an apply review; the last one prepares the merge.
func (x *Orchestrator) resolveApply(line string, c commands.Resolve, cf *session.Conflict, ar *applyReview) (Reply, error) {
	if !slices.Contains(cf.Choices, c.Choose) {
		return x.rejectf(line, c, "%s takes %s", cf.ID, strings.Join(cf.Choices, " or "))
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	r := session.ConflictResolved{ConvergenceID: cf.ConvergenceID, ConflictID: cf.ID, Method: "manual", Choice: c.Choose, Note: c.Note}
	if _, err := x.emit("", r); err != nil {
		return Reply{}, err
	}
	x.mu.Lock()
	cv := x.state.Convergence(cf.ConvergenceID)
	theirs, open := map[string]bool{}, 0
	for _, o := range cv.Conflicts {
		switch {
		case o.Resolution == nil:
			open++
		case o.Resolution.Choice == ar.source:
			theirs[ar.files[o.ID]] = true
		}
	}
	x.mu.Unlock()
	if open > 0 {
		return Reply{Output: fmt.Sprintf("%s resolved: %s; %d to go", cf.ID, c.Choose, open)}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	pre, settled, err := x.git.Settle(ctx, ar.base, ar.result, theirs)
	done := session.ConvergenceComplete{ConvergenceID: cv.ID, Outcome: "success", ConflictCount: len(cv.Conflicts), ResolutionCount: len(cv.Conflicts)}
	if err != nil {
		done.Outcome, done.Notes = "failure", []string{"the settled merge could not be prepared: " + err.Error()}
	} else {
		x.mu.Lock()
		ar.pre, ar.settled = pre, settled
		x.mu.Unlock()
	}
	if _, err := x.emit("", done); err != nil {
		return Reply{}, err
	}
	return Reply{Output: fmt.Sprintf("%s resolved: %s; /apply %s lands %s's changes as settled", cf.ID, c.Choose, cv.ID, ar.source)}, nil
}

// applyReviewed is /apply cv-K of a settled apply review.
func (x *Orchestrator) applyReviewed(line string, c commands.Apply, ar *applyReview) (Reply, error) {
	x.mu.Lock()
	cv := x.state.Convergence(c.ConvergenceID)
	var open []string
	for _, cf := range cv.Conflicts {
		if cf.Resolution == nil {
			open = append(open, cf.ID)
		}
	}
	pre, settled := ar.pre, ar.settled
	x.mu.Unlock()
	switch {
	case len(open) > 0:
		return x.rejectf(line, c, "%s is waiting for review of %s; /resolve them first", cv.ID, strings.Join(open, ", "))
	case settled == "":
		return x.rejectf(line, c, "%s produced no result to apply", cv.ID)
	}
	for _, a := range x.state.Applies {
		if a.Source == cv.ID && !a.Undone {
			return x.rejectf(line, c, "%s is already applied (%s); /undo takes it back", cv.ID, a.ApplyID)
		}
	}
	ck, rep, done, err := x.precheck(line, c, cv.ID, nil, pre, settled) // verify.go
	if done {
		return rep, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	applied, err := x.git.Apply(ctx, pre, settled, ar.source)
	if ok, why := x.landedAsChecked(ck, applied); err == nil && !ok {
		return x.rejectf(line, c, "nothing applied: %s", why)
	}
	// A reviewed convergence lands its playbook operations with its files.
	batch := ""
	x.mu.Lock()
	var bookErr error
	if src := x.state.Convergence(ar.source); src != nil && src.Batch != nil && !src.Applied {
		batch = src.ID
		_, bookErr = session.ApplyPlaybook(x.state.Playbook, src.Batch.Operations, src.ID)
	}
	x.mu.Unlock()
	if bookErr != nil && err == nil {
		_ = x.git.Undo(ctx, applied) // nothing may land without its playbook operations
		return x.rejectf(line, c, "nothing applied: %v", bookErr)
	}
	if rep, ok, err := x.land(line, c, cv.ID, batch, applied, err); !ok {
		return rep, err
	}
	return Reply{Output: fmt.Sprintf("%s: %s applied as reviewed: %s (/undo takes it back)", applied.ID, ar.source, strings.Join(applied.Files, ", "))}, nil
}
