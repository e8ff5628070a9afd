package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
)

// The reattach question. A replay opened on a recording whose session did not end (its summit
// was killed) while subagents still ran on remote runners asks, before anything else, whether
// to reattach them: the replay then ends and a live session goes on on the same recording,
// exactly as `summit resume FILE` does (Reattach reports the choice; the caller resumes). It
// leaves the replay for a live session that writes to the recording and talks to runners, so
// no single key does it: the user types the word reattach and confirms with enter. esc (or
// any other word) keeps the read-only replay, and nothing is written.

// reattachWord is what the user types to reattach.
const reattachWord = "reattach"

// reattachAsk is the open question: what was typed so far.
type reattachAsk struct {
	typed string
	wrong bool // enter was pressed on something else
}

// Reattach reports whether the user chose, in the reattach question, to reattach the
// subagents (the replay then ended).
func (m *Model) Reattach() bool { return m.reattached }

// reattachKey answers the open question: typed letters, backspace, enter, esc.
func (m *Model) reattachKey(k tea.KeyPressMsg) tea.Cmd {
	a := m.ra
	switch k.String() {
	case "esc":
		m.ra = nil
		m.setNotice("read-only replay: the subagents go on on their runners without a session; summit resume FILE reattaches them", false)
		return nil
	case "enter":
		if strings.TrimSpace(a.typed) == reattachWord {
			m.ra, m.reattached = nil, true
			return tea.Quit
		}
		a.wrong = true
		return nil
	case "backspace":
		if r := []rune(a.typed); len(r) > 0 {
			a.typed = string(r[:len(r)-1])
		}
		a.wrong = false
		return nil
	}
	if typed(k) && len(a.typed) < 32 {
		a.typed += k.Text
		a.wrong = false
	}
	return nil
}

// reattachBox is the question, framed, w wide at most.
func (m *Model) reattachBox(w int) []string {
	bw := min(w, 90)
	inner := bw - 4
	n := len(m.o.Reattach)
	var lines []string
	lines = append(lines, wrap(fmt.Sprintf("This session did not end (its summit stopped), and %s still %s on remote runners:",
		session.Plural(n, "subagent"), map[bool]string{true: "runs", false: "run"}[n == 1]), inner)...)
	for _, s := range m.o.Reattach {
		lines = append(lines, wrap("  • "+session.Sanitize(s), inner)...)
	}
	lines = append(lines, "")
	lines = append(lines, wrap("Reattach them? The replay ends and the session goes on live on this recording, as summit resume does: their events, permission requests and changes come here again.", inner)...)
	lines = append(lines, "")
	lines = append(lines, wrap("Type "+reattachWord+" and press enter to reattach; esc keeps a read-only replay.", inner)...)
	prompt := "> " + session.Sanitize(m.ra.typed) + "▏"
	lines = append(lines, m.sty.bold.Render(prompt))
	if m.ra.wrong {
		lines = append(lines, m.sty.warn.Render(truncate("type the word "+reattachWord+" (or esc)", inner, "…")))
	}
	return m.pane("reattach the subagents on runners?", lines, bw, len(lines)+2, true)
}

// reattachOverlay floats the question over the body (bodyH lines).
func (m *Model) reattachOverlay(body []string, bodyH int) []string {
	box := m.reattachBox(m.w - 2)
	for i, l := range box {
		box[i] = " " + l + " "
	}
	bw := textWidth(box[0])
	return overlay(body, box, max(0, (m.w-bw)/2), max(0, (bodyH-len(box))/2))
}
