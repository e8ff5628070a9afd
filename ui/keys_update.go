package ui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// isInbox reports whether a typed line is /inbox.
func isInbox(line string) bool {
	c, err := commands.Parse(line)
	return err == nil && c.Name() == "inbox"
}

// key routes a key press. Order: ctrl+c; Esc+key read as Alt+key is split back into the two
// keys; help and output panels; the inbox (which hands on keys that were not for it); `/`
// from any pane goes to the input; search and replay controls; then the focused pane.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	m.lastKey = m.o.Now()
	if k.Mod.Contains(tea.ModAlt) && k.Code != tea.KeyEscape {
		// A terminal sends Esc as one byte; Esc then a fast key arrives as Alt+key. Nothing
		// here is bound to Alt, so it is always the two keys.
		plain := k
		plain.Mod &^= tea.ModAlt
		if plain.Mod == 0 || plain.Mod == tea.ModShift {
			if r := plain.Code; r >= ' ' && r < 0x10FFFF && unicode.IsPrint(r) {
				if plain.Mod == tea.ModShift {
					r = unicode.ToUpper(r)
				}
				plain.Text, plain.Mod = string(r), 0
			}
		}
		c1 := m.key(tea.KeyPressMsg{Code: tea.KeyEscape})
		return tea.Batch(c1, m.key(plain))
	}
	if key.Matches(k, m.keys.Quit) {
		return m.quit()
	}
	m.quitArm = false
	if m.ra != nil { // the reattach question takes every key until it is answered
		return m.reattachKey(k)
	}
	if m.help {
		return m.scrollKey(k, &m.helpTop, func() { m.help = false })
	}
	if m.ib != nil {
		if cmd, ok := m.inboxKey(k); ok {
			return cmd
		}
	}
	if m.panel != nil {
		if cmd, ok := m.panelKey(k); ok {
			return cmd
		}
	}
	if key.Matches(k, m.keys.Inbox) && m.o.Replay == nil {
		m.openInbox()
		return nil
	}
	if k.String() == "/" && m.o.Replay == nil && !m.searching && !m.filtering && m.focus != focusInput {
		// A command can be typed from anywhere: the / goes to the input with the focus.
		m.leaveTree()
		m.focus = focusInput
		m.in.Focus()
		m.typeOver()
		m.in, _ = m.in.Update(k)
		return nil
	}
	if m.st.Control != "" && m.o.Replay == nil && !m.searching && !m.filtering && m.focus != focusInput && typed(k) {
		// A subagent with control talks with the user: what is typed in any pane is for it,
		// so a printable key goes to the input with the focus (t, g, f, space are not pane
		// keys then). It is sent only by enter in the input.
		m.leaveTree()
		m.focus = focusInput
		m.in.Focus()
		m.typeOver()
		m.in, _ = m.in.Update(k)
		return nil
	}
	if m.searching {
		return m.searchKey(k)
	}
	if m.o.Replay != nil {
		if cmd, ok := m.replayKey(k); ok {
			return cmd
		}
	}
	switch m.focus {
	case focusTree:
		return m.treeKey(k)
	case focusTranscript:
		return m.transcriptKey(k)
	}
	return m.inputKey(k)
}

// typed reports whether a key press is text: printable, with no modifier but shift (and the
// lock keys some terminals report).
func typed(k tea.KeyPressMsg) bool {
	if k.Text == "" || k.Mod&^(tea.ModShift|tea.ModCapsLock|tea.ModNumLock|tea.ModScrollLock) != 0 {
		return false
	}
	for _, r := range k.Text {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// quit is ctrl+c: at once when nothing runs, else the first press asks and a second quits.
// The recording is closed by the caller once the program ends, either way.
func (m *Model) quit() tea.Cmd {
	if m.o.Replay == nil && m.st.Running() > 0 && !m.quitArm {
		m.quitArm = true
		return nil
	}
	m.quitting = true
	return tea.Quit
}

// quitText is the question a first ctrl+c asks. The subagents it names may end while it stands:
// then it says that nothing runs any more, and a second ctrl+c quits as it would have at once.
func (m *Model) quitText() string {
	if m.st.Running() == 0 {
		return "⚠ no subagent is running any more: ctrl+c again quits (the recording is closed cleanly); any other key goes on"
	}
	return fmt.Sprintf("⚠ %s running: ctrl+c again quits and cancels them (the recording is closed cleanly); any other key goes on",
		session.Plural(m.st.Running(), "subagent"))
}

// scrollKey scrolls a full-screen text (help) or closes it.
func (m *Model) scrollKey(k tea.KeyPressMsg, top *int, close func()) tea.Cmd {
	page := max(1, m.h-8)
	switch k.String() {
	case "up", "k":
		*top--
	case "down", "j":
		*top++
	case "pgup":
		*top -= page
	case "pgdown", "space":
		*top += page
	case "home", "g":
		*top = 0
	case "esc", "q", "?":
		close()
	}
	return nil
}

// panelKey scrolls or closes a command's output panel; any other key closes it and goes on.
func (m *Model) panelKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	closePanel := func() { m.panel, m.panelName, m.panelTop = nil, "", 0 }
	switch k.String() {
	case "up", "down", "pgup", "pgdown", "home":
		return m.scrollKey(k, &m.panelTop, closePanel), true
	case "esc", "q":
		closePanel()
		return nil, true
	}
	closePanel()
	return nil, false
}

func (m *Model) cycleFocus() {
	m.leaveTree()
	switch m.focus {
	case focusInput:
		m.focus = focusTree
		m.in.Blur()
	case focusTree:
		m.focus = focusTranscript
	default:
		if m.o.Replay != nil {
			m.focus = focusTree
			return
		}
		m.focus = focusInput
		m.in.Focus()
	}
}

// typeOver clears a selected rejected line before typed text goes in: typing replaces it.
func (m *Model) typeOver() {
	if m.inSel {
		m.inSel = false
		m.in.SetValue("")
		m.cands = nil
	}
}

func (m *Model) inputKey(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if m.inSel {
		if typed(k) {
			// A new line starts: the key is its first character, whatever it is (even ?).
			m.typeOver()
			m.in, _ = m.in.Update(k)
			return nil
		}
		// enter sends it again, an arrow, end, backspace or tab edits it where it is.
		m.inSel = false
	}
	switch {
	case s == "tab":
		if strings.HasPrefix(m.in.Value(), "/") {
			m.complete()
			return nil
		}
		m.cycleFocus()
		return nil
	case s == "esc":
		m.cands = nil
		if m.in.Value() == "" {
			m.cycleFocus()
		}
		return nil
	case s == "?" && m.in.Value() == "":
		m.help = true
		return nil
	case s == "up":
		m.history(-1)
		return nil
	case s == "down":
		m.history(+1)
		return nil
	case s == "pgup" || s == "pgdown":
		m.view(m.sel).page(m, s == "pgup")
		return nil
	case s == "enter":
		line := strings.TrimSpace(m.in.Value())
		m.cands = nil
		if line == "" {
			return nil
		}
		if isInbox(line) {
			// The inbox is this screen's: it opens here (headless runs print the list).
			m.in.SetValue("")
			m.openInbox()
			return nil
		}
		m.startWait(line)
		if len(m.hist) == 0 || m.hist[len(m.hist)-1] != line {
			m.hist = append(m.hist, line)
		}
		m.histPos, m.draft = len(m.hist), ""
		m.in.SetValue("")
		m.setNotice("", false)
		return m.submit(line)
	}
	m.cands = nil
	// The input's own commands only blink its cursor; a steady cursor costs no wake-ups.
	m.in, _ = m.in.Update(k)
	return nil
}

// history moves through the input history; the line being typed is kept as a draft.
func (m *Model) history(d int) {
	if len(m.hist) == 0 {
		return
	}
	if m.histPos == len(m.hist) {
		m.draft = m.in.Value()
	}
	m.histPos = max(0, min(len(m.hist), m.histPos+d))
	if m.histPos == len(m.hist) {
		m.in.SetValue(m.draft)
	} else {
		m.in.SetValue(m.hist[m.histPos])
	}
	m.in.CursorEnd()
}

// complete applies the grammar's completion at the cursor: one candidate is taken at once;
// several are listed on the notice line and tab cycles through them.
func (m *Model) complete() {
	val := m.in.Value()
	if m.cands != nil && val == m.candLine {
		m.candIdx = (m.candIdx + 1) % len(m.cands)
		m.applyCandidate(m.cands[m.candIdx])
		m.showCandidates()
		return
	}
	cursor := len(string([]rune(val)[:min(m.in.Position(), utf8.RuneCountInString(val))]))
	live := m.live()
	if m.o.Runners != nil && strings.Contains(val, "--on") {
		live.Runners = m.o.Runners()
	}
	cs := commands.Complete(val, cursor, live)
	switch len(cs) {
	case 0:
		m.cands = nil
		m.setNotice("no completion here", false)
	case 1:
		m.cands = nil
		m.applyCandidate(cs[0])
		m.setNotice(cs[0].Text+"  "+cs[0].Description, false)
	default:
		m.cands, m.candIdx, m.candOrig = cs, 0, val
		m.applyCandidate(cs[0])
		m.showCandidates()
	}
}

func (m *Model) applyCandidate(c commands.Candidate) {
	val := m.baseLine()
	text := c.Text
	end := c.End
	next := val[:c.Start] + text + val[min(end, len(val)):]
	// A finished word gets its space, so the next tab completes the next word.
	if end >= len(val) && !strings.HasSuffix(text, "=") && !strings.HasSuffix(text, ",") {
		next += " "
	}
	m.in.SetValue(next)
	m.in.SetCursor(utf8.RuneCountInString(val[:c.Start] + text + " "))
	m.candLine = m.in.Value()
}

// baseLine is the line the candidates were computed for.
func (m *Model) baseLine() string {
	if m.cands != nil && m.candOrig != "" {
		return m.candOrig
	}
	return m.in.Value()
}

func (m *Model) showCandidates() {
	var b strings.Builder
	for i, c := range m.cands {
		if i > 0 {
			b.WriteString("  ")
		}
		if i == m.candIdx {
			b.WriteString("[" + c.Text + "]")
		} else {
			b.WriteString(c.Text)
		}
	}
	m.setNotice(b.String(), false)
}

// live lists the session's ids for completion.
func (m *Model) live() commands.LiveIDs {
	l := commands.LiveIDs{Agents: m.o.Agents, Labels: map[string]string{}}
	for _, sa := range m.st.Subagents {
		l.Subagents = append(l.Subagents, sa.ID)
		l.Labels[sa.ID] = sa.AgentType + " · " + sa.Status
	}
	for _, cv := range m.st.Convergences {
		l.Convergences = append(l.Convergences, cv.ID)
		for _, cf := range cv.Conflicts {
			if cf.Resolution == nil && !interruptedConflict(m.st, cf) {
				l.Conflicts = append(l.Conflicts, cf.ID)
			}
		}
	}
	for _, p := range m.st.Permissions {
		if p.Decision == "pending" {
			l.Requests = append(l.Requests, p.ID)
		}
	}
	return l
}
