package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// row is one line of the tree.
type row struct {
	id     string // node id: "" session, sa-N, cv-N, cf-N
	indent int
	glyph  string
	text   string // plain text, for filtering
	extra  string // right part: elapsed, tokens, state
	style  int    // rowPlain, rowWarn, rowBad, rowOK, rowRun
}

const (
	rowPlain = iota
	rowWarn
	rowBad
	rowOK
	rowRun
)

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// modeTag is a subagent's permission mode, short, for its tree row.
var modeTag = map[string]string{"plan": "plan", "acceptEdits": "edits", "bypassPermissions": "bypass"}

// rows lists the tree: the session, its subagents, then convergences with their conflicts.
// The filter keeps the rows whose text contains it (the session row always stays).
func (m *Model) rows() []row {
	st := m.st
	now := m.now()
	out := []row{{id: "", glyph: "▾", text: "session"}}
	handoff := map[string]string{}
	for _, h := range st.Handoffs {
		if h.Status == session.HandoffActive {
			handoff[h.SubagentID] = h.Mode
		}
	}
	for _, n := range st.Tree() {
		sa := n.Subagent
		r := row{id: sa.ID, indent: 1 + n.Depth, glyph: render.StatusGlyph(sa)}
		name := sa.AgentType
		if sa.AgentName != "" && sa.AgentName != sa.AgentType && !strings.HasSuffix(sa.AgentType, "/"+sa.AgentName) {
			name += " " + sa.AgentName
		}
		r.text = sa.ID + " " + session.Sanitize(name)
		if t := modeTag[sa.PermissionMode]; t != "" {
			r.text += " ·" + t
		}
		if mode, ok := handoff[sa.ID]; ok {
			r.text += " ⇄"
			if mode == session.HandoffTransferControl {
				r.text += " control"
			}
		}
		var parts []string
		if ch := sa.Changes; ch != nil && ch.Error == "" {
			parts = append(parts, fmt.Sprintf("+%d −%d", ch.Added, ch.Removed)) // first: it is what matters once it stopped
		}
		switch {
		case sa.PendingRequest != "":
			r.style, r.glyph = rowWarn, "⚠"
			parts = append(parts, "waits for you")
		case sa.Status == session.StatusQueued:
			parts = append(parts, "queued")
		case sa.Status == session.StatusActive && sa.AgentState == "idle":
			r.glyph = "◦" // an agent's own subagent between pieces of work: nothing runs
			parts = append(parts, "idle")
		case sa.Status == session.StatusActive:
			r.style = rowRun
			r.glyph = spinner[m.frame%len(spinner)]
		case sa.Status == session.StatusDone:
			r.style = rowOK
		case sa.Status == session.StatusDisconnected:
			parts = append(parts, "unknown") // its agent stopped reporting on it: an unknown outcome, not a failure
		default:
			r.style = rowBad
		}
		if sa.Status != session.StatusQueued {
			parts = append(parts, render.FormatDuration(sa.Elapsed(now)), render.FormatTokens(sa))
		}
		if sa.CostUSD != nil {
			parts = append(parts, render.FormatCost(*sa.CostUSD))
		}
		switch {
		case sa.CurrentTool != "" && sa.PendingRequest == "":
			parts = append(parts, session.Sanitize(sa.CurrentTool))
		case sa.PlanStep != "" && sa.Status == session.StatusActive:
			parts = append(parts, "▸ "+session.Sanitize(sa.PlanStep)) // an external agent's plan step
		}
		r.extra = strings.Join(parts, " ")
		out = append(out, r)
	}
	for _, cv := range st.Convergences {
		r := row{id: cv.ID, text: fmt.Sprintf("%s %s (%s)", cv.ID, cv.Strategy, strings.Join(cv.Members, ", "))}
		r.glyph, r.style = convergenceGlyph(cv, m.frame)
		r.extra = render.ConvergenceStatus(st, cv)
		out = append(out, r)
		for _, cf := range cv.Conflicts {
			c := row{id: cf.ID, indent: 1, glyph: "⚠", style: rowWarn, text: cf.ID + " " + conflictWhere(cf)}
			switch {
			case cf.Resolution != nil:
				c.glyph, c.style, c.extra = "✓", rowOK, cf.Resolution.Choice
			case cf.ReviewRequested:
				c.extra = "waits for you"
			default:
				c.glyph, c.style, c.extra = "○", rowPlain, "open"
			}
			out = append(out, c)
		}
	}
	if m.filter == "" {
		return out
	}
	f := strings.ToLower(m.filter)
	kept := out[:1]
	for _, r := range out[1:] {
		if strings.Contains(strings.ToLower(r.text+" "+r.extra), f) {
			kept = append(kept, r)
		}
	}
	return kept
}

// convergenceGlyph is a convergence's status glyph and row style: running spins, a review
// waits (⚠), complete is ✓, partial ◑, and a failed one stands out (✗, in the error style).
func convergenceGlyph(cv *session.Convergence, frame int) (string, int) {
	switch cv.Status {
	case session.ConvergenceRunning:
		return spinner[frame%len(spinner)], rowRun
	case session.ConvergenceReview:
		return "⚠", rowWarn
	case session.ConvergenceDone:
		switch cv.Outcome {
		case session.OutcomeSuccess:
			return "✓", rowOK
		case "partial":
			return "◑", rowWarn
		}
		return "✗", rowBad
	}
	return "?", rowPlain
}

func conflictWhere(cf *session.Conflict) string {
	return session.ConflictWhere(cf.Kind, cf.File, cf.Lines)
}

// renderTree draws the tree's rows in w×h (inside its pane); the selected row stays in view
// and is marked with ▸ and the accent, not a full-width bar. While filtering, the first line
// is the filter.
func (m *Model) renderTree(w, h int) []string {
	var out []string
	if m.filtering || m.filter != "" {
		l := "filter: " + session.Sanitize(m.filter)
		if m.filtering {
			l += "█"
		}
		out = append(out, m.sty.prompt.Render(ansi.Truncate(l, w, "…")))
		h--
	}
	rs := m.rows()
	sel := 0
	for i, r := range rs {
		if r.id == m.sel {
			sel = i
		}
	}
	top := max(0, sel-h+1)
	for i := top; i < len(rs) && i-top < h; i++ {
		r := rs[i]
		mark := " "
		if i == sel {
			mark = "▸"
		}
		// Ids, names and choices are what the events say (a replayed recording can say
		// anything): the row's text is drawn sanitised.
		left := mark + strings.Repeat("  ", r.indent) + r.glyph + " " + session.Sanitize(r.text)
		line := left
		if r.extra != "" {
			room := w - ansi.StringWidth(left) - 1
			extra := ansi.Truncate(session.Sanitize(r.extra), max(0, room), "…")
			if room > 3 {
				line = left + strings.Repeat(" ", max(1, w-ansi.StringWidth(left)-ansi.StringWidth(extra))) + extra
			}
		}
		line = ansi.Truncate(line, w, "…")
		switch {
		case i == sel && m.focus == focusTree:
			line = m.sty.selected.Render(line)
		case i == sel:
			line = m.sty.bold.Render(line)
		case r.style == rowWarn:
			line = m.sty.warn.Render(line)
		case r.style == rowBad:
			line = m.sty.bad.Render(line)
		case r.style == rowOK:
			line = m.sty.ok.Render(line)
		case r.style == rowRun:
			line = m.sty.run.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// leaveTree ends filtering when the focus leaves the tree: a filter is never left on
// invisibly.
func (m *Model) leaveTree() {
	m.filtering, m.filter = false, ""
}

func (m *Model) treeKey(k tea.KeyPressMsg) tea.Cmd {
	if m.filtering {
		switch s := k.String(); s {
		case "esc":
			m.leaveTree()
		case "enter":
			m.filtering = false // keep the filter; ↑↓ move among the matches
		case "backspace":
			if r := []rune(m.filter); len(r) > 0 {
				m.filter = string(r[:len(r)-1])
			}
		case "up", "down":
			m.moveSel(s == "down")
		case "tab":
			m.cycleFocus()
		default:
			if t := k.Text; t != "" {
				m.filter += t
			}
		}
		m.keepSel()
		return nil
	}
	switch s := k.String(); s {
	case "tab":
		m.cycleFocus()
	case "esc":
		if m.filter != "" {
			m.leaveTree()
			return nil
		}
		if m.o.Replay == nil {
			m.focus = focusInput
			m.in.Focus()
		}
	case "up", "k":
		m.moveSel(false)
	case "down", "j":
		m.moveSel(true)
	case "enter":
		m.leaveTree()
		m.focus = focusTranscript
		if cf := m.st.Conflict(m.sel); cf != nil && cf.Resolution == nil && m.o.Replay == nil {
			m.openConflict(cf.ID)
		}
	case "f":
		m.filtering = true
	case "<":
		m.treeW = max(20, m.treeWidth()-2)
	case ">":
		m.treeW = min(m.w-34, m.treeWidth()+2)
	case "?":
		m.help, m.helpTop = true, 0
	}
	m.keepSel()
	return nil
}

func (m *Model) moveSel(down bool) {
	rs := m.rows()
	idx := 0
	for i, r := range rs {
		if r.id == m.sel {
			idx = i
		}
	}
	if down {
		m.sel = rs[min(len(rs)-1, idx+1)].id
	} else {
		m.sel = rs[max(0, idx-1)].id
	}
}

// keepSel keeps the selection on a visible row; while filtering, on the first match.
func (m *Model) keepSel() {
	rs := m.rows()
	found := false
	for _, r := range rs {
		found = found || r.id == m.sel
	}
	if !found || (m.filter != "" && m.sel == "" && len(rs) > 1) {
		m.sel = rs[min(1, len(rs)-1)].id
	}
}
