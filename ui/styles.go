package ui

import (
	"image/color"
	"sort"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// styles is the theme. It is built for the terminal's background (light or dark, asked with
// tea.RequestBackgroundColor); with NO_COLOR set, Bubble Tea's color profile strips every
// color, and the attributes that remain (bold, faint, reverse) still carry the meaning.
//
// Each is a painter: the style's own escape sequences, taken once, put around a line of text.
// Rendering a line through lipgloss measured and split it on every frame; a painter gives
// the same bytes for a single line at the cost of a concatenation.
type styles struct {
	header, headerDim   painter
	sep                 painter
	selected, cursor    painter
	dim, bold           painter
	ok, warn, bad, run  painter
	user, tool          painter
	notice, noticeErr   painter
	banner              painter
	footerKey, footer   painter
	prompt              painter
	box                 lipgloss.Style
	add, del            painter
	marker              painter
	border, borderFocus painter
	match               painter
}

// painter renders text in a lipgloss style. A single line (no newline, tab or carriage
// return) is wrapped in the style's sequences, which is what lipgloss renders for it (a style
// without padding, border, width or margins, as all of these are); anything else goes
// through lipgloss.
type painter struct {
	st      lipgloss.Style
	on, off string
}

func paint(st lipgloss.Style) painter {
	r := st.Render("x")
	i := strings.IndexByte(r, 'x')
	return painter{st: st, on: r[:i], off: r[i+1:]}
}

// Render is lipgloss.Style.Render, fast for one line.
func (p painter) Render(strs ...string) string {
	if len(strs) != 1 || strings.ContainsAny(strs[0], "\n\t\r") {
		return p.st.Render(strs...)
	}
	if p.on == "" {
		return strs[0]
	}
	return p.on + strs[0] + p.off
}

// textWidth is ansi.StringWidth(s), in a single pass without grapheme segmentation for what
// a frame is made of: printable ASCII, CSI sequences (the styles' SGR), and runes of width one
// that never join another into a cluster (narrowRunes: box drawing, braille, arrows, Latin
// letters, most symbols). Anything else is measured by ansi.StringWidth, whole.
func textWidth(s string) int {
	if w, ok := plainWidth(s); ok {
		return w
	}
	return ansi.StringWidth(s)
}

// plainWidth is textWidth's single pass: ok is false for a string it cannot measure so.
func plainWidth(s string) (w int, ok bool) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			w++
			i++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			// CSI: parameter bytes 0x30–0x3F, intermediate bytes 0x20–0x2F, a final byte
			// 0x40–0x7E.
			j := i + 2
			for j < len(s) && s[j] >= 0x20 && s[j] < 0x40 {
				j++
			}
			if j >= len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return 0, false
			}
			i = j + 1
		case c < 0x80:
			return 0, false // a control, or another escape sequence
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if !narrow(r) {
				return 0, false
			}
			w++
			i += n
		}
	}
	return w, true
}

// truncate is ansi.Truncate, which segments the whole line, only for a line that is too wide.
func truncate(s string, w int, tail string) string {
	if textWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, tail)
}

func narrow(r rune) bool {
	i := sort.Search(len(narrowRunes), func(i int) bool { return narrowRunes[i][1] >= r })
	return i < len(narrowRunes) && narrowRunes[i][0] <= r
}

// narrowRunes are the ranges of runes that ansi.StringWidth counts as one column alone, next
// to ASCII, next to themselves and between escape sequences (TestTextWidth checks every one):
// Latin-1 and Latin Extended (no soft hyphen), general punctuation, arrows, mathematical and
// technical symbols, box drawing, blocks and geometric shapes, the text-presentation
// symbols and dingbats, braille. The emoji among them (⌚, ◽, ☔, ✅, …) are left out.
var narrowRunes = [...][2]rune{
	{0x00A1, 0x00AC}, {0x00AE, 0x024F}, {0x2010, 0x2027}, {0x202F, 0x205E}, {0x2190, 0x2319},
	{0x231C, 0x2328}, {0x232B, 0x23E8}, {0x23ED, 0x23EF}, {0x23F1, 0x23F2}, {0x23F4, 0x23FF},
	{0x2500, 0x25FC}, {0x25FF, 0x2613}, {0x2616, 0x262F}, {0x2638, 0x2647}, {0x2654, 0x267E},
	{0x2680, 0x2689}, {0x2690, 0x2692}, {0x2694, 0x26A0}, {0x26A2, 0x26A9}, {0x26AC, 0x26BC},
	{0x26BF, 0x26C3}, {0x26C6, 0x26CD}, {0x26CF, 0x26D3}, {0x26D5, 0x26E9}, {0x26EB, 0x26F1},
	{0x26F4, 0x26F4}, {0x26F6, 0x26F9}, {0x26FB, 0x26FC}, {0x26FE, 0x2704}, {0x2706, 0x2709},
	{0x270C, 0x2727}, {0x2729, 0x274B}, {0x274D, 0x274D}, {0x274F, 0x2752}, {0x2756, 0x2756},
	{0x2758, 0x2794}, {0x2798, 0x27AF}, {0x27B1, 0x27BE}, {0x2800, 0x28FF},
}

func newStyles(dark bool) styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkc string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(darkc)) }
	accent := c("#5A3FD9", "#A48CFF")
	muted := c("#6B6B6B", "#8A8A8A")
	green := c("#1F7A3A", "#5FD787")
	yellow := c("#8A6100", "#F2C94C")
	red := c("#B3261E", "#FF6B6B")
	blue := c("#1D5FA8", "#6CB6FF")
	return styles{
		header:    paint(lipgloss.NewStyle().Bold(true).Foreground(accent)),
		headerDim: paint(lipgloss.NewStyle().Foreground(muted)),
		sep:       paint(lipgloss.NewStyle().Foreground(muted)),
		selected:  paint(lipgloss.NewStyle().Bold(true).Foreground(accent)),
		cursor:    paint(lipgloss.NewStyle().Bold(true).Foreground(accent)),
		dim:       paint(lipgloss.NewStyle().Faint(true)),
		bold:      paint(lipgloss.NewStyle().Bold(true)),
		ok:        paint(lipgloss.NewStyle().Foreground(green)),
		warn:      paint(lipgloss.NewStyle().Bold(true).Foreground(yellow)),
		bad:       paint(lipgloss.NewStyle().Bold(true).Foreground(red)),
		run:       paint(lipgloss.NewStyle().Foreground(blue)),
		user:      paint(lipgloss.NewStyle().Bold(true).Foreground(accent)),
		tool:      paint(lipgloss.NewStyle().Foreground(blue)),
		notice:    paint(lipgloss.NewStyle().Foreground(muted)),
		noticeErr: paint(lipgloss.NewStyle().Bold(true).Foreground(red)),
		banner:    paint(lipgloss.NewStyle().Bold(true).Reverse(true)),
		footerKey: paint(lipgloss.NewStyle().Bold(true)),
		footer:    paint(lipgloss.NewStyle().Foreground(muted)),
		prompt:    paint(lipgloss.NewStyle().Bold(true).Foreground(accent)),
		box:       lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		add:       paint(lipgloss.NewStyle().Foreground(green)),
		del:       paint(lipgloss.NewStyle().Foreground(red)),
		marker:    paint(lipgloss.NewStyle().Foreground(yellow)),
		// The focused pane: a heavy border (shape carries it without colour) in the accent.
		border:      paint(lipgloss.NewStyle().Foreground(muted)),
		borderFocus: paint(lipgloss.NewStyle().Bold(true).Foreground(accent)),
		match:       paint(lipgloss.NewStyle().Reverse(true).Bold(true)),
	}
}
