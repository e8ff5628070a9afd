package render

import (
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/x/ansi"
)

// Table is rows of cells laid out in aligned columns, drawn by lipgloss/table without borders.
// Widths are display widths (a wide rune counts two, an escape sequence none), never bytes or
// runes. Every column but the last is as wide as its widest cell (header included); the last
// takes what the width leaves and gives way: its cells are cut with … or, with Wrap, wrapped
// within the column. So a row never runs into another column, and a column is never cut while
// there is room for it.
type Table struct {
	Header []string // optional
	Rows   [][]string
	// Wrap wraps the last column's cells within it instead of cutting them.
	Wrap bool
	// Min are minimum column widths (for tables drawn in parts that must line up).
	Min []int
	// Right are the columns aligned right (figures).
	Right []bool
	// Style styles a cell (row -1 is the header); nil draws plain text without trailing spaces.
	Style func(row, col int) lipgloss.Style
}

// tableGap is the space between two columns.
const tableGap = 2

func (t *Table) cols() int {
	n := len(t.Header)
	for _, r := range t.Rows {
		n = max(n, len(r))
	}
	return n
}

// widths are the columns' natural widths: the widest cell of each, at least Min.
func (t *Table) widths() []int {
	ws := make([]int, t.cols())
	for j := range ws {
		if j < len(t.Min) {
			ws[j] = t.Min[j]
		}
	}
	for j, c := range t.Header {
		ws[j] = max(ws[j], ansi.StringWidth(c))
	}
	for _, r := range t.Rows {
		for j, c := range r {
			ws[j] = max(ws[j], ansi.StringWidth(c))
		}
	}
	return ws
}

// Width is the table's natural width: every column as wide as its widest cell.
func (t *Table) Width() int {
	ws := t.widths()
	n := 0
	for _, w := range ws {
		n += w
	}
	return n + tableGap*max(0, len(ws)-1)
}

// Lines lays the table out in at most width columns (width <= 0: its natural width). The last
// column is narrowed first, down to a third of the width; then the widest of the others are,
// so one very long cell (a hostile agent name) cannot squeeze the rest out.
func (t *Table) Lines(width int) []string {
	ws := t.widths()
	n := len(ws)
	if n == 0 {
		return nil
	}
	if width > 0 {
		// The last column keeps at least a third of the room (or its natural width, or 8);
		// the widest of the others give way to it, down to 4 cells each.
		last := n - 1
		room := width - tableGap*last
		others := 0
		for _, w := range ws[:last] {
			others += w
		}
		keep := min(ws[last], max(8, room/3))
		for others > room-keep && last > 0 {
			j := 0
			for k := range ws[:last] {
				if ws[k] > ws[j] {
					j = k
				}
			}
			if ws[j] <= 4 {
				break
			}
			ws[j]--
			others--
		}
		ws[last] = max(1, min(ws[last], room-others))
	}
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = make([]string, n)
		copy(rows[i], r)
	}
	tb := table.New().Border(lipgloss.HiddenBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderHeader(false).BorderColumn(false).BorderRow(false).
		Wrap(t.Wrap).Rows(rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			s := lipgloss.NewStyle()
			if t.Style != nil {
				s = t.Style(row, col)
			}
			if col < len(t.Right) && t.Right[col] {
				s = s.Align(lipgloss.Right)
			}
			w := ws[col]
			if col < n-1 {
				// Width counts the padding: the gap is inside the column.
				s, w = s.PaddingRight(tableGap), w+tableGap
			}
			return s.Width(w)
		})
	if len(t.Header) > 0 {
		h := make([]string, n)
		copy(h, t.Header)
		tb.Headers(h...)
	}
	lines := strings.Split(tb.String(), "\n")
	if t.Style == nil {
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " ")
		}
	}
	return lines
}

// A TextBlock is a run of lines of a command's output: plain text, or a table when its lines
// hold tab-separated cells (the first line of the run is the table's header).
type TextBlock struct {
	Lines []string // plain text; nil for a table
	Table *Table
}

// Blocks splits output into text and tables. The orchestrator writes tables (/status,
// /agents) as tab-separated lines so that each reader lays them out for its own width.
func Blocks(lines []string) []TextBlock {
	var out []TextBlock
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.Contains(lines[j], "\t") == strings.Contains(lines[i], "\t") {
			j++
		}
		if !strings.Contains(lines[i], "\t") {
			out = append(out, TextBlock{Lines: lines[i:j]})
		} else {
			t := &Table{Header: strings.Split(lines[i], "\t")}
			for _, l := range lines[i+1 : j] {
				t.Rows = append(t.Rows, strings.Split(l, "\t"))
			}
			out = append(out, TextBlock{Table: t})
		}
		i = j
	}
	return out
}

// AlignTabs lays out the tab-separated tables of a command's output as plain aligned columns
// at their natural width (for readers with no width: a script's progress, a log).
func AlignTabs(text string) string {
	if !strings.Contains(text, "\t") {
		return text
	}
	trail := strings.HasSuffix(text, "\n")
	var out []string
	for _, b := range Blocks(strings.Split(strings.TrimSuffix(text, "\n"), "\n")) {
		if b.Table != nil {
			out = append(out, b.Table.Lines(0)...)
			continue
		}
		out = append(out, b.Lines...)
	}
	s := strings.Join(out, "\n")
	if trail {
		s += "\n"
	}
	return s
}
