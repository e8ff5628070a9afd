package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// The approvals inbox: every pending permission request and conflict review of the whole
// tree, oldest first, answered in place. A single open item is what other tools call a
// prompt; here it is the inbox showing that item.
//
// Invariants (the security contract of this file):
//   - No single keystroke takes a decision. A number or ↑↓ only selects a choice; enter
//     confirms the selected one. Nothing is selected when an item is shown.
//   - The inbox never takes keys typed for something else. It opens by itself only while
//     the user is idle (nothing typed for typingQuiet, the input empty, no other overlay);
//     otherwise it docks above the input and says which key opens it. Once open, a printable
//     key that is not one of its choices (a letter, `/`, a digit out of range) closes it back
//     to the dock and goes, with everything typed after it, to the input: nothing is lost
//     and nothing is decided. Keys in the first grace period after it opened by itself are
//     treated the same way.
//   - An answered item never reopens while its answer is on the way; an item dismissed with
//     esc does not open by itself again (ctrl+o or /inbox reopens it).

// typingQuiet is how long the user must have typed nothing before the inbox may open by
// itself and take the keys.
const typingQuiet = 1500 * time.Millisecond

// inbox is the open overlay's state.
type inbox struct {
	id     string // the item shown
	sel    int    // selected choice, -1 = none
	typing bool   // typing a message (deny) or a note (review)
	text   string // that message or note
	opened time.Time
	grace  time.Duration
	// typed holds the numbers that selected a choice since the last other key: if a letter
	// follows, it was typing after all, and they go to the input with it.
	typed string
	// scroll is the first body line shown (PgUp/PgDn): a review longer than the box is read
	// whole before a choice is confirmed.
	scroll int
}

// choice is one answer to an item.
type choice struct {
	key   string // "1"…"9"
	label string
	does  string // what it does, in the reviewer's words
	risky bool   // marked ⚠: grants more than this one call, or drops work
	line  func(text string) string
	// needsText: enter opens a text field (deny with a message, a note) instead of deciding.
	needsText bool
	// edit: enter opens the conflicted lines in the reviewer's editor.
	edit     bool
	textHint string
	// outcome is what the choice makes of the conflict's file (recorded in the review), shown
	// when the choice is selected, before enter confirms it.
	outcome *session.ChoiceOutcome
}

// waiting lists the items still waiting that the user has not answered in this workbench.
// It is asked several times a frame (header, dock, footer, inbox) and on every key, so it is
// kept until the state or the answers change (the fold only ever adds events; answered only
// grows). Callers must not modify the slice.
func (m *Model) waiting() []session.Waiting {
	key := waitKey{m.st, m.st.LastSeq, len(m.answered)}
	if m.waitMemo != nil && m.waitMemoKey == key {
		return m.waitMemo
	}
	all := session.WaitingItems(m.st)
	out := make([]session.Waiting, 0, len(all)+1)
	// An untrusted workspace's trust question is the workbench's own item (trust.go), asked
	// first: it waits from the session's start.
	if m.st.TrustPending() && !m.answered[session.TrustItem] && m.o.Replay == nil {
		out = append(out, session.Waiting{ID: session.TrustItem})
	}
	for _, w := range all {
		if !m.answered[w.ID] {
			out = append(out, w)
		}
	}
	m.waitMemo, m.waitMemoKey = out, key
	return out
}

// waitKey is what the waiting list depends on.
type waitKey struct {
	st       *session.State
	seq      uint64
	answered int
}

// autoPrompt keeps the inbox in step with the session: an item settled elsewhere (by a typed
// /approve, a stopped subagent, the answer just sent) leaves it, and a new item opens it by
// itself only while the user is idle. Replays never prompt.
func (m *Model) autoPrompt() {
	if m.o.Replay != nil {
		m.ib = nil
		return
	}
	items := m.waiting()
	if ib := m.ib; ib != nil {
		still := false
		for _, w := range items {
			still = still || w.ID == ib.id
		}
		if !still {
			// Show the next waiting item, without taking keys typed meanwhile.
			m.ib = nil
			for _, w := range items {
				if !m.dismissed[w.ID] {
					m.showItem(w.ID, true)
					break
				}
			}
		}
		return
	}
	if !m.idle() {
		return
	}
	for _, w := range items {
		if !m.dismissed[w.ID] {
			m.showItem(w.ID, true)
			return
		}
	}
}

// idle reports whether an item may open by itself and take the keys: the user is typing
// nothing, nothing else is on top, and the input is empty.
func (m *Model) idle() bool {
	return !m.help && m.panel == nil && !m.searching && !m.filtering && !m.seeking && m.in.Value() == "" &&
		m.o.Now().Sub(m.lastKey) >= typingQuiet
}

// showItem opens the inbox on one item. auto marks an opening the user did not ask for: its
// grace period applies.
func (m *Model) showItem(id string, auto bool) {
	ib := &inbox{id: id, sel: -1, opened: m.o.Now()}
	if auto {
		ib.grace = m.o.Grace
	}
	m.ib = ib
}

// openInbox is ctrl+o and /inbox: the oldest waiting item, dismissed or not.
func (m *Model) openInbox() {
	items := m.waiting()
	if len(items) == 0 {
		m.setNotice("the inbox is empty: nothing waits for you", false)
		return
	}
	for _, w := range items {
		delete(m.dismissed, w.ID)
	}
	m.showItem(items[0].ID, false)
}

// openConflict opens the inbox on one conflict (enter on its tree row).
func (m *Model) openConflict(id string) {
	for _, w := range m.waiting() {
		if w.ID == id {
			delete(m.dismissed, id)
			m.showItem(id, false)
			return
		}
	}
}

// choices are the answers to an item, in order.
func (m *Model) choices(id string) []choice {
	var cs []choice
	add := func(c choice) {
		c.key = strconv.Itoa(len(cs) + 1)
		cs = append(cs, c)
	}
	if id == session.TrustItem {
		m.trustChoices(add) // trust.go
		return cs
	}
	if pr := m.st.Permission(id); pr != nil {
		who := pr.SubagentID
		deny := func(text string) string {
			reason := "denied in the workbench"
			if strings.TrimSpace(text) != "" {
				reason = strings.TrimSpace(text)
			}
			return "/deny " + id + " --reason " + strconv.Quote(reason)
		}
		if pr.Tool == "bypassPermissions" {
			add(choice{label: "allow bypassPermissions", risky: true,
				does: who + " runs every tool, the shell included, without asking again",
				line: func(string) string { return "/approve " + id }})
		} else {
			add(choice{label: "allow once", does: "runs this call only; the next one asks again",
				line: func(string) string { return "/approve " + id }})
			add(choice{label: "allow for " + who, risky: true,
				does: "this call and every later " + session.Sanitize(pr.Tool) + " call of " + who + " run without asking",
				line: func(string) string { return "/approve " + id + " --scope subagent" }})
		}
		add(choice{label: "deny", does: "the call fails; " + who + " is told it was denied and carries on", line: deny})
		add(choice{label: "deny with a message…", does: "type what to do instead; " + who + " gets it as the tool error",
			line: deny, needsText: true, textHint: "message to " + who})
		return cs
	}
	cf := m.st.Conflict(id)
	if cf == nil {
		return nil
	}
	resolve := func(choice string, flags ...string) func(string) string {
		return func(note string) string {
			l := "/resolve " + id + " --choose " + choice
			for _, f := range flags {
				l += " " + f
			}
			if n := strings.TrimSpace(m.notes[id]); n != "" {
				l += " --note " + strconv.Quote(n)
			}
			return l
		}
	}
	if cf.Kind == "apply" { // an /apply that overlapped edits made to the workspace since
		for _, sd := range cf.Sides {
			if allowed(cf, sd.SubagentID) {
				add(choice{label: "take " + sd.SubagentID, does: "land " + sd.SubagentID + "'s version of " + session.Sanitize(cf.File) + "; the workspace's edits to it are replaced",
					line: resolve(sd.SubagentID)})
			}
		}
		add(choice{label: "keep the workspace", does: "keep the workspace's version of " + session.Sanitize(cf.File) + "; the subagent's edits to it are dropped",
			line: resolve("none")})
		if cf.EditTemplate != "" && allowed(cf, "edit") {
			add(choice{label: "edit in $EDITOR…", edit: true,
				does: "write " + session.Sanitize(cf.File) + " yourself: your editor opens it merged, with git's conflict markers; what you save lands"})
		}
		add(choice{label: "note…", does: "attach a note to the decision (it is recorded with it)", needsText: true, textHint: "note"})
		return cs
	}
	if cf.Review != nil {
		m.reviewChoices(cf, add, resolve)
	} else {
		for _, sd := range cf.Sides {
			if allowed(cf, sd.SubagentID) {
				add(choice{label: "take " + sd.SubagentID, does: "keep " + sd.SubagentID + "'s change here; the other side's is dropped",
					line: resolve(sd.SubagentID)})
			}
		}
	}
	if allowed(cf, "both") {
		add(choice{label: "both", risky: true, does: "keep every side's change, one after the other", line: resolve("both")})
	}
	if allowed(cf, "none") {
		add(choice{label: "none", risky: true, does: "drop every side's change here; the lines stay as they are", line: resolve("none")})
	}
	if cf.EditTemplate != "" && len(cf.Choices) > 0 && allowed(cf, "edit") {
		add(choice{label: "edit in $EDITOR…", edit: true,
			does: "write the lines yourself: your editor opens them with conflict markers; what you save is recorded"})
	}
	add(choice{label: "note…", does: "attach a note to the decision (it is recorded with it)", needsText: true, textHint: "note"})
	return cs
}

func allowed(cf *session.Conflict, choice string) bool {
	if len(cf.Choices) == 0 {
		return true // older recordings: the orchestrator decides
	}
	for _, c := range cf.Choices {
		if c == choice {
			return true
		}
	}
	return false
}

// inboxKey handles a key while the inbox is open. It returns handled=false when the key
// was not for the inbox: the inbox has docked and the caller routes the key on.
func (m *Model) inboxKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	ib := m.ib
	cs := m.choices(ib.id)
	if cs == nil {
		m.ib = nil
		return nil, true
	}
	s := k.String()
	if ib.typing {
		switch s {
		case "esc":
			ib.typing, ib.text = false, ""
		case "enter":
			return m.confirmText(cs), true
		case "backspace":
			if r := []rune(ib.text); len(r) > 0 {
				ib.text = string(r[:len(r)-1])
			}
		case "space":
			ib.text += " "
		default:
			if k.Text != "" && len(ib.text) < 2000 {
				ib.text += k.Text
			}
		}
		return nil, true
	}
	if m.o.Now().Sub(ib.opened) < ib.grace {
		// Opened by itself a moment ago: whatever arrives now was typed for something else.
		if k.Text != "" {
			m.dock()
			return nil, false
		}
		return nil, true
	}
	switch {
	case s == "esc":
		m.dismissed[ib.id] = true
		m.ib = nil
		return nil, true
	case s == "up":
		ib.typed = ""
		ib.sel = max(0, ib.sel-1)
		return nil, true
	case s == "down":
		ib.typed = ""
		ib.sel = min(len(cs)-1, max(0, ib.sel+1))
		return nil, true
	case s == "tab" || s == "shift+tab":
		m.nextItem(s == "tab")
		return nil, true
	case s == "enter":
		if ib.sel < 0 || ib.sel >= len(cs) {
			m.setNotice("select a choice first: ↑↓ or its number, then enter", false)
			return nil, true
		}
		c := cs[ib.sel]
		if c.needsText {
			ib.typing, ib.text = true, m.notes[ib.id]
			return nil, true
		}
		if c.edit {
			if cf := m.st.Conflict(ib.id); cf != nil {
				return m.startEdit(cf.ID, cf.EditTemplate), true
			}
			return nil, true
		}
		if c.line == nil { // "not now": the item docks, nothing is sent
			m.dismissed[ib.id] = true
			m.ib = nil
			return nil, true
		}
		return m.answer(c.line("")), true
	case s == "pgup":
		ib.scroll = max(0, ib.scroll-max(1, m.h/3))
		return nil, true
	case s == "pgdown":
		ib.scroll += max(1, m.h/3) // clamped when drawn
		return nil, true
	case s == "ctrl+f":
		return nil, true
	}
	if len(s) == 1 && s[0] >= '1' && s[0] <= '9' {
		if i := int(s[0] - '1'); i < len(cs) {
			ib.sel = i
			ib.typed += s
			return nil, true
		}
	}
	if k.Text != "" {
		// Typing: not an answer. The inbox docks and the key goes on to the input.
		m.dock()
		return nil, false
	}
	return nil, true
}

// confirmText finishes a text field: a deny message decides; a note is kept for the review.
func (m *Model) confirmText(cs []choice) tea.Cmd {
	ib := m.ib
	c := cs[ib.sel]
	text := ib.text
	ib.typing, ib.text = false, ""
	if c.line == nil { // the review's note
		m.notes[ib.id] = strings.TrimSpace(text)
		ib.sel = -1
		return nil
	}
	return m.answer(c.line(text))
}

// answer sends a decision and moves the inbox on.
func (m *Model) answer(line string) tea.Cmd {
	id := m.ib.id
	m.answered[id] = true
	m.ib = nil
	// Show the next waiting item: the user is answering, so the keys are theirs.
	for _, w := range m.waiting() {
		if !m.dismissed[w.ID] {
			m.showItem(w.ID, false)
			break
		}
	}
	return m.send(line, false)
}

// dock closes the inbox without deciding; the dock line says how to reopen it. Numbers
// typed just before go to the input, where the rest of the typing goes.
func (m *Model) dock() {
	if m.ib != nil {
		m.dismissed[m.ib.id] = true
		if m.ib.typed != "" {
			m.typeOver()
			m.in.SetValue(m.in.Value() + m.ib.typed)
			m.in.CursorEnd()
		}
	}
	m.ib = nil
	m.focus = focusInput
	m.in.Focus()
}

// nextItem shows the next (or previous) waiting item.
func (m *Model) nextItem(fwd bool) {
	items := m.waiting()
	if len(items) < 2 {
		return
	}
	i := 0
	for j, w := range items {
		if w.ID == m.ib.id {
			i = j
		}
	}
	if fwd {
		i = (i + 1) % len(items)
	} else {
		i = (i - 1 + len(items)) % len(items)
	}
	m.showItem(items[i].ID, false)
}

// dockLine is the line above the input while items wait and the inbox is closed.
func (m *Model) dockLine() string {
	items := m.waiting()
	if len(items) == 0 || m.ib != nil || m.o.Replay != nil {
		return ""
	}
	text := "⚠ " + render.WaitingText(m.st, items[0])
	if len(items) > 1 {
		text = fmt.Sprintf("⚠ %d waiting · oldest: %s", len(items), render.WaitingText(m.st, items[0]))
	}
	return m.sty.warn.Render(ansi.Truncate(session.Sanitize(text)+" · ctrl+o answers", m.w, "…"))
}

// renderInbox draws the inbox as a box of width w, at most h lines.
func (m *Model) renderInbox(w, h int) []string {
	ib := m.ib
	inner := max(20, w-4)
	items := m.waiting()
	var lines []string
	title := "inbox"
	if len(items) > 1 {
		title = fmt.Sprintf("inbox · %d waiting · tab next", len(items))
		for _, it := range items {
			mark := "  "
			if it.ID == ib.id {
				mark = "▸ "
			}
			l := ansi.Truncate(mark+session.Sanitize(render.WaitingText(m.st, it))+" · "+m.age(it), inner, "…")
			if it.ID == ib.id {
				l = m.sty.bold.Render(l)
			} else {
				l = m.sty.dim.Render(l)
			}
			lines = append(lines, l)
		}
		lines = append(lines, m.sty.dim.Render(strings.Repeat("─", inner)))
	}
	var body []string
	if ib.id == session.TrustItem {
		body = m.trustBody(inner) // trust.go
	} else if pr := m.st.Permission(ib.id); pr != nil {
		body = m.permissionBody(pr, inner)
	} else if cf := m.st.Conflict(ib.id); cf != nil {
		body = m.reviewBody(cf, inner, false)
		if len(lines)+len(body)+len(m.choices(ib.id))+4 > h && cf.Review == nil && cf.Kind != "apply" {
			// Short of room: each side's changed lines only, so both sides stay in view. A
			// review with its whole picture, and an apply review, scroll instead (PgUp/PgDn):
			// their context lines say what lands.
			body = m.reviewBody(cf, inner, true)
		}
	}
	cs := m.choices(ib.id)
	chooser := m.chooser(cs, inner, true)
	// Room is kept for the question itself: when the choices' descriptions would crowd it
	// out, each choice takes one line and the selected one's description follows in full.
	if h-2-len(lines)-len(body)-len(chooser)-2 < 0 {
		chooser = m.chooser(cs, inner, false)
	}
	if ib.typing {
		hint := cs[ib.sel].textHint
		chooser = append(chooser, m.sty.prompt.Render(ansi.TruncateLeft(hint+": "+session.Sanitize(ib.text)+"█", max(0, ansi.StringWidth(hint+": "+ib.text)+1-inner), "…")))
	} else if n := m.notes[ib.id]; n != "" {
		chooser = append(chooser, m.sty.dim.Render(ansi.Truncate("note: "+session.Sanitize(n), inner, "…")))
	}
	keys := "↑↓ or 1-" + strconv.Itoa(len(cs)) + " select · enter confirms · esc closes (ctrl+o reopens)"
	switch {
	case m.o.Now().Sub(ib.opened) < ib.grace:
		keys = "(opening… keys typed now go to the input)"
	case ib.typing:
		keys = "enter sends · esc back"
	case ib.sel >= 0 && cs[ib.sel].risky:
		keys = "enter confirms ⚠ " + cs[ib.sel].label + " · ↑↓ change · esc closes"
	case ib.sel >= 0:
		keys = "enter confirms " + cs[ib.sel].label + " · ↑↓ change · esc closes"
	}
	// Fit: the list, the body (clipped first), the choices and the keys, in a box.
	room := h - 2 - len(lines) - len(chooser) - 2
	if room < 1 {
		lines = nil
		room = h - 2 - len(chooser) - 2
	}
	if len(body) > room {
		// Scrolled: a window of the body and where it is; PgUp/PgDn move it.
		show := max(1, room-1)
		ib.scroll = min(max(0, ib.scroll), len(body)-show)
		from := ib.scroll
		body = append(slices.Clone(body[from:from+show]), m.sty.dim.Render(ansi.Truncate(fmt.Sprintf("lines %d-%d of %d · PgUp/PgDn scroll", from+1, from+show, len(body)), inner, "…")))
	} else {
		ib.scroll = 0
	}
	content := append(lines, body...)
	content = append(content, "")
	content = append(content, chooser...)
	content = append(content, m.sty.prompt.Render(ansi.Truncate(keys, inner, "…")))
	return m.box(title, content, w, true)
}

// sideText is what a side shows (render.SideText: the same words replay --print prints).
func sideText(sd session.ConflictSide) string { return render.SideText(sd, "  ") }

// isNotDiff reports whether a side's value is not a unified diff (a finding, a vote): it is
// shown whole.
func isNotDiff(v any) bool {
	s, ok := v.(string)
	return !ok || !strings.Contains(s, "\n+") && !strings.Contains(s, "\n-") && !strings.HasPrefix(s, "@@")
}

// chooser lists the choices with what each does: wrapped under each choice (full), or one
// line each plus the selected choice's description in full.
func (m *Model) chooser(cs []choice, inner int, full bool) []string {
	ib := m.ib
	var out []string
	lw := 0
	for _, c := range cs {
		lw = max(lw, ansi.StringWidth(session.Sanitize(c.label)))
	}
	for i, c := range cs {
		mark := "  "
		if i == ib.sel {
			mark = "▸ "
		}
		warn := "  "
		if c.risky {
			warn = "⚠ "
		}
		// Labels and descriptions name ids, tools and files: drawn sanitised.
		label := mark + c.key + " " + session.Sanitize(c.label) + strings.Repeat(" ", lw-ansi.StringWidth(session.Sanitize(c.label))) + " " + warn
		dw := max(10, inner-ansi.StringWidth(label))
		ds := strings.Split(ansi.Wrap(session.Sanitize(c.does), dw, ""), "\n")
		if !full {
			ds = []string{ansi.Truncate(session.Sanitize(c.does), dw, "…")}
		}
		for j, d := range ds {
			l := label + d
			if j > 0 {
				l = strings.Repeat(" ", ansi.StringWidth(label)) + d
			}
			switch {
			case i == ib.sel:
				l = m.sty.cursor.Render(l)
			case c.risky:
				l = m.sty.warn.Render(l)
			}
			out = append(out, l)
		}
	}
	if !full && ib.sel >= 0 && ib.sel < len(cs) {
		for _, l := range wrap(cs[ib.sel].label+": "+cs[ib.sel].does, inner) {
			out = append(out, m.sty.cursor.Render(l))
		}
	}
	return out
}

// age is how long an item has waited.
func (m *Model) age(w session.Waiting) string {
	var at time.Time
	if w.Review {
		if cf := m.st.Conflict(w.ID); cf != nil {
			at = cf.ReviewAt
		}
	} else if p := m.st.Permission(w.ID); p != nil {
		at = p.At
	}
	if at.IsZero() {
		return ""
	}
	return render.FormatDuration(max(0, m.now().Sub(at)))
}

func (m *Model) permissionBody(pr *session.Permission, inner int) []string {
	sa := m.st.Subagent(pr.SubagentID)
	who, mode := pr.SubagentID, ""
	if sa != nil {
		who += " " + session.Sanitize(sa.AgentType)
		mode = sa.PermissionMode
	}
	if mode != "" {
		who += " (" + mode + ")"
	}
	head := fmt.Sprintf("permission %s · %s asks to use %s", pr.ID, who, session.Sanitize(pr.Tool))
	var body []string
	for _, l := range wrap(head, inner) {
		body = append(body, m.sty.warn.Render(l))
	}
	if pr.Reason != "" {
		body = append(body, wrap("why it asks: "+pr.Reason, inner)...)
	}
	if cmd, ok := pr.Args["command"].(string); ok {
		body = append(body, wrap("$ "+cmd, inner)...)
	}
	body = append(body, m.sty.bold.Render("arguments:"))
	body = append(body, wrap(jsonText(pr.Args, "  "), inner)...)
	return body
}

func (m *Model) reviewBody(cf *session.Conflict, inner int, changesOnly bool) []string {
	head := fmt.Sprintf("conflict %s · %s", cf.ID, conflictWhere(cf))
	if cv := m.st.Convergence(cf.ConvergenceID); cv != nil {
		pos := ""
		for i, c := range cv.Conflicts {
			if c.ID == cf.ID {
				pos = fmt.Sprintf(" · %d of %d", i+1, len(cv.Conflicts))
			}
		}
		head += fmt.Sprintf(" · %s %s%s", cv.ID, cv.Strategy, pos)
	}
	body := []string{m.sty.warn.Render(ansi.Truncate(session.Sanitize(head), inner, "…"))}
	if cf.ReviewReason != "" {
		body = append(body, wrap("why: "+cf.ReviewReason, inner)...)
	}
	if cf.Kind == "apply" && cf.Lines.Start > 0 && cf.Context != "" {
		// The conflicted regions as git merge-file --diff3 marks them, with their context.
		body = append(body, m.sty.bold.Render(ansi.Truncate("merged with conflict markers (git merge-file --diff3), line numbers of the workspace's file:", inner, "…")))
		body = append(body, m.markerLines(wrap(cf.Context, inner))...)
		body = append(body, m.sides(cf.Sides, inner, changesOnly)...)
		body = append(body, m.checkLines(cf, inner)...) // verify.go: claims and measurements
		return body
	}
	if cf.Review != nil {
		body = append(body, m.selectedOutcome(cf, inner)...)
		body = append(body, m.sides(m.wholeChanges(cf), inner, changesOnly)...)
	} else {
		body = append(body, m.sides(cf.Sides, inner, changesOnly)...)
	}
	body = append(body, m.checkLines(cf, inner)...) // verify.go: claims and measurements
	if cf.Context != "" && !changesOnly {
		body = append(body, m.sty.bold.Render("current file:"))
		body = append(body, m.styled(wrap(cf.Context, inner), m.sty.dim.Render)...)
	}
	return body
}

// sides draws a conflict's sides: side by side when two fit, else one under the other. A
// hunk is shown with its - and + lines coloured: the diff against the current file. With
// changesOnly, a hunk's context and @@ lines are left out.
func (m *Model) sides(sides []session.ConflictSide, width int, changesOnly bool) []string {
	col := func(i int, sd session.ConflictSide, w int) []string {
		head := m.sty.bold.Render(ansi.Truncate(session.Sanitize(fmt.Sprintf("%d %s", i+1, sideHeader(sd))), w, "…"))
		out := []string{head}
		for _, src := range strings.Split(strings.TrimRight(sideText(sd), "\n"), "\n") {
			changed := (strings.HasPrefix(src, "+") || strings.HasPrefix(src, "-")) && !strings.HasPrefix(src, "+++") && !strings.HasPrefix(src, "---")
			if changesOnly && !changed && !isNotDiff(sd.Value) {
				continue
			}
			out = append(out, m.diffBlock(src, w)...) // review.go: coloured as every diff
		}
		return out
	}
	if len(sides) == 2 && width >= 70 {
		cw := (width - 3) / 2
		a, b := col(0, sides[0], cw), col(1, sides[1], cw)
		n := max(len(a), len(b))
		out := make([]string, n)
		for i := range out {
			l, r := "", ""
			if i < len(a) {
				l = a[i]
			}
			if i < len(b) {
				r = b[i]
			}
			out[i] = l + strings.Repeat(" ", max(0, cw-ansi.StringWidth(l))) + m.sty.sep.Render(" │ ") + r
		}
		return out
	}
	var out []string
	for i, sd := range sides {
		out = append(out, col(i, sd, width)...)
	}
	return out
}
