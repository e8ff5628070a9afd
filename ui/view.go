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
	"github.com/summit-dev/summit/session/render"
)

// Minimum terminal size.
const minW, minH = 60, 15

// View draws the whole screen. After an Update that changed nothing on screen it returns
// the last frame as it is, without drawing it again.
func (m *Model) View() tea.View {
	if m.still && m.drawn {
		return m.lastFrame
	}
	m.lastFrame, m.drawn = m.frameView(), true
	return m.lastFrame
}

func (m *Model) frameView() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "summit"
	if m.st.SessionID != "" {
		// The title is written inside an OSC sequence: a raw ESC or BEL in the id (a recording
		// can say anything) would end it and start a sequence of its own.
		v.WindowTitle = "summit · " + session.Sanitize(m.st.SessionID)
	}
	return v
}

// Render is the screen as text (View's content), for golden tests.
//
// Layout: header; the tree and the transcript in bordered panes (the focused one drawn with
// a heavy border, so focus shows without colour); the dock line while items wait and the
// inbox is closed; the notice line; the input (a replay's timeline); the footer with the
// focused pane's keys. The inbox floats over the panes, which stay visible around it.
func (m *Model) Render() string {
	if m.w < minW || m.h < minH {
		msg := fmt.Sprintf("summit needs at least %d×%d\nthis terminal is %d×%d\nenlarge it, or ctrl+c to quit", minW, minH, m.w, m.h)
		var out []string
		for _, l := range strings.Split(msg, "\n")[:min(3, max(1, m.h))] {
			out = append(out, ansi.Truncate(l, max(1, m.w), "…"))
		}
		return strings.Join(out, "\n")
	}
	dock := m.dockLine()
	bodyH := m.h - 4 // header, notice, input (a replay's timeline), footer
	if dock != "" {
		bodyH--
	}
	var body []string
	switch {
	case m.help:
		body = m.helpBox(m.w, bodyH)
	default:
		body = m.body(bodyH)
	}
	for len(body) < bodyH {
		body = append(body, "")
	}
	body = body[:bodyH]
	if m.panel != nil && !m.help {
		// A panel is as big as its content: a small one floats over the panes, which stay
		// visible around it; a large one takes the body.
		box := m.panelBox(m.w-2, bodyH)
		bw := textWidth(box[0])
		if bw >= m.w-2 && len(box) >= bodyH {
			body = m.panelBox(m.w, bodyH)
		} else {
			for i, l := range box {
				box[i] = " " + l + " "
			}
			body = overlay(body, box, (m.w-bw-2)/2, max(0, bodyH-len(box)-1))
		}
	}
	if m.ib != nil {
		bw := min(m.w-2, max(60, m.w*9/10))
		if m.w >= 140 {
			bw = min(m.w-8, 130)
		}
		box := m.renderInbox(bw, bodyH-1)
		for i, l := range box {
			box[i] = " " + l + " " // a margin, so the panes behind do not touch it
		}
		bw += 2
		// Float it at the bottom of the panes, so the top of the transcript stays in view.
		body = overlay(body, box, (m.w-bw)/2, max(0, bodyH-len(box)-1))
	}
	if m.ra != nil {
		body = m.reattachOverlay(body, bodyH)
	}
	lines := append([]string{m.header()}, body...)
	if dock != "" {
		lines = append(lines, dock)
	}
	lines = append(lines, m.noticeLine(), m.inputLine(), m.footer())
	for i, l := range lines {
		lines[i] = truncate(l, m.w, "…")
	}
	return strings.Join(lines, "\n")
}

// overlay draws fg over bg with its top-left corner at column x, row y.
func overlay(bg, fg []string, x, y int) []string {
	out := append([]string(nil), bg...)
	for i, l := range fg {
		r := y + i
		if r < 0 || r >= len(out) {
			continue
		}
		b := out[r]
		left := ansi.Truncate(b, x, "")
		left += strings.Repeat(" ", max(0, x-ansi.StringWidth(left)))
		right := ansi.TruncateLeft(b, x+ansi.StringWidth(l), "")
		out[r] = left + "\x1b[m" + l + "\x1b[m" + right
	}
	return out
}

// box draws content in a bordered box of outer width w, as tall as its content. The focused
// box has a heavy border and the accent colour.
func (m *Model) box(title string, content []string, w int, focused bool) []string {
	return m.pane(title, content, w, len(content)+2, focused)
}

// pane draws content in a bordered box of outer size w×h, clipping or padding it.
func (m *Model) pane(title string, content []string, w, h int, focused bool) []string {
	tl, tr, bl, br, hz, vt := "╭", "╮", "╰", "╯", "─", "│"
	st := m.sty.border
	tst := m.sty.bold
	if focused {
		tl, tr, bl, br, hz, vt = "┏", "┓", "┗", "┛", "━", "┃"
		st = m.sty.borderFocus
		tst = m.sty.cursor
	}
	inner := max(1, w-4)
	var top string
	if title != "" {
		t := truncate(" "+title+" ", max(0, w-4), "…")
		top = st.Render(tl+hz) + tst.Render(t) + st.Render(strings.Repeat(hz, max(0, w-3-textWidth(t)))+tr)
	} else {
		top = st.Render(tl + strings.Repeat(hz, max(0, w-2)) + tr)
	}
	out := make([]string, 0, max(2, h))
	out = append(out, top)
	side := st.Render(vt)
	blank := side + strings.Repeat(" ", inner+2) + side
	for i := 0; i < h-2; i++ {
		if i >= len(content) || content[i] == "" {
			out = append(out, blank)
			continue
		}
		l := content[i]
		lw := textWidth(l)
		if lw > inner {
			l = ansi.Truncate(l, inner, "…")
			lw = textWidth(l)
		}
		out = append(out, side+" "+l+strings.Repeat(" ", max(0, inner-lw))+" "+side)
	}
	out = append(out, st.Render(bl+strings.Repeat(hz, max(0, w-2))+br))
	return out
}

// treeWidth is the tree pane's width: what < > chose, else about a third of the screen while
// the transcript pane is needed, and as wide as the tree's columns need (the transcript
// keeping at least 40 columns) while it is idle.
func (m *Model) treeWidth() int {
	if m.treeW > 0 {
		return max(20, min(m.treeW, m.w-34))
	}
	base := max(30, min(52, m.w*35/100))
	if !m.transcriptIdle() {
		return base
	}
	_, lay := m.treeRows()
	return max(base, lay.fitWidth(m.w-max(40, m.w*3/10)-4)+4)
}

// transcriptIdle: the transcript pane shows nothing chosen (no subagent, convergence or
// conflict is selected, so it holds the session log) and does not have the focus, so the
// tree may take the width its columns need.
func (m *Model) transcriptIdle() bool {
	return m.sel == "" && m.focus != focusTranscript && !m.searching
}

// transcriptWidth is the transcript's text width inside its pane.
func (m *Model) transcriptWidth() int { return m.w - m.treeWidth() - 4 }

func (m *Model) header() string {
	st := m.st
	parts := []string{m.sty.header.Render("summit")}
	if id := st.SessionID; id != "" && m.w >= 100 {
		// Narrow screens leave it out: the full id is in the window title and /status.
		parts = append(parts, session.Sanitize(id))
	}
	if st.Info.PermissionMode != "" {
		parts = append(parts, session.Sanitize(st.Info.PermissionMode))
	}
	switch p := st.Info.Provider; p {
	case "":
	case "script":
		// config.tapes is true when the tapes came from --tapes: the user's own, not the demo's.
		if own, _ := st.Info.Config["tapes"].(bool); own {
			parts = append(parts, "your tapes, no model")
		} else {
			parts = append(parts, "demo tapes, no model")
		}
	default:
		parts = append(parts, session.Sanitize(p))
	}
	if st.Info.UnconfinedShell {
		parts = append(parts, m.sty.warn.Render("⚠ shell unconfined"))
	}
	if f := st.Fork; f != nil {
		parts = append(parts, fmt.Sprintf("⑂ fork of %s at #%d", shortID(f.Parent.SessionID), f.Parent.Seq))
	}
	parts = append(parts, fmt.Sprintf("%d running", st.Running()))
	if n := len(m.waiting()); n > 0 {
		parts = append(parts, m.sty.warn.Render(fmt.Sprintf("⚠ %d waiting", n)))
	}
	if c := st.Control; c != "" {
		parts = append(parts, m.sty.warn.Render("⇄ "+session.Sanitize(c)+" has control"))
	}
	if m.o.Replay == nil && st.Ended {
		parts = append(parts, "ended ("+session.Sanitize(st.EndReason)+")")
	}
	return truncate(strings.Join(parts, m.sty.headerDim.Render(" · ")), m.w, "…")
}

// body lays the tree and the transcript side by side, each in its pane.
func (m *Model) body(h int) []string {
	tw := m.treeWidth()
	xw := m.w - tw
	tree := m.pane(m.treeTitle(), m.renderTree(tw-4, h-2), tw, h, m.focus == focusTree)
	xs := m.pane(m.transcriptTitle(xw-4), m.renderTranscript(xw-4, h-2), xw, h, m.focus == focusTranscript)
	out := make([]string, h)
	for i := range out {
		out[i] = tree[i] + xs[i]
	}
	return out
}

func (m *Model) treeTitle() string {
	if m.filtering || m.filter != "" {
		return "tree · filtered"
	}
	return "tree"
}

func (m *Model) transcriptTitle(w int) string {
	t := "session log"
	switch {
	case m.st.Subagent(m.sel) != nil:
		sa := m.st.Subagent(m.sel)
		t = fmt.Sprintf("%s %s · %s · %s · %s tok", sa.ID, sa.AgentType, sa.Status, render.FormatDuration(sa.Elapsed(m.now())), render.FormatTokens(sa))
		if model := sa.ModelInUse(); model != "" {
			if len(sa.Switches) > 0 {
				model = "↪ " + model // a fallback runs it
			}
			t += " · " + model
		}
		if sa.CostUSD != nil {
			t += " · " + render.FormatCost(*sa.CostUSD)
		}
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
	return truncate(session.Sanitize(t), max(1, w-2), "…")
}

func (m *Model) now() time.Time {
	if m.o.Replay == nil && m.st.Started && !m.st.Ended {
		return m.o.Now()
	}
	return m.st.LastTS
}

// noticeLine: an error, else the quit question, else the completions being cycled, else the
// handoff banner with the subagent's question (it stands there as long as the subagent has
// control: no other message, not even the guided demo's, covers it), else the last message,
// else what a running /wait waits for. Replies quote file names, agent names and model text,
// so every notice is drawn sanitised.
func (m *Model) noticeLine() string {
	line := func(st painter, text string) string {
		return st.Render(truncate(session.Sanitize(text), m.w, "…"))
	}
	switch {
	case m.notice != "" && m.noticeErr:
		return line(m.sty.noticeErr, "✗ "+oneLine(m.notice))
	case m.quitArm:
		return line(m.sty.warn, m.quitText())
	case m.cands != nil && m.notice != "":
		return line(m.sty.notice, oneLine(m.notice))
	case m.st.Control != "" && m.o.Replay == nil:
		c := m.st.Control
		text := fmt.Sprintf(" ⇄ %s has control: what you type goes to it (/cancel %s ends it) ", c, c)
		if q := m.question(c); q != "" {
			text = fmt.Sprintf(" ⇄ %s asks: %s ", c, q)
			if over := ansi.StringWidth(text) - m.w; over > 0 {
				// A question ends with what it asks: its start gives way, not its end.
				head := fmt.Sprintf(" ⇄ %s asks: …", c)
				text = head + ansi.TruncateLeft(q+" ", over+1, "")
			}
		}
		return line(m.sty.banner, text)
	case m.notice != "":
		return line(m.sty.notice, oneLine(m.notice))
	case m.waitLine != "":
		return line(m.sty.notice, m.waitLine)
	case m.foldErr != "":
		return line(m.sty.noticeErr, "fold: "+m.foldErr)
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
	return first + fmt.Sprintf(" (+%s; /status for all)", session.Plural(strings.Count(rest, "\n")+1, "line"))
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
	m.in.SetWidth(max(10, m.w-textWidth(pr)-1))
	p := m.sty.prompt.Render(pr)
	if m.focus != focusInput || m.ib != nil {
		p = m.sty.dim.Render(pr)
	}
	if m.inSel && m.in.Value() != "" {
		return p + m.selectedLine(max(10, m.w-textWidth(pr)-1))
	}
	return p + m.in.View()
}

// selectedLine draws a rejected line kept in the input: highlighted (reverse video, which
// NO_COLOR keeps) and followed, where it fits, by what typing does to it.
func (m *Model) selectedLine(w int) string {
	const hint = "  typing replaces it · ← → edit it · enter sends it again"
	line := ansi.Truncate(m.in.Value(), w, "…")
	out := m.sty.match.Render(line)
	if lw := ansi.StringWidth(line); lw+ansi.StringWidth(hint) <= w {
		out += m.sty.dim.Render(hint)
	} else if short := "  typing replaces it"; lw+len(short) <= w {
		out += m.sty.dim.Render(short)
	}
	return out
}

// footerKeys are the keys that work where the focus is.
func (m *Model) footerKeys() []key.Binding {
	k := m.keys
	inbox := func(bs ...key.Binding) []key.Binding {
		if len(m.waiting()) > 0 && m.o.Replay == nil {
			bs = append(bs, k.Inbox)
		}
		return bs
	}
	switch {
	case m.help:
		return []key.Binding{k.PanelScroll, k.PanelClose}
	case m.ib != nil && m.ib.typing:
		return []key.Binding{key.NewBinding(key.WithHelp("enter", "send")), key.NewBinding(key.WithHelp("esc", "back"))}
	case m.ib != nil:
		return []key.Binding{k.Choose, k.Confirm, k.NextItem, k.Close}
	case m.panel != nil:
		return []key.Binding{k.PanelScroll, k.PanelClose}
	case m.searching:
		return []key.Binding{key.NewBinding(key.WithHelp("enter", "find")), key.NewBinding(key.WithHelp("esc", "done"))}
	case m.search != "" && m.focus == focusTranscript:
		return []key.Binding{k.SearchStep, k.Scroll, key.NewBinding(key.WithHelp("esc", "clear the search")), k.Help}
	case m.filtering:
		return []key.Binding{key.NewBinding(key.WithHelp("type", "filter")), key.NewBinding(key.WithHelp("enter", "keep")), key.NewBinding(key.WithHelp("esc", "clear"))}
	case m.o.Replay != nil && m.focus == focusTranscript:
		return []key.Binding{k.Play, k.Seek, k.Scroll, k.Follow, k.Expand, k.Thinking, k.Search, k.Focus, k.Help}
	case m.o.Replay != nil:
		short := func(b key.Binding, desc string) key.Binding { return key.NewBinding(key.WithHelp(b.Help().Key, desc)) }
		return []key.Binding{short(k.Play, "play"), short(k.Step, "step"), short(k.Markers, "markers"), short(k.Speed, "speed"),
			short(k.Seek, "seek"), short(k.Focus, "pane"), k.Help, short(k.ReplayQuit, "quit")}
	case m.focus == focusTree:
		return inbox(k.Select, k.Open, k.Filter, k.Focus, k.Slash, k.Help)
	case m.focus == focusTranscript:
		return inbox(k.Scroll, k.Follow, k.Expand, k.Thinking, k.Search, k.Focus, k.Help)
	}
	hs := []key.Binding{k.Submit, k.Complete, k.History}
	if m.in.Value() == "" {
		hs = append(hs, key.NewBinding(key.WithHelp("tab", "next pane")), key.NewBinding(key.WithHelp("?", "help")))
	}
	return inbox(append(hs, k.Quit)...)
}

func (m *Model) footer() string {
	var parts []string
	for _, b := range m.footerKeys() {
		h := b.Help()
		// The footer keeps a description's first words; the help screen has the rest.
		desc, _, _ := strings.Cut(h.Desc, " (")
		parts = append(parts, m.sty.footerKey.Render(h.Key)+" "+m.sty.footer.Render(desc))
	}
	return truncate(strings.Join(parts, m.sty.footer.Render(" · ")), m.w, "…")
}

// helpBox is the help screen: the keys grouped by pane and mode, then the commands (live
// only), from the same tables that drive the keys and completion. Each list is a table whose
// first column is as wide as its widest key or command, the descriptions wrapping within their
// own column; the two lists stand side by side when both fit at 40 columns or more. It scrolls.
func (m *Model) helpBox(w, h int) []string {
	inner := w - 4
	const gap, minCol = 4, 40
	groups := m.keys.helpGroups(m.o.Replay != nil)
	keyW := 0
	for _, g := range groups {
		for _, b := range g.keys {
			keyW = max(keyW, ansi.StringWidth(b.Help().Key))
		}
	}
	keyTables := make([]render.Table, len(groups))
	keysW := 0
	for i, g := range groups {
		t := render.Table{Wrap: true, Min: []int{keyW + 2}}
		for _, b := range g.keys {
			hp := b.Help()
			t.Rows = append(t.Rows, []string{"  " + hp.Key, hp.Desc})
		}
		keyTables[i] = t
		keysW = max(keysW, t.Width(), ansi.StringWidth(g.title))
	}
	keys := func(w int) []string {
		var out []string
		for i, g := range groups {
			out = append(out, m.sty.bold.Render(g.title))
			out = append(out, keyTables[i].Lines(w)...)
		}
		return out
	}
	var cmdTable render.Table
	var note string
	if m.o.Replay == nil {
		cmdTable.Wrap = true
		for _, c := range commands.Specs() {
			cmdTable.Rows = append(cmdTable.Rows, []string{"  /" + c.Name, c.Summary})
		}
		_, note, _ = strings.Cut(strings.TrimRight(commands.Overview(), "\n"), "\n\n")
	}
	cmds := func(w int) []string {
		out := []string{m.sty.bold.Render("commands") + m.sty.dim.Render("  (/help <command> for one)")}
		out = append(out, cmdTable.Lines(w)...)
		out = append(out, "")
		return append(out, wordWrap(note, w)...)
	}
	var lines []string
	left := keysW
	if cw := cmdTable.Width(); cw > 0 && keysW+gap+cw > inner {
		// Share the width in proportion to what each list needs.
		left = max(minCol, inner*keysW/(keysW+cw))
	}
	right := inner - gap - left
	switch {
	case len(cmdTable.Rows) == 0:
		lines = keys(inner)
	case right >= minCol:
		l, r := keys(left), cmds(right)
		for i := 0; i < max(len(l), len(r)); i++ {
			line := ""
			if i < len(l) {
				line = l[i]
			}
			if i < len(r) {
				line += strings.Repeat(" ", max(0, left+gap-ansi.StringWidth(line))) + r[i]
			}
			lines = append(lines, line)
		}
	default:
		lines = append(append(keys(inner), ""), cmds(inner)...)
	}
	title := "help · keys by pane"
	if m.o.Replay != nil {
		title = "help · replay keys"
	}
	return m.scrollBox(title+" · ↑↓ scroll · esc closes", lines, &m.helpTop, w, h)
}

// panelBox shows a command's multi-line output (/status, /help, /agents) in a box sized to it:
// as wide as its widest line or table and as tall as its lines, at most w×h. Text is wrapped
// (nothing is cut); tables (tab-separated lines, render.Blocks) are aligned, the last column
// cut with … when the width runs out, so a row never wraps into another column. It scrolls
// when it is taller than h.
func (m *Model) panelBox(w, h int) []string {
	inner := min(w-4, m.panelWidth())
	var lines []string
	if diffPanel(m.panelName) {
		for _, l := range m.panel {
			lines = append(lines, m.panelDiffLines(l, wrap(l, inner))...) // verify.go
		}
	} else {
		lines = m.panelLines(inner)
	}
	title := session.Sanitize(m.panelName)
	if len(lines) > h-2 {
		title += " · ↑↓ scroll"
	}
	title += " · esc closes"
	// Wide enough for its title too (cut only when the screen is).
	bw := min(w, max(inner, textWidth(title)+2)+4)
	return m.scrollBox(title, lines, &m.panelTop, bw, min(h, len(lines)+2))
}

// scrollBox frames lines at a scroll offset, clamped, and says where the view is.
func (m *Model) scrollBox(title string, lines []string, top *int, w, h int) []string {
	rows := max(1, h-2)
	*top = max(0, min(*top, len(lines)-rows))
	end := min(len(lines), *top+rows)
	if len(lines) > rows {
		title += fmt.Sprintf(" · %d–%d of %d", *top+1, end, len(lines))
	}
	return m.pane(title, lines[*top:end], w, h, true)
}

// wrapStyled wraps a line that may carry styling (no model text: that goes through wrap).
func wrapStyled(s string, w int) []string {
	return strings.Split(ansi.Wrap(s, max(4, w), ""), "\n")
}

// shortID is a session id cut to what tells two apart on one screen ("s-" and 8 characters;
// the full id is in inspect and --print), sanitised.
func shortID(id string) string {
	id = session.Sanitize(id)
	if r := []rune(id); len(r) > 10 {
		return string(r[:10]) + "…"
	}
	return id
}
