package ui

import (
	"strconv"
	"strings"

	"charm.land/glamour/v2"
	"github.com/charmbracelet/x/ansi"
)

// mdCache renders Markdown with glamour once per (key, text, width): one renderer per width,
// results kept, so a settled capsule costs nothing on later frames. The text was sanitised
// before it got here; glamour's own output is the only escape sequences in it.
type mdCache struct {
	dark      bool
	renderers map[int]*glamour.TermRenderer
	done      map[string][]string
}

func newMDCache(dark bool) *mdCache {
	return &mdCache{dark: dark, renderers: map[int]*glamour.TermRenderer{}, done: map[string][]string{}}
}

func (c *mdCache) render(key, text string, width int) []string {
	k := key + "\x00" + strconv.Itoa(width) + "\x00" + text
	if ls, ok := c.done[k]; ok {
		return ls
	}
	r := c.renderers[width]
	if r == nil {
		style := "light"
		if c.dark {
			style = "dark"
		}
		var err error
		if r, err = glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(max(10, width-2))); err != nil {
			return wrap(text, width)
		}
		c.renderers[width] = r
	}
	out, err := r.Render(text)
	if err != nil {
		return wrap(text, width)
	}
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	for i, l := range lines {
		// glamour pads to its wrap width with trailing spaces; trim so narrow panes fit.
		lines[i] = ansi.Truncate(strings.TrimRight(l, " "), width, "")
	}
	c.done[k] = lines
	return lines
}
