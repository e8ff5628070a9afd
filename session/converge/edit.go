package converge

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// Choice edit: the reviewer writes the conflicted lines of a hunk conflict by hand.
//
// The region of a hunk conflict is the old (base) lines [start, end) that its hunks span
// together (overlapping hunks chain into one contiguous span; a conflict of insertions at one
// point has an empty region). The base lines of the region, and up to 3 lines of context on
// each side, are read from the hunks themselves (their context and deleted lines), so the
// engine needs no file. EditTemplate shows each side's lines for the region (the region as
// that side's hunks leave it), the base, and git's diff3 conflict markers; ResolveEdit records
// the reviewer's text (ConflictResolved.Content, Choice edit, Method manual, every side
// overridden); Output puts one hunk in place of the conflict's hunks: the region's base lines
// replaced by that text (the lines both share at its start and end are left as context), so
// the file's patch is base → edited text merged with the file's other hunks.
//
// Only hunk conflicts can be edited, and only those whose hunks change an existing file (no
// hunk creates or deletes it) and describe one region (every base line of it is known, and no
// side's own hunks overlap each other). File conflicts cannot: a text modification whose
// whole diff was recorded is split into hunks, so its overlaps are hunk conflicts already; a
// file conflict always involves a whole-file change (an add, delete, rename, binary, symlink,
// cut diff or mode change) whose region is not lines of a base. Findings, playbook entries,
// votes, consensus and bases are not text of a file.
//
// Newlines: the text's last line ends as the base region's last line does. Text without a
// final newline gets one (a region inside the file must end with one, and so must an
// insertion); when the base region ends the file without a newline, the text's final newline
// (which editors add) is dropped, so the file still ends without one. Empty text means the
// region's lines become nothing.

// region is the base lines of a hunk conflict.
type region struct {
	file          string
	start, end    int      // old lines [start, end)
	base          []string // the old lines of the region, with their endings
	before, after []string // up to 3 known old lines just before start and after end (context)
}

// editRegion is the region of a hunk conflict, and its sides' lines for it; ok is false when
// the conflict cannot be written by hand (see above for why).
func (a *Analysis) editRegion(c *conflict) (reg region, sides map[string][]string, ok bool) {
	if c.kind != KindHunk || len(c.units) == 0 {
		return region{}, nil, false
	}
	known := map[int]string{}
	h0 := a.units[c.units[0]].h
	reg = region{file: h0.file, start: h0.coreStart, end: h0.end()}
	for _, i := range c.units {
		h := a.units[i].h
		if h.isNew || h.isDelete || h.file != reg.file {
			return region{}, nil, false
		}
		reg.start, reg.end = min(reg.start, h.coreStart), max(reg.end, h.end())
		at := h.start
		for _, l := range h.lines {
			if l.Old() {
				if _, seen := known[at]; !seen {
					known[at] = l.Line
				}
				at++
			}
		}
	}
	for i := reg.start; i < reg.end; i++ {
		l, seen := known[i]
		if !seen {
			return region{}, nil, false
		}
		reg.base = append(reg.base, l)
	}
	for i := reg.start - 1; i >= 0 && i >= reg.start-3; i-- {
		l, seen := known[i]
		if !seen {
			break
		}
		reg.before = append([]string{l}, reg.before...)
	}
	for i := reg.end; i < reg.end+3; i++ {
		l, seen := known[i]
		if !seen {
			break
		}
		reg.after = append(reg.after, l)
	}
	sides = map[string][]string{}
	for _, id := range c.order {
		ls, fits := a.sideLines(reg, c.sides[id])
		if !fits {
			return region{}, nil, false
		}
		sides[id] = ls
	}
	return reg, sides, true
}

// sideLines is the region as one side's hunks leave it. fits is false when the side's own
// hunks overlap each other.
func (a *Analysis) sideLines(reg region, us []int) (lines []string, fits bool) {
	hs := make([]*hunk, len(us))
	for k, i := range us {
		hs[k] = a.units[i].h
	}
	slices.SortStableFunc(hs, func(x, y *hunk) int {
		if x.coreStart != y.coreStart {
			return x.coreStart - y.coreStart
		}
		return min(x.coreLen, 1) - min(y.coreLen, 1) // an insertion goes before a change at its point
	})
	out := []string{}
	cur := reg.start
	for _, h := range hs {
		if h.coreStart < cur || h.end() > reg.end {
			return nil, false
		}
		out = append(out, reg.base[cur-reg.start:h.coreStart-reg.start]...)
		for _, l := range h.core() {
			if l.New() {
				out = append(out, l.Line)
			}
		}
		cur = h.end()
	}
	return append(out, reg.base[cur-reg.start:]...), true
}

// editable reports whether the conflict's lines can be written by hand (choice edit).
func (a *Analysis) editable(c *conflict) bool {
	_, _, ok := a.editRegion(c)
	return ok
}

// whyNotEdit says why a conflict has no choice edit.
func whyNotEdit(kind string) string {
	switch kind {
	case KindHunk:
		return "its hunks create or delete the file, or do not describe one region of it"
	case KindFile:
		return "a whole-file change (add, delete, rename, binary, mode) is not lines to write; the chosen side's change is taken whole"
	case KindBase:
		return "it decides whose changes are kept, not lines of a file"
	}
	return "only the lines of a hunk conflict can be written by hand"
}

// EditTemplate is the text the reviewer's editor opens for choice edit of a hunk conflict:
// the conflicted region in git's diff3 style, labelled by subagent id and base:
//
//	<<<<<<< sa-1
//	(the region as sa-1's hunks leave it)
//	||||||| base
//	(the region's base lines)
//	=======
//	(the region as sa-2's hunks leave it)
//	>>>>>>> sa-2
//
// The sides are in the conflict's side order. With 3 or more sides, each side after the
// first is one block opened by a separator naming it ("======= sa-2", "======= sa-3"), and
// the closing marker names the last. A line that ends the file without a newline gets one
// here, so every marker stands on its own line. It fails for a conflict that has no choice
// edit.
func (a *Analysis) EditTemplate(conflictID string) (string, error) {
	c := a.conflict(conflictID)
	if c == nil {
		return "", fmt.Errorf("%s is not a conflict of %s", conflictID, a.in.ID)
	}
	reg, sides, ok := a.editRegion(c)
	if !ok {
		return "", fmt.Errorf("%s cannot be edited by hand: %s", conflictID, whyNotEdit(c.kind))
	}
	var b strings.Builder
	write := func(ls []string) {
		for _, l := range ls {
			b.WriteString(l)
			if !strings.HasSuffix(l, "\n") {
				b.WriteString("\n")
			}
		}
	}
	fmt.Fprintf(&b, "<<<<<<< %s\n", c.order[0])
	write(sides[c.order[0]])
	b.WriteString("||||||| base\n")
	write(reg.base)
	for _, id := range c.order[1:] {
		if len(c.order) > 2 {
			fmt.Fprintf(&b, "======= %s\n", id)
		} else {
			b.WriteString("=======\n")
		}
		write(sides[id])
	}
	fmt.Fprintf(&b, ">>>>>>> %s\n", c.order[len(c.order)-1])
	return b.String(), nil
}

// ResolveEdit checks a hand-written resolution of a conflict (choice edit) and returns its
// event: Method manual, Choice edit, Content the text the conflicted lines become, every side
// overridden. Empty content is allowed: the lines become nothing. Content must be valid UTF-8
// without NUL (it is text of a text file).
func (a *Analysis) ResolveEdit(conflictID, content, note string) (session.ConflictResolved, error) {
	c := a.conflict(conflictID)
	if c == nil {
		return session.ConflictResolved{}, fmt.Errorf("%s is not a conflict of %s", conflictID, a.in.ID)
	}
	if !a.editable(c) {
		return session.ConflictResolved{}, fmt.Errorf("%s cannot be edited by hand: %s; choose %s", conflictID, whyNotEdit(c.kind), orList(a.choices(c)))
	}
	if err := checkContent(conflictID, content); err != nil {
		return session.ConflictResolved{}, err
	}
	r := a.resolution(c, ChooseEdit, commands.ResolutionManual, note)
	r.Content = content
	return r, nil
}

func checkContent(conflictID, content string) error {
	if !utf8.ValidString(content) {
		return fmt.Errorf("the text for %s is not valid UTF-8", conflictID)
	}
	if strings.ContainsRune(content, 0) {
		return fmt.Errorf("the text for %s contains NUL; it must be text", conflictID)
	}
	return nil
}

// editLines is the reviewer's text as lines of the region, its last line ending as the
// base region's does (see the package comment on newlines above).
func editLines(reg region, content string) []string {
	lines := splitLines(content)
	n := len(lines)
	if n == 0 {
		return nil
	}
	eol := len(reg.base) == 0 || strings.HasSuffix(reg.base[len(reg.base)-1], "\n")
	switch last := lines[n-1]; {
	case eol && !strings.HasSuffix(last, "\n"):
		lines[n-1] = last + "\n"
	case !eol && strings.HasSuffix(last, "\n"):
		lines[n-1] = strings.TrimSuffix(strings.TrimSuffix(last, "\n"), "\r")
	}
	return lines
}

// editHunk is the hunk that replaces the conflict's region with the reviewer's text: the
// lines the text shares with the base at its start and end are context, the rest is deleted
// and added. It is nil when the text is the base itself (nothing changes).
func (a *Analysis) editHunk(c *conflict, content string) (*hunk, region) {
	reg, _, _ := a.editRegion(c)
	base, text := reg.base, editLines(reg, content)
	if slices.Equal(base, text) {
		return nil, reg
	}
	p := 0
	for p < len(base) && p < len(text) && base[p] == text[p] {
		p++
	}
	q := 0
	for q < len(base)-p && q < len(text)-p && base[len(base)-1-q] == text[len(text)-1-q] {
		q++
	}
	// A pure insertion must stay strictly inside the region: at its start or end it would
	// meet another member's insertion there, and their order would be a guess.
	if p+q == len(base) && len(base) > 0 {
		switch {
		case p == 0:
			q--
		case q == 0:
			p--
		}
	}
	lead := append(slices.Clone(reg.before), base[:p]...)
	lead = lead[max(0, len(lead)-3):]
	trail := append(slices.Clone(base[len(base)-q:]), reg.after...)
	trail = trail[:min(3, len(trail))]
	h := &hunk{file: reg.file, lead: len(lead), trail: len(trail), coreStart: reg.start + p, coreLen: len(base) - p - q}
	h.start = h.coreStart - h.lead
	for _, l := range lead {
		h.lines = append(h.lines, gitdiff.Line{Op: gitdiff.OpContext, Line: l})
	}
	for _, l := range base[p : len(base)-q] {
		h.lines = append(h.lines, gitdiff.Line{Op: gitdiff.OpDelete, Line: l})
	}
	for _, l := range text[p : len(text)-q] {
		h.lines = append(h.lines, gitdiff.Line{Op: gitdiff.OpAdd, Line: l})
	}
	for _, l := range trail {
		h.lines = append(h.lines, gitdiff.Line{Op: gitdiff.OpContext, Line: l})
	}
	h.key = "edit\x00" + c.id
	return h, reg
}

// editUnit is the unit an edit resolution stands for (nil hunk: the text is the base), and
// the note saying the lines were written by hand.
func (a *Analysis) editUnit(c *conflict, lines *session.LineRange, content string) (*unit, string) {
	h, reg := a.editHunk(c, content)
	where := session.Sanitize(reg.file)
	if lines != nil {
		where += ":" + lines.String()
	}
	n := len(editLines(reg, content))
	note := fmt.Sprintf("%s: %s edited by the reviewer (%s in place of %s)", c.id, where,
		session.Plural(n, "line"), session.Plural(len(reg.base), "line"))
	if h == nil {
		return nil, note + "; the lines stay as they were"
	}
	u := &unit{kind: uHunk, h: h, sources: slices.Clone(c.order), edit: c.id}
	for _, i := range c.units { // the file's modes, for Result.Files
		if fc := a.units[i].fc; fc != nil {
			u.fc = fc
			break
		}
	}
	h.sources = u.sources
	return u, note
}
