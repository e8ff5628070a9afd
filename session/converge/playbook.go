package converge

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/summit-dev/summit/session"
)

// Downstream Context → playbook operations.
//
// A member's Downstream Context is Markdown. Each bullet becomes one playbook item:
//
//	### Patterns                          a heading sets the section of plain bullets under it
//	- Key Interfaces Introduced: Foo() in a.go   "Label: text" → section key_interfaces_introduced
//	- plain text                          → the current heading's section, else "notes"
//	- UPDATE ctx-3: new text              → UPDATE of an existing entry
//	- REMOVE ctx-3                        → REMOVE of an existing entry
//	- TAG ctx-3 harmful                   → TAG of an existing entry (helpful when no tag is named)
//
// Values that say nothing ("none", "n/a", "-") are skipped. An ADD whose text matches an
// existing entry of the same section becomes TAG helpful instead: the fact was confirmed.

var (
	bulletRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[-*+]\s+(.*)$`) })
	headingRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#{1,6}\s+(.*?)\s*#*\s*$`) })
	labelRe   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\*{0,2}([A-Za-z][A-Za-z0-9 /&_-]{0,60}?)\*{0,2}:\s*(.*)$`)
	})
	explicit = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?i)(UPDATE|REMOVE|TAG)\s+([A-Za-z0-9._-]+)\s*:?\s*(.*)$`)
	})
)

// item is one parsed bullet.
type item struct {
	op      session.PlaybookOp
	problem string // why it was dropped, when it was
}

func parseDownstream(text string, book []session.PlaybookEntry) []item {
	var out []item
	section := ""
	var cur *item
	for _, line := range strings.Split(text, "\n") {
		if m := headingRe().FindStringSubmatch(line); m != nil {
			if strings.EqualFold(m[1], "Downstream Context") {
				continue
			}
			section, cur = sectionKey(m[1]), nil
			continue
		}
		m := bulletRe().FindStringSubmatch(line)
		if m == nil {
			// An indented continuation line belongs to the bullet above it.
			if t := strings.TrimSpace(line); t != "" && cur != nil && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) {
				cur.op.Content += " " + t
			} else {
				cur = nil
			}
			continue
		}
		body := strings.TrimSpace(m[1])
		var it item
		switch e := explicit().FindStringSubmatch(body); {
		case e != nil:
			typ, id, rest := strings.ToUpper(e[1]), e[2], strings.TrimSpace(e[3])
			it.op = session.PlaybookOp{Type: typ, BulletID: id}
			switch typ {
			case session.OpUpdate:
				it.op.Content = rest
				if empty(rest) {
					it.problem = fmt.Sprintf("UPDATE %s gives no new text", id)
				}
			case session.OpTag:
				tag := strings.ToLower(strings.Trim(rest, " .`*"))
				if tag == "" {
					tag = "helpful"
				}
				it.op.Metadata = map[string]any{tag: 1}
			}
			if entry(book, id) < 0 {
				it.problem = fmt.Sprintf("%s names playbook entry %s, which does not exist", typ, id)
			}
		default:
			sec, content := section, body
			if l := labelRe().FindStringSubmatch(body); l != nil {
				sec, content = sectionKey(l[1]), strings.TrimSpace(l[2])
			}
			if sec == "" {
				sec = "notes"
			}
			if empty(content) {
				cur = nil
				continue
			}
			it.op = session.PlaybookOp{Type: session.OpAdd, Section: sec, Content: content}
		}
		out = append(out, it)
		cur = &out[len(out)-1]
	}
	// Confirmations of existing entries become TAG helpful.
	for i := range out {
		op := &out[i].op
		if op.Type != session.OpAdd {
			continue
		}
		for _, e := range book {
			if e.Section == op.Section && norm(e.Content) == norm(op.Content) {
				*op = session.PlaybookOp{Type: session.OpTag, BulletID: e.ID, Metadata: map[string]any{"helpful": 1}}
				break
			}
		}
	}
	return out
}

func entry(book []session.PlaybookEntry, id string) int {
	for i, e := range book {
		if e.ID == id {
			return i
		}
	}
	return -1
}

func empty(s string) bool {
	switch strings.ToLower(strings.Trim(s, " .`*_[]\"'")) {
	case "", "none", "n/a", "na", "-", "nothing", "no":
		return true
	}
	return false
}

// sectionKey is a label in snake case: "Key Interfaces Introduced" → key_interfaces_introduced.
func sectionKey(label string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(strings.Trim(label, " *`_")) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
		} else {
			sep = true
		}
	}
	return b.String()
}

// norm is text compared for sameness: case, spacing and trailing punctuation ignored.
func norm(s string) string {
	return strings.TrimRight(strings.Join(strings.Fields(strings.ToLower(s)), " "), ".;:!")
}
