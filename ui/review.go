package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// The review of a hunk or file conflict that carries its whole picture (session.ConflictReview,
// issue 27): what lands is what was shown. The body shows each side's whole change to the file,
// every hunk, those in a conflict marked; the choices tell a region choice ("take sa-2 here")
// from a side's whole version of the file ("take sa-2's cart.go"); and the selected choice's
// result (the file's change, and the other sides' hunks that still land with it) is drawn
// above the sides before enter confirms it. Recordings without a review draw as before.

// reviewChoices adds the side choices of a conflict with a review: each side's region choice,
// then each side's whole version of the file where it differs from the region choice.
func (m *Model) reviewChoices(cf *session.Conflict, add func(choice), resolve func(string, ...string) func(string) string) {
	rv := cf.Review
	file := session.Sanitize(rv.File)
	outcome := func(ch string, whole bool) *session.ChoiceOutcome {
		for i, o := range rv.Outcomes {
			if o.Choice == ch && o.WholeFile == whole {
				return &rv.Outcomes[i]
			}
		}
		return nil
	}
	for _, sd := range cf.Sides {
		id := sd.SubagentID
		if !allowed(cf, id) {
			continue
		}
		o := outcome(id, false)
		c := choice{label: "take " + id + " here", line: resolve(id), outcome: o,
			does: "keep " + id + "'s change to this region only; the other side's change here is dropped"}
		if o != nil && len(o.AlsoLands) > 0 {
			c.risky = true
			var who []string
			for _, h := range o.AlsoLands {
				if !slices.Contains(who, h.SubagentID) {
					who = append(who, h.SubagentID)
				}
			}
			if n := len(o.AlsoLands); n == 1 {
				c.does += fmt.Sprintf("; %s's other hunk in %s still lands with it (listed when selected)", strings.Join(who, ", "), file)
			} else {
				c.does += fmt.Sprintf("; %s's %d other hunks in %s still land with it (listed when selected)", strings.Join(who, ", "), n, file)
			}
		}
		add(c)
	}
	for _, sd := range cf.Sides {
		id := sd.SubagentID
		o := outcome(id, true)
		if o == nil {
			continue
		}
		does := "land " + id + "'s whole version of " + file + ": every other change to it is dropped"
		if n := len(o.Drops); n > 0 {
			does += fmt.Sprintf(" (%s)", session.Plural(n, "hunk"))
		}
		add(choice{label: "take " + id + "'s " + file, line: resolve(id, "--whole-file"), outcome: o, risky: len(o.Drops) > 0, does: does})
	}
}

// wholeChanges are the sides to draw for a conflict with a review: each member's whole change
// to the file, hunk by hunk, each marked with the conflict it is in or as landing with any
// region choice.
func (m *Model) wholeChanges(cf *session.Conflict) []session.ConflictSide {
	var out []session.ConflictSide
	for _, ch := range cf.Review.Changes {
		sd := session.ConflictSide{SubagentID: ch.SubagentID}
		for _, s := range cf.Sides {
			if s.SubagentID == ch.SubagentID {
				sd.Confidence = s.Confidence
			}
		}
		in := 0
		for _, h := range ch.Hunks {
			if h.Conflict == cf.ID {
				in++
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "whole change to %s: %s, %d in %s\n", cf.Review.File, session.Plural(len(ch.Hunks), "hunk"), in, cf.ID)
		for _, h := range ch.Hunks {
			switch h.Conflict {
			case cf.ID:
				fmt.Fprintf(&b, "⚠ in %s:\n", cf.ID)
			case "":
				b.WriteString("✓ lands with any region choice:\n")
			default:
				fmt.Fprintf(&b, "⚠ in %s (decided there):\n", h.Conflict)
			}
			b.WriteString(h.Text)
		}
		sd.Value = b.String()
		out = append(out, sd)
	}
	return out
}

// selectedOutcome draws what the selected choice makes of the file: the other sides' hunks
// that still land with it, and the file's change. With nothing selected it says when a
// region choice would land more than its side.
func (m *Model) selectedOutcome(cf *session.Conflict, inner int) []string {
	cs := m.choices(cf.ID)
	var sel *choice
	if m.ib != nil && m.ib.sel >= 0 && m.ib.sel < len(cs) {
		sel = &cs[m.ib.sel]
	}
	if sel == nil || sel.outcome == nil {
		for _, o := range cf.Review.Outcomes {
			if !o.WholeFile && len(o.AlsoLands) > 0 {
				return []string{m.sty.warn.Render(ansi.Truncate(session.Sanitize(
					"⚠ a region choice still lands other changes to "+cf.Review.File+": select a choice to see its result"), inner, "…"))}
			}
		}
		return nil
	}
	o := sel.outcome
	var out []string
	if len(o.AlsoLands) > 0 {
		out = append(out, m.sty.warn.Render(ansi.Truncate(session.Sanitize(fmt.Sprintf("⚠ with %s, these changes of other sides also land:", sel.label)), inner, "…")))
		// Each hunk's changed lines only, so they fit a small screen; its context is in the
		// side's whole change below.
		for _, h := range o.AlsoLands {
			head, rest, _ := strings.Cut(h.Text, "\n")
			out = append(out, m.sty.bold.Render(ansi.Truncate(session.Sanitize(h.SubagentID+"'s hunk "+head), inner, "…")))
			var changed []string
			for _, l := range wrap(rest, inner) {
				if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
					changed = append(changed, l)
				}
			}
			out = append(out, m.diffLines(changed)...)
		}
	}
	// The playbook operations the choice drops and lands: a member's land only with its whole
	// change (session/converge).
	for _, op := range o.PlaybookDrops {
		out = append(out, m.sty.warn.Render(ansi.Truncate(session.Sanitize(fmt.Sprintf("⚠ playbook: %s's %s is dropped", op.SubagentID, op.Text)), inner, "…")))
	}
	for _, op := range o.PlaybookLands {
		out = append(out, m.sty.dim.Render(ansi.Truncate(session.Sanitize(fmt.Sprintf("playbook: %s's %s lands", op.SubagentID, op.Text)), inner, "…")))
	}
	head := fmt.Sprintf("with %s, %s becomes:", sel.label, cf.Review.File)
	if o.Diff == "" {
		head = fmt.Sprintf("with %s, %s stays as it is", sel.label, cf.Review.File)
	}
	out = append(out, m.sty.bold.Render(ansi.Truncate(session.Sanitize(head), inner, "…")))
	out = append(out, m.diffLines(wrap(o.Diff, inner))...)
	if len(o.Pending) > 0 {
		out = append(out, m.sty.dim.Render(ansi.Truncate("not counted: "+strings.Join(o.Pending, ", ")+" (decided there)", inner, "…")))
	}
	return append(out, m.sty.sep.Render(strings.Repeat("─", inner)))
}

// diffLines colours a diff's lines (already wrapped), each on its own (diffPaint).
func (m *Model) diffLines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = m.diffPaint(l)(l)
	}
	return out
}

// diffBlock is text holding diffs (a /diff, a side of a review, a patch) sanitised, wrapped to
// width and coloured the one way the workbench colours diffs: each source line is classed
// once (diffPaint) and all its wrapped pieces take its colour.
func (m *Model) diffBlock(text string, width int) []string {
	var out []string
	for _, src := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		paint := m.diffPaint(src)
		for _, l := range wrapSplit(src, width) {
			out = append(out, paint(l))
		}
	}
	return out
}

// diffPaint is the colour of one line of a diff: file headers (git's, and summit's line per
// changed file) bold, hunk headers blue, added lines green, removed red; a reviewer's marks
// (why a side stands apart, ⚠ in a conflict) and summit's measurements in their colours.
func (m *Model) diffPaint(l string) func(...string) string {
	switch {
	case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "diff --git ") ||
		strings.HasPrefix(l, "index ") || strings.HasPrefix(l, "new file mode") || strings.HasPrefix(l, "deleted file mode") ||
		strings.HasPrefix(l, "rename from ") || strings.HasPrefix(l, "rename to "):
		return m.sty.bold.Render
	case strings.HasPrefix(l, "@@"):
		return m.sty.tool.Render
	case strings.HasPrefix(l, "+"):
		return m.sty.add.Render
	case strings.HasPrefix(l, "-"):
		return m.sty.del.Render
	case strings.HasPrefix(l, "measured: ✓"):
		return m.sty.ok.Render
	case strings.HasPrefix(l, "measured: ✗"):
		return m.sty.bad.Render
	case strings.HasPrefix(l, "why: ") || strings.HasPrefix(l, "⚠ "):
		return m.sty.warn.Render
	case fileChangeLine(l):
		return m.sty.bold.Render
	}
	return plainPaint
}

func plainPaint(s ...string) string { return strings.Join(s, "") }

// fileChangeLine reports whether l is summit's line for a changed file
// (render.FileChangeLine: "modified cart.go +3 −1"), which heads that file's diff.
func fileChangeLine(l string) bool {
	kind, rest, ok := strings.Cut(l, " ")
	if !ok || rest == "" {
		return false
	}
	switch kind {
	case session.ChangeAdded, session.ChangeModified, session.ChangeDeleted, session.ChangeRenamed, session.ChangeMode:
		return strings.Contains(rest, " +") || strings.HasSuffix(rest, "(binary)") || strings.Contains(rest, "(mode ") || strings.Contains(rest, " → ")
	}
	return false
}

// markerLines colours git's conflict markers in a merged region.
func (m *Model) markerLines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		t := strings.TrimLeft(l, " ")
		switch {
		case strings.HasPrefix(t, "<<<<<<<") || strings.HasPrefix(t, "|||||||") || strings.HasPrefix(t, "=======") || strings.HasPrefix(t, ">>>>>>>"):
			out[i] = m.sty.warn.Render(l)
		default:
			out[i] = l
		}
	}
	return out
}
