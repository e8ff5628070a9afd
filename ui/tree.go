package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
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
	for _, sa := range st.Subagents {
		r := row{id: sa.ID, indent: 1, glyph: session.StatusGlyph(sa)}
		name := sa.AgentType
		if sa.AgentName != "" && sa.AgentName != sa.AgentType {
			name += " " + sa.AgentName
		}
		r.text = sa.ID + " " + session.Sanitize(name)
		if mode, ok := handoff[sa.ID]; ok {
			r.text += " ⇄"
			if mode == session.HandoffTransferControl {
				r.text += " control"
			}
		}
		var parts []string
		switch {
		case sa.PendingRequest != "":
			r.style = rowWarn
			parts = append(parts, "waiting for approval")
		case sa.Status == session.StatusQueued:
			parts = append(parts, "queued")
		case sa.Status == session.StatusActive:
			r.style = rowRun
			r.glyph = spinner[m.frame%len(spinner)]
		case sa.Status == session.StatusDone:
			r.style = rowOK
		default:
			r.style = rowBad
		}
		if sa.Status != session.StatusQueued {
			parts = append(parts, session.FormatDuration(sa.Elapsed(now)), session.FormatTokens(sa))
		}
		if sa.CurrentTool != "" {
			parts = append(parts, session.Sanitize(sa.CurrentTool))
		}
		r.extra = strings.Join(parts, " ")
		out = append(out, r)
	}
	for _, cv := range st.Convergences {
		r := row{id: cv.ID, glyph: "▾", text: fmt.Sprintf("%s %s (%s)", cv.ID, cv.Strategy, strings.Join(cv.Members, ", "))}
		r.extra = session.ConvergenceStatus(st, cv)
		if cv.Status == session.ConvergenceReview {
			r.style = rowWarn
		}
		out = append(out, r)
		for _, cf := range cv.Conflicts {
			c := row{id: cf.ID, indent: 1, glyph: "⚠", style: rowWarn, text: cf.ID + " " + conflictWhere(cf)}
			if cf.Resolution != nil {
				c.glyph, c.style, c.extra = "✓", rowOK, cf.Resolution.Choice
			} else {
				c.extra = "needs review"
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

func conflictWhere(cf *session.Conflict) string {
	return session.ConflictWhere(cf.Kind, cf.File, cf.Lines)
}

// renderTree draws the tree in w×h; the selected row stays in view.
func (m *Model) renderTree(w, h int) []string {
	rs := m.rows()
	sel := 0
	for i, r := range rs {
		if r.id == m.sel {
			sel = i
		}
	}
	top := max(0, sel-h+1)
	var out []string
	for i := top; i < len(rs) && len(out) < h; i++ {
		r := rs[i]
		left := strings.Repeat("  ", r.indent) + r.glyph + " " + r.text
		line := left
		if r.extra != "" {
			room := w - ansi.StringWidth(left) - 1
			extra := ansi.Truncate(r.extra, max(0, room), "…")
			if room > 3 {
				line = left + strings.Repeat(" ", max(1, w-ansi.StringWidth(left)-ansi.StringWidth(extra))) + extra
			}
		}
		line = ansi.Truncate(line, w, "…")
		line += strings.Repeat(" ", max(0, w-ansi.StringWidth(line)))
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

func (m *Model) treeKey(k tea.KeyPressMsg) tea.Cmd {
	rs := m.rows()
	idx := 0
	for i, r := range rs {
		if r.id == m.sel {
			idx = i
		}
	}
	switch s := k.String(); s {
	case "tab":
		m.cycleFocus()
	case "esc":
		if m.filter != "" {
			m.filter = ""
			return nil
		}
		m.cycleFocus()
		m.cycleFocus()
	case "up", "k":
		if m.filter == "" || s == "up" {
			m.sel = rs[max(0, idx-1)].id
			return nil
		}
		m.filter += s
	case "down", "j":
		if m.filter == "" || s == "down" {
			m.sel = rs[min(len(rs)-1, idx+1)].id
			return nil
		}
		m.filter += s
	case "enter":
		m.focus = focusTranscript
		if cf := m.st.Conflict(m.sel); cf != nil && cf.Resolution == nil {
			m.openReview(cf, false)
		}
	case "backspace":
		if m.filter != "" {
			m.filter = m.filter[:len(m.filter)-1]
		}
	case "<":
		m.treeW = max(16, m.treeWidth()-2)
	case ">":
		m.treeW = min(m.w-30, m.treeWidth()+2)
	case "?":
		m.help = true
	case "r":
		if m.filter == "" {
			m.reviewNext()
			return nil
		}
		m.filter += s
	default:
		if t := k.Text; t != "" && m.o.Replay == nil {
			m.filter += t
		}
	}
	// Keep the selection on a visible row; while filtering, on the first match.
	rs = m.rows()
	found := false
	for _, r := range rs {
		found = found || r.id == m.sel
	}
	if !found || (m.filter != "" && m.sel == "" && len(rs) > 1) {
		m.sel = rs[min(1, len(rs)-1)].id
	}
	return nil
}
