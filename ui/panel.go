package ui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// panelBlocks is the open panel's output as text and tables; every cell sanitised (a
// backend's output quotes agent files and model text).
func (m *Model) panelBlocks() []render.TextBlock {
	bs := render.Blocks(m.panel)
	for _, b := range bs {
		if t := b.Table; t != nil {
			for j, c := range t.Header {
				t.Header[j] = session.Sanitize(c)
			}
			for _, r := range t.Rows {
				for j, c := range r {
					r[j] = session.Sanitize(c)
				}
			}
		}
	}
	return bs
}

// panelWidth is the width the open panel's content takes unwrapped: its widest line or table.
func (m *Model) panelWidth() int {
	if diffPanel(m.panelName) {
		n := 0
		for _, l := range m.panel {
			n = max(n, textWidth(session.Sanitize(strings.ReplaceAll(l, "\t", "    "))))
		}
		return n
	}
	n := 0
	for _, b := range m.panelBlocks() {
		if b.Table != nil {
			n = max(n, b.Table.Width())
			continue
		}
		for _, l := range b.Lines {
			n = max(n, textWidth(session.Sanitize(l)))
		}
	}
	return n
}

// panelLines lays the open panel's output out in w columns: text wrapped, tables aligned
// with a header in bold, each row on one line.
func (m *Model) panelLines(w int) []string {
	var lines []string
	for _, b := range m.panelBlocks() {
		if t := b.Table; t != nil {
			t.Style = m.tableStyle
			lines = append(lines, t.Lines(w)...)
			continue
		}
		for _, l := range b.Lines {
			lines = append(lines, wrap(l, w)...)
		}
	}
	return lines
}

// tableStyle draws a table's header in bold and its cells plain.
func (m *Model) tableStyle(row, _ int) lipgloss.Style {
	if row == -1 {
		return m.sty.bold.st
	}
	return lipgloss.NewStyle()
}

// wordWrap wraps plain text at spaces only (ansi's wrap also breaks after a hyphen, which
// splits a flag such as --transfer-control); a word longer than w is cut hard.
func wordWrap(s string, w int) []string {
	w = max(4, w)
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
		for ansi.StringWidth(line) > w {
			out = append(out, ansi.Cut(line, 0, w))
			line = ansi.Cut(line, w, ansi.StringWidth(line))
		}
	}
	return append(out, line)
}
