package ui

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// prompt is an open conflict review or permission request. A prompt that opened by itself
// ignores keys until its grace period has passed, so keys typed for something else cannot
// answer it.
type prompt struct {
	id       string // pr-N or cf-N
	review   bool
	opened   time.Time
	grace    time.Duration
	noting   bool
	note     string
	position string // "1 of 2" for reviews
}

// autoPrompt opens a prompt for the first pending permission request, else the first
// conflict awaiting review, unless the user dismissed it (it stays visible in the tree and on
// the notice line). Replays never prompt.
func (m *Model) autoPrompt() {
	// A prompt whose question was settled meanwhile (by /resolve typed in the input, by
	// another decision, or by the answer just given) closes by itself.
	if p := m.prompt; p != nil {
		if p.review {
			if cf := m.st.Conflict(p.id); cf == nil || cf.Resolution != nil {
				m.prompt = nil
			}
		} else if pr := m.st.Permission(p.id); pr == nil || pr.Decision != session.DecisionPending {
			m.prompt = nil
		}
	}
	if m.prompt != nil || m.o.Replay != nil || m.help {
		return
	}
	for _, p := range m.st.Permissions {
		if p.Decision == session.DecisionPending && !m.dismissed[p.ID] {
			m.prompt = &prompt{id: p.ID, opened: m.o.Now(), grace: m.o.Grace}
			return
		}
	}
	for _, cv := range m.st.Convergences {
		for _, cf := range cv.Conflicts {
			if cf.ReviewRequested && cf.Resolution == nil && !m.dismissed[cf.ID] {
				m.openReview(cf, true)
				return
			}
		}
	}
}

func (m *Model) openReview(cf *session.Conflict, auto bool) {
	p := &prompt{id: cf.ID, review: true, opened: m.o.Now()}
	if auto {
		p.grace = m.o.Grace
	}
	if cv := m.st.Convergence(cf.ConvergenceID); cv != nil {
		for i, c := range cv.Conflicts {
			if c.ID == cf.ID {
				p.position = fmt.Sprintf("%d of %d", i+1, len(cv.Conflicts))
			}
		}
	}
	m.prompt = p
}

// reviewNext opens the next open conflict (r), even one dismissed before.
func (m *Model) reviewNext() {
	for _, cv := range m.st.Convergences {
		for _, cf := range cv.Conflicts {
			if cf.Resolution == nil && cf.ReviewRequested {
				delete(m.dismissed, cf.ID)
				m.openReview(cf, false)
				return
			}
		}
	}
	m.setNotice("no conflict is waiting for review", false)
}

func (m *Model) promptKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.prompt
	if m.o.Now().Sub(p.opened) < p.grace {
		return nil // keys already in flight when it opened
	}
	s := k.String()
	if p.noting {
		switch s {
		case "enter", "esc":
			p.noting = false
		case "backspace":
			if r := []rune(p.note); len(r) > 0 {
				p.note = string(r[:len(r)-1])
			}
		case "space":
			p.note += " "
		default:
			p.note += k.Text
		}
		return nil
	}
	if s == "esc" {
		m.dismissed[p.id] = true
		m.prompt = nil
		return nil
	}
	var line string
	if !p.review {
		pr := m.st.Permission(p.id)
		if pr == nil || pr.Decision != session.DecisionPending {
			m.prompt = nil
			return nil
		}
		switch s {
		case "a":
			line = "/approve " + p.id
		case "s":
			line = "/approve " + p.id + " --scope subagent"
		case "d":
			line = "/deny " + p.id + " --reason " + strconv.Quote("denied in the workbench")
		default:
			return nil
		}
	} else {
		cf := m.st.Conflict(p.id)
		if cf == nil || cf.Resolution != nil {
			m.prompt = nil
			return nil
		}
		choice := ""
		switch {
		case s == "m":
			p.noting = true
			return nil
		case s == "b":
			choice = "both"
		case s == "n":
			choice = "none"
		case len(s) == 1 && s[0] >= '1' && s[0] <= '9':
			if i := int(s[0] - '1'); i < len(cf.Sides) {
				choice = cf.Sides[i].SubagentID
			}
		}
		if choice == "" {
			return nil
		}
		if !allowed(cf, choice) {
			m.setNotice(fmt.Sprintf("%s cannot be chosen for %s; choices: %s", choice, cf.ID, strings.Join(cf.Choices, ", ")), true)
			return nil
		}
		line = "/resolve " + cf.ID + " --choose " + choice
		if p.note != "" {
			line += " --note " + strconv.Quote(p.note)
		}
	}
	// Answered: it must not reopen while the answer is on its way.
	m.dismissed[p.id] = true
	m.prompt = nil
	return m.send(line, false)
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

// renderPrompt draws the open prompt in w×h.
func (m *Model) renderPrompt(w, h int) []string {
	p := m.prompt
	var body []string
	var title, keys string
	inner := max(20, w-4)
	if !p.review {
		pr := m.st.Permission(p.id)
		if pr == nil {
			return nil
		}
		agent := ""
		if sa := m.st.Subagent(pr.SubagentID); sa != nil {
			agent = " " + sa.AgentType
		}
		title = fmt.Sprintf("permission %s · %s%s asks to use %s", pr.ID, pr.SubagentID, agent, session.Sanitize(pr.Tool))
		if cmd, ok := pr.Args["command"].(string); ok {
			body = append(body, m.sty.bold.Render("command:"))
			body = append(body, wrap("  $ "+cmd, inner)...)
		}
		args, _ := json.MarshalIndent(pr.Args, "", "  ")
		body = append(body, m.sty.bold.Render("arguments:"))
		body = append(body, wrap(string(args), inner)...)
		if pr.Reason != "" {
			body = append(body, "", "why it asks: "+session.Sanitize(pr.Reason))
		}
		keys = fmt.Sprintf("[a] allow once   [s] allow for %s   [d] deny   [esc] later", pr.SubagentID)
	} else {
		cf := m.st.Conflict(p.id)
		if cf == nil {
			return nil
		}
		title = fmt.Sprintf("conflict %s · %s", cf.ID, conflictWhere(cf))
		if cv := m.st.Convergence(cf.ConvergenceID); cv != nil {
			title += fmt.Sprintf(" · %s %s · %s", cv.ID, cv.Strategy, p.position)
		}
		body = append(body, m.sides(cf, inner)...)
		if cf.Context != "" {
			body = append(body, m.sty.bold.Render("current file:"))
			body = append(body, m.styled(wrap(cf.Context, inner), m.sty.dim.Render)...)
		}
		var ks []string
		for i, sd := range cf.Sides {
			if allowed(cf, sd.SubagentID) {
				ks = append(ks, fmt.Sprintf("[%d] %s", i+1, sd.SubagentID))
			}
		}
		if allowed(cf, "both") {
			ks = append(ks, "[b] both")
		}
		ks = append(ks, "[n] none", "[m] note", "[esc] later")
		keys = strings.Join(ks, "   ")
		if p.noting || p.note != "" {
			body = append(body, "note: "+session.Sanitize(p.note)+map[bool]string{true: "█", false: ""}[p.noting])
		}
	}
	if m.o.Now().Sub(p.opened) < p.grace {
		keys = "(opening…)"
	}
	// Fit: title, body (clipped), keys, inside a rounded box.
	room := max(1, h-4)
	if len(body) > room {
		body = append(body[:room-1], m.sty.dim.Render(fmt.Sprintf("… %d more lines", len(body)-room+1)))
	}
	content := []string{m.sty.warn.Render(ansi.Truncate(title, inner, "…"))}
	content = append(content, body...)
	content = append(content, m.sty.prompt.Render(ansi.Truncate(keys, inner, "…")))
	box := m.sty.box.Width(w).Render(strings.Join(content, "\n"))
	return strings.Split(box, "\n")
}

// sides draws a conflict's sides: side by side when two fit, else one under the other. A
// hunk is shown with its - and + lines coloured: the diff against the current file.
func (m *Model) sides(cf *session.Conflict, width int) []string {
	col := func(i int, sd session.ConflictSide, w int) []string {
		head := m.sty.bold.Render(ansi.Truncate(fmt.Sprintf("[%d] %s", i+1, sideHeader(sd)), w, "…"))
		out := []string{head}
		for _, l := range wrap(valueText(sd.Value), w) {
			switch {
			case strings.HasPrefix(l, "+"):
				l = m.sty.add.Render(l)
			case strings.HasPrefix(l, "-"):
				l = m.sty.del.Render(l)
			}
			out = append(out, l)
		}
		return out
	}
	if len(cf.Sides) == 2 && width >= 70 {
		cw := (width - 3) / 2
		a, b := col(0, cf.Sides[0], cw), col(1, cf.Sides[1], cw)
		pad := func(ls []string) string {
			for i, l := range ls {
				ls[i] = l + strings.Repeat(" ", max(0, cw-ansi.StringWidth(l)))
			}
			return strings.Join(ls, "\n")
		}
		n := max(len(a), len(b))
		sep := strings.TrimSuffix(strings.Repeat(" │ \n", n), "\n")
		joined := lipgloss.JoinHorizontal(lipgloss.Top, pad(a), sep, pad(b))
		return strings.Split(joined, "\n")
	}
	var out []string
	for i, sd := range cf.Sides {
		out = append(out, col(i, sd, width)...)
	}
	return out
}
