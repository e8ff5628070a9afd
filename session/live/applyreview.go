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
		if rv := mergedReview(cf.Merged); rv.ok {
			// What differs, not the whole files: each side's change of each conflicted
			// region against the base, and the regions with git's diff3 markers and context.
			d.Sides[0].Value, d.Sides[1].Value = rv.theirs, rv.ours
			d.Context, d.Lines = rv.context, &rv.lines
			d.EditTemplate = cf.Merged
			d.Choices = append(d.Choices, commands.ChooseEdit)
		}
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
		return x.rejectUsage(line, c, "%s takes %s", cf.ID, strings.Join(cf.Choices, " or "))
	}
	switch {
	case c.Choose == commands.ChooseEdit && hasConflictMarkers(c.Content):
		return x.rejectf(line, c, "the text for %s still has conflict markers (<<<<<<<, |||||||, =======, >>>>>>>); write the file as it should be", cf.ID)
	case c.Choose != commands.ChooseEdit && c.Content != "":
		return x.rejectUsage(line, c, "--content goes with --choose edit (the whole text of %s)", session.Sanitize(cf.File))
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	r := session.ConflictResolved{ConvergenceID: cf.ConvergenceID, ConflictID: cf.ID, Method: "manual", Choice: c.Choose, Note: c.Note}
	if c.Choose == commands.ChooseEdit {
		r.Content = c.Content
	}
	if _, err := x.emit("", r); err != nil {
		return Reply{}, err
	}
	x.mu.Lock()
	cv := x.state.Convergence(cf.ConvergenceID)
	theirs, edited, open := map[string]bool{}, map[string][]byte{}, 0
	for _, o := range cv.Conflicts {
		switch {
		case o.Resolution == nil:
			open++
		case o.Resolution.Choice == ar.source:
			theirs[ar.files[o.ID]] = true
		case o.Resolution.Choice == commands.ChooseEdit:
			edited[ar.files[o.ID]] = []byte(o.Resolution.Content)
		}
	}
	x.mu.Unlock()
	if open > 0 {
		return Reply{Output: fmt.Sprintf("%s resolved: %s; %d to go", cf.ID, c.Choose, open)}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	pre, settled, err := x.git.SettleEdited(ctx, ar.base, ar.result, theirs, edited)
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

// applyRegions is an apply conflict's merged file read back from git merge-file --diff3
// output (never merged here): the side values show each conflicted region's change against
// the base, the context shows each region with its markers and 3 lines around it, numbered
// as in the workspace's file.
type applyRegions struct {
	ok           bool
	theirs, ours string
	context      string
	lines        session.LineRange // the first region to the last, in the workspace's file
}

// mergedReview reads merge-file's diff3 output: common lines, and blocks of
// "<<<<<<< workspace" ours "||||||| base" base "=======" theirs ">>>>>>> label".
func mergedReview(merged string) applyRegions {
	if merged == "" {
		return applyRegions{}
	}
	lines := strings.SplitAfter(merged, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type block struct {
		at               int // workspace line (1-based) where ours starts
		ours, base, thrs []string
		from, to         int // indexes in lines of the markers
	}
	var blocks []block
	n := 0 // workspace lines so far
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "<<<<<<< ") {
			n++
			continue
		}
		b := block{at: n + 1, from: i}
		part := &b.ours
		for i++; i < len(lines); i++ {
			l := lines[i]
			switch {
			case strings.HasPrefix(l, "||||||| "):
				part = &b.base
				continue
			case strings.TrimRight(l, "\r\n") == "=======": // git writes CRLF markers in a CRLF file
				part = &b.thrs
				continue
			case strings.HasPrefix(l, ">>>>>>> "):
			default:
				*part = append(*part, l)
				continue
			}
			break
		}
		b.to = i
		n += len(b.ours)
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return applyRegions{}
	}
	var th, ou, ctx strings.Builder
	hunk := func(w *strings.Builder, at int, base, side []string) {
		fmt.Fprintf(w, "@@ line %d @@\n", at)
		for _, l := range base {
			w.WriteString("-" + withEOL(l))
		}
		for _, l := range side {
			w.WriteString("+" + withEOL(l))
		}
	}
	// workspace line numbers of lines outside blocks, for the context
	num := make([]int, len(lines))
	k := 0
	bi := 0
	for i := 0; i < len(lines); i++ {
		if bi < len(blocks) && i == blocks[bi].from {
			k += len(blocks[bi].ours)
			i = blocks[bi].to
			bi++
			continue
		}
		k++
		num[i] = k
	}
	shown := -1 // the last line index written to the context
	for _, b := range blocks {
		hunk(&th, b.at, b.base, b.thrs)
		hunk(&ou, b.at, b.base, b.ours)
		from := max(0, b.from-3, shown+1)
		if shown >= 0 && from > shown+1 {
			ctx.WriteString("      ⋮\n")
		}
		for i := from; i <= min(len(lines)-1, b.to+3); i++ {
			if i > b.to && num[i] == 0 {
				break // the next region's marker: shown with it
			}
			if i >= b.from && i <= b.to {
				fmt.Fprintf(&ctx, "        %s", withEOL(lines[i]))
			} else {
				fmt.Fprintf(&ctx, "%5d   %s", num[i], withEOL(lines[i]))
			}
			shown = i
		}
	}
	last := blocks[len(blocks)-1]
	return applyRegions{ok: true, theirs: th.String(), ours: ou.String(), context: ctx.String(),
		lines: session.LineRange{Start: blocks[0].at, End: max(blocks[0].at, last.at+len(last.ours)-1)}}
}

func withEOL(l string) string {
	if strings.HasSuffix(l, "\n") {
		return l
	}
	return l + "\n"
}

// hasConflictMarkers reports whether text still holds the opening or closing line of a
// conflict marker block as the template wrote them ("=======" alone is left alone: it
// underlines headings in Markdown and reStructuredText).
func hasConflictMarkers(text string) bool {
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, "<<<<<<< workspace") || strings.HasPrefix(l, ">>>>>>> ") {
			return true
		}
	}
	return false
}
