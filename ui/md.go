package ui

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"charm.land/glamour/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// mdCache renders Markdown with glamour once per (key, text, width): one renderer per width,
// made on first use (never at start-up: glamour's renderer is built the first time a frame
// shows Markdown), results kept, so a settled message or capsule costs nothing on later
// frames and scrolling back over it does not render it again.
//
// Invariant: nothing from a model reaches the terminal as an escape sequence. The text is
// sanitised before glamour reads it (mdSafe), and glamour's output keeps only its own colour
// sequences (mdClean): Markdown decodes character references (&#x1b; is ESC, &#x202e; a
// bidi override), so sanitising the input alone is not enough.
type mdCache struct {
	dark      bool
	renderers map[int]*glamour.TermRenderer
	done      map[string][]string
}

// mdCacheMax bounds the rendered texts kept: past it the cache starts over (each transcript
// item keeps its own lines in its tview cache, so only a scroll over more messages than this
// renders some again).
const mdCacheMax = 4096

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
		if len(c.renderers) >= 8 {
			// A window dragged through many widths: keep only the renderers still in use.
			c.renderers = map[int]*glamour.TermRenderer{}
		}
		c.renderers[width] = r
	}
	out, err := r.Render(mdSafe(text))
	if err != nil {
		return wrap(text, width)
	}
	lines := strings.Split(strings.Trim(mdClean(out), "\n"), "\n")
	for i, l := range lines {
		// glamour pads to its wrap width with (styled) spaces; trim so narrow panes fit.
		lines[i] = ansi.Truncate(trimPad(l), width, "")
	}
	// glamour frames a document with blank lines; a transcript item needs none.
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[0])) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(c.done) >= mdCacheMax {
		c.done = map[string][]string{}
	}
	c.done[k] = lines
	return lines
}

// entityRef is a Markdown character reference: numeric (&#27; &#x1b;) or named (&lrm;).
// Compiled on first use, as every regexp here: a package variable would compile it in
// every process's start, `summit version` included.
var entityRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`&(#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8}|[A-Za-z][A-Za-z0-9]{1,40});`)
})

// mdSafe is text as glamour may read it: sanitised (session.Sanitize), and every character
// reference that would decode to something Sanitize escapes (a control, a bidi override, a
// zero-width character) written with its & escaped, so it shows as typed.
func mdSafe(text string) string {
	text = session.Sanitize(text)
	if !strings.Contains(text, "&") {
		return text
	}
	return entityRef().ReplaceAllStringFunc(text, func(ref string) string {
		dec := html.UnescapeString(ref)
		if dec == ref || session.Sanitize(dec) == dec && !strings.ContainsAny(dec, "\n\t") {
			return ref
		}
		return "&amp;" + ref[1:]
	})
}

// mdClean keeps glamour's colour sequences (SGR) and nothing else that could act on the
// terminal: its hyperlinks (OSC 8, whose target a model wrote; the link's text and URL stay
// as text) are dropped, any other escape is written escaped, and the text between sequences
// is sanitised again.
func mdClean(s string) string {
	if !strings.ContainsRune(s, 0x1b) && session.Sanitize(s) == s {
		return s
	}
	var b strings.Builder
	text := func(t string) { b.WriteString(session.Sanitize(t)) }
	for {
		i := strings.IndexByte(s, 0x1b)
		if i < 0 {
			text(s)
			return b.String()
		}
		text(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "\x1b["):
			j := 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				b.WriteString(s[:j+1]) // a colour or attribute: glamour's own
				s = s[j+1:]
				continue
			}
		case strings.HasPrefix(s, "\x1b]"):
			// An OSC string ends at BEL or ESC \; another ESC inside ends it too (and is
			// judged on its own).
			j := 2
			for j < len(s) && s[j] != 0x07 && s[j] != 0x1b {
				j++
			}
			switch {
			case j < len(s) && s[j] == 0x07:
				s = s[j+1:]
			case strings.HasPrefix(s[j:], "\x1b\\"):
				s = s[j+2:]
			default:
				s = s[j:]
			}
			continue
		}
		b.WriteString(`\x1b`)
		s = s[1:]
	}
}

// padTail is glamour's padding at the end of a line: styled or plain spaces.
var padTail = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:\x1b\[[0-9;]*m)?(?: |\x1b\[[0-9;]*m)*$`) })

// trimPad drops a line's trailing padding and closes any style left open.
func trimPad(l string) string {
	t := padTail().FindStringIndex(l)
	if t == nil || t[0] == len(l) {
		return l
	}
	tail := l[t[0]:]
	l = l[:t[0]]
	if strings.Contains(tail, "\x1b[") && !strings.HasSuffix(l, "\x1b[m") {
		l += "\x1b[m"
	}
	return l
}
