package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// Minimum terminal size.
const minW, minH = 60, 15

// View draws the whole screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "summit"
	if m.st.SessionID != "" {
		v.WindowTitle = "summit · " + m.st.SessionID
	}
	return v
}

// Render is the screen as text (View's content), for golden tests.
func (m *Model) Render() string {
	if m.w < minW || m.h < minH {
		msg := fmt.Sprintf("summit needs at least %d×%d\nthis terminal is %d×%d\nenlarge it, or ctrl+c to quit", minW, minH, m.w, m.h)
		var out []string
		for _, l := range strings.Split(msg, "\n")[:min(3, max(1, m.h))] {
			out = append(out, ansi.Truncate(l, max(1, m.w), "…"))
		}
		return strings.Join(out, "\n")
	}
	bodyH := m.h - 4 // header, notice, input (a replay's timeline), footer
	lines := []string{m.header()}
	switch {
	case m.help:
		lines = append(lines, m.helpLines(m.w, bodyH)...)
	case m.prompt != nil:
		lines = append(lines, m.renderPrompt(m.w, bodyH)...)
	case m.panel != nil:
		for _, l := range m.panel {
			lines = append(lines, ansi.Truncate(session.Sanitize(l), m.w, "…"))
		}
	default:
		lines = append(lines, m.body(bodyH)...)
	}
	for len(lines) < 1+bodyH {
		lines = append(lines, "")
	}
	lines = lines[:1+bodyH]
	lines = append(lines, m.noticeLine(), m.inputLine(), m.footer())
	for i, l := range lines {
		if ansi.StringWidth(l) > m.w {
			lines[i] = ansi.Truncate(l, m.w, "…")
		}
	}
	return strings.Join(lines, "\n")
}

func (m *Model) treeWidth() int {
	if m.treeW > 0 {
		return max(16, min(m.treeW, m.w-30))
	}
	return max(24, min(46, m.w*3/10))
}

func (m *Model) transcriptWidth() int { return m.w - m.treeWidth() - 3 }

func (m *Model) header() string {
	st := m.st
	parts := []string{m.sty.header.Render("summit")}
	if st.SessionID != "" {
		parts = append(parts, st.SessionID)
	}
	if st.Info.PermissionMode != "" {
		parts = append(parts, st.Info.PermissionMode)
	}
	if st.Info.Provider != "" {
		parts = append(parts, st.Info.Provider)
	}
	parts = append(parts, fmt.Sprintf("%d running", st.Running()))
	if m.o.Replay == nil && st.Ended {
		parts = append(parts, "ended ("+st.EndReason+")")
	}
	return ansi.Truncate(strings.Join(parts, m.sty.headerDim.Render(" · ")), m.w, "…")
}

// body lays the tree and the transcript side by side.
func (m *Model) body(h int) []string {
	tw := m.treeWidth()
	xw := m.transcriptWidth()
	tree := m.renderTree(tw, h)
	title := m.transcriptTitle(xw)
	xs := append([]string{title}, m.renderTranscript(xw, h-1)...)
	sep := m.sty.sep.Render(" │ ")
	out := make([]string, h)
	for i := range out {
		l := ""
		if i < len(tree) {
			l = tree[i]
		}
		l += strings.Repeat(" ", max(0, tw-ansi.StringWidth(l)))
		r := ""
		if i < len(xs) {
			r = xs[i]
		}
		out[i] = l + sep + r
	}
	return out
}

func (m *Model) transcriptTitle(w int) string {
	t := "session · commands, notes and mirrored events"
	switch {
	case m.st.Subagent(m.sel) != nil:
		sa := m.st.Subagent(m.sel)
		t = fmt.Sprintf("%s %s · %s · %s · %s tok", sa.ID, sa.AgentType, sa.Status, session.FormatDuration(sa.Elapsed(m.now())), session.FormatTokens(sa))
		if sa.CurrentTool != "" {
			t += " · " + session.Sanitize(sa.CurrentTool)
		}
	case m.st.Convergence(m.sel) != nil:
		t = m.sel + " · convergence"
	case m.st.Conflict(m.sel) != nil:
		t = m.sel + " · conflict"
	}
	v := m.view(m.sel)
	if !v.follow {
		t += " · scrolled (G follows)"
	}
	st := m.sty.bold
	if m.focus == focusTranscript {
		st = m.sty.cursor
	}
	return st.Render(ansi.Truncate(t, w, "…"))
}

func (m *Model) now() time.Time {
	if m.o.Replay == nil && m.st.Started && !m.st.Ended {
		return m.o.Now()
	}
	return m.st.LastTS
}

// noticeLine: an error, else the handoff banner, else pending reviews and approvals, else
// the last message.
func (m *Model) noticeLine() string {
	if m.notice != "" && m.noticeErr {
		return m.sty.noticeErr.Render(ansi.Truncate("✗ "+oneLine(m.notice), m.w, "…"))
	}
	if c := m.st.Control; c != "" {
		text := fmt.Sprintf(" ⇄ control is with %s: plain input goes to it; it ends when %s stops (/cancel %s) ", c, c, c)
		if m.notice != "" {
			text = fmt.Sprintf(" ⇄ %s has control · %s ", c, oneLine(m.notice))
		}
		return m.sty.banner.Render(ansi.Truncate(text, m.w, "…"))
	}
	if m.notice != "" {
		return m.sty.notice.Render(ansi.Truncate(oneLine(m.notice), m.w, "…"))
	}
	var pend []string
	for _, p := range m.st.Permissions {
		if p.Decision == session.DecisionPending {
			pend = append(pend, fmt.Sprintf("%s %s asks for %s", p.ID, p.SubagentID, session.Sanitize(p.Tool)))
		}
	}
	for _, cv := range m.st.Convergences {
		for _, cf := range cv.Conflicts {
			if cf.Resolution == nil && cf.ReviewRequested {
				pend = append(pend, cf.ID+" needs review — press r")
			}
		}
	}
	if len(pend) > 0 {
		return m.sty.warn.Render(ansi.Truncate("⚠ "+strings.Join(pend, " · "), m.w, "…"))
	}
	if m.foldErr != "" {
		return m.sty.noticeErr.Render(ansi.Truncate("fold: "+m.foldErr, m.w, "…"))
	}
	return ""
}

// oneLine keeps the first line of a multi-line message and says how many more there are.
func oneLine(s string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	if strings.HasPrefix(strings.TrimSpace(rest), "usage:") {
		return first + " · " + strings.TrimSpace(rest)
	}
	return first + fmt.Sprintf(" (+%d lines; /status for all)", strings.Count(rest, "\n")+1)
}

func (m *Model) inputLine() string {
	if m.o.Replay != nil {
		// A replay takes no input: its line is the timeline.
		status := ansi.Truncate(m.replayStatus(), m.w*2/3, "…")
		return m.sty.bold.Render(status) + " " + m.sty.marker.Render(m.timeline(max(4, m.w-ansi.StringWidth(status)-1)))
	}
	pr := "› "
	if c := m.st.Control; c != "" {
		pr = c + " › "
	}
	m.in.SetWidth(max(10, m.w-ansi.StringWidth(pr)-1))
	p := m.sty.prompt.Render(pr)
	if m.focus != focusInput {
		p = m.sty.dim.Render(pr)
	}
	return p + m.in.View()
}

func (m *Model) footer() string {
	var hs []key.Binding
	k := m.keys
	switch {
	case m.o.Replay != nil:
		hs = []key.Binding{k.Play, k.Step, k.NextMark, k.Faster, k.Seek, k.Focus, k.Help}
	case m.prompt != nil && m.prompt.review:
		hs = []key.Binding{k.Escape}
	case m.prompt != nil:
		hs = []key.Binding{k.AllowOnce, k.AllowSub, k.Deny, k.Escape}
	case m.focus == focusTree:
		hs = []key.Binding{k.Focus, k.Up, k.Open, k.Review, k.Help}
	case m.focus == focusTranscript:
		hs = []key.Binding{k.Focus, k.Follow, k.Open, k.Thinking, k.Search, k.Help}
	default:
		hs = []key.Binding{k.Complete, k.HistPrev, k.Submit, k.Focus, k.Help, k.Quit}
	}
	var parts []string
	for _, b := range hs {
		h := b.Help()
		parts = append(parts, m.sty.footerKey.Render(h.Key)+" "+m.sty.footer.Render(h.Desc))
	}
	return ansi.Truncate(strings.Join(parts, m.sty.footer.Render(" · ")), m.w, "…")
}

// helpLines is the help screen: the key map and the commands, from the same tables that
// drive the keys and completion.
func (m *Model) helpLines(w, h int) []string {
	k := m.keys
	keys := []string{m.sty.bold.Render("keys")}
	for _, b := range []key.Binding{k.Focus, k.Up, k.Down, k.Open, k.Follow, k.PageUp, k.Thinking, k.Search, k.Review,
		k.Complete, k.HistPrev, k.Submit, k.Escape, k.Quit, k.Play, k.Step, k.NextMark, k.Faster, k.Seek} {
		hp := b.Help()
		keys = append(keys, fmt.Sprintf(" %-7s %s", hp.Key, hp.Desc))
	}
	cmds := []string{m.sty.bold.Render("commands") + m.sty.dim.Render("  (/help <command> for one; esc closes)")}
	for _, l := range strings.Split(strings.TrimRight(commands.Overview(), "\n"), "\n") {
		cmds = append(cmds, " "+l)
	}
	const kw = 34
	var out []string
	if w >= 90 {
		for i := 0; i < max(len(keys), len(cmds)); i++ {
			l := ""
			if i < len(keys) {
				l = keys[i]
			}
			l = ansi.Truncate(l, kw, "…")
			l += strings.Repeat(" ", max(0, kw-ansi.StringWidth(l)))
			if i < len(cmds) {
				l += cmds[i]
			}
			out = append(out, ansi.Truncate(l, w, "…"))
		}
	} else {
		out = append(cmds, keys...)
	}
	if len(out) > h {
		out = out[:h]
	}
	return out
}
