package ui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// styles is the theme. It is built for the terminal's background (light or dark, asked with
// tea.RequestBackgroundColor); with NO_COLOR set, Bubble Tea's color profile strips every
// color, and the attributes that remain (bold, faint, reverse) still carry the meaning.
type styles struct {
	header, headerDim   lipgloss.Style
	sep                 lipgloss.Style
	selected, cursor    lipgloss.Style
	dim, bold           lipgloss.Style
	ok, warn, bad, run  lipgloss.Style
	user, tool          lipgloss.Style
	notice, noticeErr   lipgloss.Style
	banner              lipgloss.Style
	footerKey, footer   lipgloss.Style
	prompt              lipgloss.Style
	box                 lipgloss.Style
	add, del            lipgloss.Style
	marker              lipgloss.Style
	border, borderFocus lipgloss.Style
	match               lipgloss.Style
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
		header:    lipgloss.NewStyle().Bold(true).Foreground(accent),
		headerDim: lipgloss.NewStyle().Foreground(muted),
		sep:       lipgloss.NewStyle().Foreground(muted),
		selected:  lipgloss.NewStyle().Bold(true).Foreground(accent),
		cursor:    lipgloss.NewStyle().Bold(true).Foreground(accent),
		dim:       lipgloss.NewStyle().Faint(true),
		bold:      lipgloss.NewStyle().Bold(true),
		ok:        lipgloss.NewStyle().Foreground(green),
		warn:      lipgloss.NewStyle().Bold(true).Foreground(yellow),
		bad:       lipgloss.NewStyle().Bold(true).Foreground(red),
		run:       lipgloss.NewStyle().Foreground(blue),
		user:      lipgloss.NewStyle().Bold(true).Foreground(accent),
		tool:      lipgloss.NewStyle().Foreground(blue),
		notice:    lipgloss.NewStyle().Foreground(muted),
		noticeErr: lipgloss.NewStyle().Bold(true).Foreground(red),
		banner:    lipgloss.NewStyle().Bold(true).Reverse(true),
		footerKey: lipgloss.NewStyle().Bold(true),
		footer:    lipgloss.NewStyle().Foreground(muted),
		prompt:    lipgloss.NewStyle().Bold(true).Foreground(accent),
		box:       lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		add:       lipgloss.NewStyle().Foreground(green),
		del:       lipgloss.NewStyle().Foreground(red),
		marker:    lipgloss.NewStyle().Foreground(yellow),
		// The focused pane: a heavy border (shape carries it without colour) in the accent.
		border:      lipgloss.NewStyle().Foreground(muted),
		borderFocus: lipgloss.NewStyle().Bold(true).Foreground(accent),
		match:       lipgloss.NewStyle().Reverse(true).Bold(true),
	}
}
