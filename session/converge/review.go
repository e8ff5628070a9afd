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

// fileMembers are the members with a change to the conflict's file: the conflict's sides
// first, then the others (a whole-file choice drops their hunks too).
func (a *Analysis) fileMembers(c *conflict, all []int) []string {
	members := slices.Clone(c.order)
	for _, i := range all {
		for _, s := range a.units[i].sources {
			if !slices.Contains(members, s) {
				members = append(members, s)
			}
		}
	}
	return members
}

// pendingOf are the other conflicts of the file's units.
func pendingOf(c *conflict, all []int, inConflict map[int]string) []string {
	var pending []string
	for _, i := range all {
		if id := inConflict[i]; id != "" && id != c.id && !slices.Contains(pending, id) {
			pending = append(pending, id)
		}
	}
	return pending
}

// review builds the whole picture of a hunk or file conflict's file; nil for other kinds.
func (a *Analysis) review(c *conflict, inConflict map[int]string) *session.ConflictReview {
	p := a.conflictFile(c)
	if p == "" {
		return nil
	}
	all := a.sortUnits(a.fileUnits(p))
	r := &session.ConflictReview{File: p, Changes: []session.SideChange{}, Outcomes: []session.ChoiceOutcome{}}
	for _, s := range a.fileMembers(c, all) {
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
	pending := pendingOf(c, all, inConflict)
	for _, ch := range a.choices(c) {
		if ch == ChooseEdit {
			continue // the reviewer's own text: shown in the editor
		}
		r.Outcomes = append(r.Outcomes, a.regionOutcome(c, ch, inConflict))
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
		r.Outcomes = append(r.Outcomes, a.wholeOutcome(c, s, inConflict))
	}
	return r
}

// regionOutcome is what a region choice (a side, both, none; edit: the reviewer's text in
// place of the conflict's hunks, no Diff) makes of a hunk or file conflict's file. Its
// playbook operations are decided as far as this choice decides: the file's hunks in other
// conflicts (Pending) and every change outside the file count as landing.
func (a *Analysis) regionOutcome(c *conflict, ch string, inConflict map[int]string) session.ChoiceOutcome {
	p := a.conflictFile(c)
	all := a.sortUnits(a.fileUnits(p))
	take := map[int]bool{}
	for _, i := range all {
		if inConflict[i] == "" {
			take[i] = true
		}
	}
	both := ch == commands.ChooseBoth || ch == ChooseEdit
	switch {
	case both:
		for _, i := range c.units {
			take[i] = true
		}
	case ch == commands.ChooseNone:
	default:
		for _, i := range c.sides[ch] {
			take[i] = true
		}
	}
	o := session.ChoiceOutcome{Choice: ch, Pending: pendingOf(c, all, inConflict)}
	if ch != ChooseEdit {
		o.Diff = a.fileDiff(p, all, take, "")
	}
	for _, i := range all {
		own := !both && ch != commands.ChooseNone && slices.Contains(a.units[i].sources, ch)
		switch {
		case take[i] && !own && !(both && slices.Contains(c.units, i)):
			o.AlsoLands = append(o.AlsoLands, a.reviewHunk(i, inConflict))
		case !take[i] && inConflict[i] == c.id:
			o.Drops = append(o.Drops, a.reviewHunk(i, inConflict))
		}
	}
	o.PlaybookLands, o.PlaybookDrops = a.opFate(a.fileMembers(c, all), func(i int) bool {
		if !inFileOf(a.units[i], p) {
			return true
		}
		return take[i] || (inConflict[i] != "" && inConflict[i] != c.id)
	}, inConflict)
	return o
}

// wholeOutcome is side s's whole version of a hunk or file conflict's file (--whole-file).
func (a *Analysis) wholeOutcome(c *conflict, s string, inConflict map[int]string) session.ChoiceOutcome {
	p := a.conflictFile(c)
	all := a.sortUnits(a.fileUnits(p))
	take := map[int]bool{}
	for _, i := range all {
		if slices.Contains(a.units[i].sources, s) {
			take[i] = true
		}
	}
	o := session.ChoiceOutcome{Choice: s, WholeFile: true}
	o.Diff = a.fileDiff(p, all, take, s)
	for _, i := range all {
		if !take[i] {
			o.Drops = append(o.Drops, a.reviewHunk(i, inConflict))
		}
	}
	o.PlaybookLands, o.PlaybookDrops = a.opFate(a.fileMembers(c, all), func(i int) bool {
		return !inFileOf(a.units[i], p) || take[i]
	}, inConflict)
	return o
}

// Playbook operations follow their member's change (issue 27): a member's Downstream Context
// describes the change it made, so its operations land only when its whole change lands.
// When a choice drops any of a member's hunks or file changes (another side's region or
// whole file, none, a base conflict leaving it out), its operations are dropped with them.
// An operation several members gave lands when one of them lands whole (a TAG counts only
// those). A hunk conflict settled by edit keeps both sides' operations: the reviewer's lines
// stand for both. Operations that are themselves the sides of a playbook conflict follow
// that conflict's choice, and a member without changes keeps its operations.

// wholeMembers are the used members whose every change unit lands (lands says which do).
func (a *Analysis) wholeMembers(lands func(int) bool) map[string]bool {
	out := map[string]bool{}
	for _, m := range a.used {
		out[m.ID] = true
	}
	for i, u := range a.units {
		if u.edit == "" && isChange(u) && !lands(i) {
			for _, s := range u.sources {
				out[s] = false
			}
		}
	}
	return out
}

// opFate splits the playbook operations of members that no playbook conflict decides into
// those that land and those dropped, when the change units lands says land do.
func (a *Analysis) opFate(members []string, lands func(int) bool, inConflict map[int]string) (land, drop []session.ReviewOp) {
	whole := a.wholeMembers(lands)
	for i, u := range a.units {
		if u.kind != uOp || inConflict[i] != "" || !slices.ContainsFunc(u.sources, func(s string) bool { return slices.Contains(members, s) }) {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(u.sources), func(s string) bool { return !whole[s] })
		if len(kept) > 0 {
			land = append(land, session.ReviewOp{SubagentID: strings.Join(kept, ", "), Text: opText(a.opFor(u, kept))})
		} else {
			drop = append(drop, session.ReviewOp{SubagentID: strings.Join(u.sources, ", "), Text: opText(u.op)})
		}
	}
	return land, drop
}

// opFor is an operation as given by some of its sources: a TAG counts only theirs.
func (a *Analysis) opFor(u unit, sources []string) session.PlaybookOp {
	op := u.op
	if op.Type == session.OpTag && len(sources) < len(u.sources) {
		var meta map[string]any
		for _, s := range sources {
			meta = addCounts(meta, u.opBy[s])
		}
		op.Metadata = meta
	}
	return op
}

// opText is a playbook operation as the reviewer reads it.
func opText(op session.PlaybookOp) string {
	switch op.Type {
	case session.OpAdd:
		return fmt.Sprintf("ADD %s: %s", op.Section, op.Content)
	case session.OpUpdate:
		return fmt.Sprintf("UPDATE %s: %s", op.BulletID, op.Content)
	case session.OpTag:
		var tags []string
		for _, k := range slices.Sorted(maps.Keys(op.Metadata)) {
			tags = append(tags, fmt.Sprintf("%s %d", k, toInt(op.Metadata[k])))
		}
		return strings.TrimSpace("TAG " + op.BulletID + " " + strings.Join(tags, ", "))
	}
	return op.Type + " " + op.BulletID
}

// orphanOps leaves out of take the playbook operations whose members' changes do not all
// land (see above); take holds src's units (a's, then any edit units). editKept are the
// units of conflicts settled by edit. It returns the units to use (a copy when a TAG or an
// ADD's sources shrink) and notes naming the members whose operations were left out.
func (a *Analysis) orphanOps(src *Analysis, take []int, editKept map[int]bool, dropped map[string]bool) (*Analysis, []int, []string) {
	in := map[int]bool{}
	for _, i := range take {
		in[i] = true
	}
	whole := a.wholeMembers(func(i int) bool { return in[i] || editKept[i] })
	for m := range dropped {
		whole[m] = false
	}
	inConflict := a.conflictOf()
	lost := map[string]int{}
	var out []int
	var cp *Analysis
	for _, i := range take {
		if i >= len(a.units) || a.units[i].kind != uOp || inConflict[i] != "" {
			out = append(out, i)
			continue
		}
		u := a.units[i]
		kept := slices.DeleteFunc(slices.Clone(u.sources), func(s string) bool { return !whole[s] })
		if len(kept) == 0 {
			for _, s := range u.sources {
				lost[s]++
			}
			continue
		}
		if len(kept) < len(u.sources) {
			if cp == nil {
				c := *src
				c.units = slices.Clone(src.units)
				cp = &c
			}
			cp.units[i].op, cp.units[i].sources = a.opFor(u, kept), kept
		}
		out = append(out, i)
	}
	var notes []string
	for _, s := range slices.SortedFunc(maps.Keys(lost), idCompare) {
		notes = append(notes, fmt.Sprintf("%s's %s left out: its whole change does not land", s, session.Plural(lost[s], "playbook operation")))
	}
	if cp != nil {
		src = cp
	}
	return src, out, notes
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
	wo := a.wholeOutcome(c, choice, inConflict)
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
		r.WholeFile, r.Kept, r.Dropped, r.AlsoLands = true, kept, dropped, nil
		r.PlaybookKept, r.PlaybookDropped = wo.PlaybookLands, wo.PlaybookDrops
		if o == c {
			out = append([]session.ConflictResolved{r}, out...)
		} else {
			out = append(out, r)
		}
	}
	return out, nil
}

// keptDropped are the conflict's own change units a choice keeps and drops (its playbook
// operations for a playbook conflict).
func (a *Analysis) keptDropped(c *conflict, choice string) (kept, dropped []session.ReviewHunk, okept, odropped []session.ReviewOp) {
	inConflict := map[int]string{}
	for _, i := range c.units {
		inConflict[i] = c.id
	}
	for _, i := range c.units {
		keep := choice == commands.ChooseBoth || slices.Contains(c.sides[choice], i)
		if u := a.units[i]; u.kind == uOp {
			op := session.ReviewOp{SubagentID: strings.Join(u.sources, ", "), Text: opText(u.op)}
			if keep {
				okept = append(okept, op)
			} else {
				odropped = append(odropped, op)
			}
			continue
		}
		if keep {
			kept = append(kept, a.reviewHunk(i, inConflict))
		} else {
			dropped = append(dropped, a.reviewHunk(i, inConflict))
		}
	}
	return kept, dropped, okept, odropped
}

// resultKept is what a vote or consensus choice keeps and drops: the chosen member's whole
// result (each file it changes, its playbook operations), and every other side's.
func (a *Analysis) resultKept(c *conflict, choice string) (kept, dropped []session.ReviewHunk, okept, odropped []session.ReviewOp) {
	for _, s := range c.order {
		m := a.member(s)
		hs, ops := memberHunks(m), memberOps(m, a.in.Playbook)
		if s == choice {
			kept, okept = append(kept, hs...), append(okept, ops...)
		} else {
			dropped, odropped = append(dropped, hs...), append(odropped, ops...)
		}
	}
	return kept, dropped, okept, odropped
}

// memberHunks are a member's whole change set, one entry per file: its recorded changes,
// else its proposed patches.
func memberHunks(m Member) []session.ReviewHunk {
	var out []session.ReviewHunk
	if m.real() {
		for _, fc := range m.Changes.Files {
			text := render.FileChangeLine(fc) + "\n"
			if !fc.Binary {
				text += hunkBodyWithHeaders(fc.Diff)
			}
			out = append(out, session.ReviewHunk{SubagentID: m.ID, File: fc.Path, Text: text})
		}
		return out
	}
	if m.Capsule == nil {
		return nil
	}
	for _, ps := range m.Capsule.PatchSuggestions {
		h := session.ReviewHunk{SubagentID: m.ID, Text: ps.Diff}
		if len(ps.Paths) > 0 {
			h.File = ps.Paths[0]
		}
		out = append(out, h)
	}
	return out
}

// memberOps are the playbook operations of a member's Downstream Context (those left out with
// a note are not).
func memberOps(m Member, book []session.PlaybookEntry) []session.ReviewOp {
	if m.Capsule == nil {
		return nil
	}
	var out []session.ReviewOp
	for _, it := range parseDownstream(m.Capsule.DownstreamContext, book) {
		if it.problem == "" {
			out = append(out, session.ReviewOp{SubagentID: m.ID, Text: opText(it.op)})
		}
	}
	return out
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
