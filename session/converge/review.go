package converge

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// What lands is what was shown (issue 27). A member's recorded text edit is split into one
// hunk per change run, so a conflict names only the runs that overlap; the member's other
// runs in the same file land whatever a region choice decides. The review therefore shows,
// for the file of each hunk or file conflict (ConflictDetected.Review):
//
//   - each member's whole change to the file, every hunk, those in a conflict marked;
//   - per choice, the file's change as that choice leaves it, the other sides' hunks that
//     still land with it (AlsoLands), and the hunks it drops;
//   - per side, the --whole-file choice: that side's whole version of the file, which drops
//     every other member's hunk in the file (the members that are not sides of this conflict
//     included), and settles every other conflict of the file with it.
//
// Invariant: Output lands exactly what the chosen outcome shows for the file when the file's
// other conflicts (Pending) are settled the same way.

// unitFile is the path a change unit is about ("" for findings and playbook operations).
func unitFile(u unit) string {
	if ps := unitPaths(u); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

// inFileOf reports whether a change unit touches path p.
func inFileOf(u unit, p string) bool {
	return isChange(u) && slices.Contains(unitPaths(u), p)
}

// conflictFile is the file a hunk or file conflict is about; "" for the other kinds.
func (a *Analysis) conflictFile(c *conflict) string {
	switch c.kind {
	case KindHunk:
		return a.units[c.units[0]].h.file
	case KindFile:
		return c.file
	}
	return ""
}

// fileUnits are the change units of the used members that touch p, in pool order.
func (a *Analysis) fileUnits(p string) []int {
	var out []int
	for i, u := range a.units {
		if inFileOf(u, p) {
			out = append(out, i)
		}
	}
	return out
}

// conflictOf maps each unit in a conflict to the conflict's id (ids are set by number).
func (a *Analysis) conflictOf() map[int]string {
	out := map[int]string{}
	for _, c := range a.conflicts {
		for _, i := range c.units {
			out[i] = c.id
		}
	}
	return out
}

// reviewHunk shows one change unit as the reviewer reads it: a hunk with its @@ header, a
// mode change, or a whole-file change with its account.
func (a *Analysis) reviewHunk(i int, inConflict map[int]string) session.ReviewHunk {
	u := a.units[i]
	var text string
	switch u.kind {
	case uHunk:
		text = u.h.text()
	case uMode:
		text = fmt.Sprintf("mode of %s %s → %s\n", u.path, u.fc.OldMode, u.fc.NewMode)
	case uFile:
		text = a.sideText([]int{i})
	}
	return session.ReviewHunk{SubagentID: strings.Join(u.sources, ", "), File: unitFile(u), Text: text, Conflict: inConflict[i]}
}

// sortUnits orders a file's units by position (whole-file and mode units first).
func (a *Analysis) sortUnits(us []int) []int {
	us = slices.Clone(us)
	slices.SortStableFunc(us, func(x, y int) int {
		px, py := -1, -1
		if h := a.units[x].h; h != nil {
			px = h.coreStart
		}
		if h := a.units[y].h; h != nil {
			py = h.coreStart
		}
		return px - py
	})
	return us
}

// review builds the whole picture of a hunk or file conflict's file; nil for other kinds.
func (a *Analysis) review(c *conflict, inConflict map[int]string) *session.ConflictReview {
	p := a.conflictFile(c)
	if p == "" {
		return nil
	}
	all := a.sortUnits(a.fileUnits(p))
	r := &session.ConflictReview{File: p, Changes: []session.SideChange{}, Outcomes: []session.ChoiceOutcome{}}
	// Each member with a change to the file: the conflict's sides first, then the others
	// (a whole-file choice drops their hunks too).
	members := slices.Clone(c.order)
	for _, i := range all {
		for _, s := range a.units[i].sources {
			if !slices.Contains(members, s) {
				members = append(members, s)
			}
		}
	}
	for _, s := range members {
		sc := session.SideChange{SubagentID: s, Hunks: []session.ReviewHunk{}}
		for _, i := range all {
			if slices.Contains(a.units[i].sources, s) {
				h := a.reviewHunk(i, inConflict)
				h.SubagentID = ""
				sc.Hunks = append(sc.Hunks, h)
			}
		}
		r.Changes = append(r.Changes, sc)
	}
	var pending []string
	for _, i := range all {
		if id := inConflict[i]; id != "" && id != c.id && !slices.Contains(pending, id) {
			pending = append(pending, id)
		}
	}
	for _, ch := range a.choices(c) {
		if ch == ChooseEdit {
			continue // the reviewer's own text: shown in the editor
		}
		take := map[int]bool{}
		for _, i := range all {
			if inConflict[i] == "" {
				take[i] = true
			}
		}
		switch ch {
		case commands.ChooseBoth:
			for _, i := range c.units {
				take[i] = true
			}
		case commands.ChooseNone:
		default:
			for _, i := range c.sides[ch] {
				take[i] = true
			}
		}
		o := session.ChoiceOutcome{Choice: ch, Pending: pending}
		o.Diff = a.fileDiff(p, all, take, "")
		for _, i := range all {
			own := ch != commands.ChooseNone && ch != commands.ChooseBoth && slices.Contains(a.units[i].sources, ch)
			switch {
			case take[i] && !own && !(ch == commands.ChooseBoth && slices.Contains(c.units, i)):
				o.AlsoLands = append(o.AlsoLands, a.reviewHunk(i, inConflict))
			case !take[i] && inConflict[i] == c.id:
				o.Drops = append(o.Drops, a.reviewHunk(i, inConflict))
			}
		}
		r.Outcomes = append(r.Outcomes, o)
	}
	for _, s := range c.order {
		take, region := map[int]bool{}, map[int]bool{}
		for _, i := range all {
			if slices.Contains(a.units[i].sources, s) {
				take[i] = true
			}
			if inConflict[i] == "" || slices.Contains(c.sides[s], i) {
				region[i] = true
			}
		}
		if len(pending) == 0 && maps.Equal(take, region) {
			continue // the same as the region choice: nothing more to offer
		}
		o := session.ChoiceOutcome{Choice: s, WholeFile: true}
		o.Diff = a.fileDiff(p, all, take, s)
		for _, i := range all {
			if !take[i] {
				o.Drops = append(o.Drops, a.reviewHunk(i, inConflict))
			}
		}
		r.Outcomes = append(r.Outcomes, o)
	}
	return r
}

// fileDiff is the change of file p made of the taken units: the member's change as recorded
// when the taken units are exactly its own (whole = that member), else the hunks combined.
func (a *Analysis) fileDiff(p string, all []int, take map[int]bool, whole string) string {
	var set []int
	for _, i := range all {
		if take[i] {
			set = append(set, i)
		}
	}
	if len(set) == 0 {
		return ""
	}
	if whole != "" {
		if o, ok := a.origin[whole][p]; ok && slices.Equal(o.units, slices.Sorted(slices.Values(set))) {
			return hunkBodyWithHeaders(o.fc.Diff)
		}
	}
	var hs []*hunk
	var b strings.Builder
	for _, i := range set {
		u := a.units[i]
		switch u.kind {
		case uHunk:
			hs = append(hs, u.h)
		case uMode:
			fmt.Fprintf(&b, "mode %s → %s\n", u.fc.OldMode, u.fc.NewMode)
		case uFile:
			b.WriteString(render.FileChangeLine(*u.fc) + "\n")
			if !u.fc.Binary {
				b.WriteString(hunkBody(u.fc.Diff, false))
			}
		}
	}
	if len(hs) > 0 {
		b.WriteString(renderFile(p, hs))
	}
	return b.String()
}

// hunkBodyWithHeaders is a recorded diff from its ---/+++ lines on (git's diff and index
// lines left out).
func hunkBodyWithHeaders(diff string) string {
	if i := strings.Index(diff, "\n--- "); i >= 0 {
		return diff[i+1:]
	}
	return hunkBody(diff, false)
}

// wholeFileOf is, per file, the side whose whole version a --whole-file resolution took (the
// first such resolution in conflict order).
func (a *Analysis) wholeFileOf(resolved map[string]session.ConflictResolved) map[string]string {
	out := map[string]string{}
	for _, c := range a.conflicts {
		r, ok := resolved[c.id]
		if !ok || !r.WholeFile || !slices.Contains(c.order, r.Choice) {
			continue
		}
		if p := a.conflictFile(c); p != "" {
			if _, seen := out[p]; !seen {
				out[p] = r.Choice
			}
		}
	}
	return out
}

// ResolveWholeFile checks a --whole-file choice: the side's whole version of the conflict's
// file. It returns the resolution of the conflict and of every other conflict of the same
// file (their choice is the side where it is one of theirs, else none; all WholeFile), each
// with the hunks kept and dropped in the file.
func (a *Analysis) ResolveWholeFile(conflictID, choice, note string) ([]session.ConflictResolved, error) {
	c := a.conflict(conflictID)
	if c == nil {
		return nil, fmt.Errorf("%s is not a conflict of %s", conflictID, a.in.ID)
	}
	p := a.conflictFile(c)
	if p == "" {
		return nil, fmt.Errorf("--whole-file takes a side's version of a file; %s is a %s conflict, not about a file: choose %s without it", conflictID, c.kind, orList(a.choices(c)))
	}
	if !slices.Contains(c.order, choice) {
		return nil, fmt.Errorf("--whole-file takes one side's version of %s: choose %s", session.Sanitize(p), orList(c.order))
	}
	inConflict := a.conflictOf()
	all := a.sortUnits(a.fileUnits(p))
	var kept, dropped []session.ReviewHunk
	for _, i := range all {
		if slices.Contains(a.units[i].sources, choice) {
			kept = append(kept, a.reviewHunk(i, inConflict))
		} else {
			dropped = append(dropped, a.reviewHunk(i, inConflict))
		}
	}
	var out []session.ConflictResolved
	for _, o := range a.conflicts {
		if o != c && a.conflictFile(o) != p {
			continue
		}
		ch, n := choice, note
		if !slices.Contains(o.order, choice) {
			ch = commands.ChooseNone
		}
		if o != c {
			n = fmt.Sprintf("settled by %s: %s's whole %s", c.id, choice, p)
		}
		r := a.resolution(o, ch, commands.ResolutionManual, n)
		r.WholeFile, r.Kept, r.Dropped = true, kept, dropped
		if o == c {
			out = append([]session.ConflictResolved{r}, out...)
		} else {
			out = append(out, r)
		}
	}
	return out, nil
}

// keptDropped are the conflict's own units a choice keeps and drops.
func (a *Analysis) keptDropped(c *conflict, choice string) (kept, dropped []session.ReviewHunk) {
	if len(c.units) == 0 {
		return nil, nil
	}
	inConflict := map[int]string{}
	for _, i := range c.units {
		inConflict[i] = c.id
	}
	for _, i := range c.units {
		keep := choice == commands.ChooseBoth || slices.Contains(c.sides[choice], i)
		if keep {
			kept = append(kept, a.reviewHunk(i, inConflict))
		} else {
			dropped = append(dropped, a.reviewHunk(i, inConflict))
		}
	}
	return kept, dropped
}

// resultReason says why a side of a vote or consensus conflict stands apart.
func (a *Analysis) resultReason(c *conflict, m Member) string {
	key, _ := a.normalised(m)
	switch c.kind {
	case KindVote:
		n := 0
		for _, id := range c.order {
			if k, _ := a.normalised(a.member(id)); k == key {
				n++
			}
		}
		return fmt.Sprintf("a tie: %s for this result, as many as for another", session.Plural(n, "vote"))
	case KindConsensus:
		ref := a.member(c.order[0])
		if m.ID == ref.ID {
			return "the reference: the largest group of equal results, most confident"
		}
		if k, _ := a.normalised(ref); k != key {
			return fmt.Sprintf("its result differs from %s's", ref.ID)
		}
		if m.Capsule.Confidence != nil && ref.Capsule.Confidence != nil {
			return fmt.Sprintf("same result as %s, but confidence %.2f is outside the 0.1 band of %.2f", ref.ID, *m.Capsule.Confidence, *ref.Capsule.Confidence)
		}
		return fmt.Sprintf("same result as %s, but its confidence is outside the band", ref.ID)
	}
	return ""
}

// memberDiff is a member's whole change set as diffs: its recorded changes, else its proposed
// patches; "" when it changes nothing.
func memberDiff(m Member) string {
	var b strings.Builder
	if m.real() {
		for _, fc := range m.Changes.Files {
			b.WriteString(render.FileChangeLine(fc) + "\n")
			if !fc.Binary {
				b.WriteString(hunkBodyWithHeaders(fc.Diff))
			}
		}
		return b.String()
	}
	for _, ps := range m.Capsule.PatchSuggestions {
		b.WriteString(ps.Diff)
		if !strings.HasSuffix(ps.Diff, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
