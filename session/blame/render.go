package blame

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// Tag is a line's origin in one column: "sa-3 · cv-1 · cf-1", "sa-5", "unchanged".
func (l Line) Tag() string {
	o := l.Origin
	if o == nil {
		return "unchanged"
	}
	parts := []string{o.Who()}
	if o.ConvergenceID != "" && o.SubagentID != "" {
		parts = append(parts, o.ConvergenceID)
	}
	if o.ConflictID != "" && !o.Edited {
		parts = append(parts, o.ConflictID)
	}
	return strings.Join(parts, " · ")
}

// Render writes a report as text: a head line, one line per file line (number, origin, text),
// then each origin once, in the order its lines appear. Every text passes session.Sanitize.
func Render(w io.Writer, rep Report) error {
	var b strings.Builder
	applies := "never applied by summit"
	if len(rep.Applies) > 0 {
		applies = "applied by " + strings.Join(rep.Applies, ", ")
	}
	fmt.Fprintf(&b, "%s · %s · %s landed by summit · %s\n", rep.Path, session.Plural(len(rep.Lines), "line"),
		session.Plural(rep.Landed, "line"), applies)
	tagW, numW := len("unchanged"), len(fmt.Sprint(len(rep.Lines)))
	for _, l := range rep.Lines {
		tagW = max(tagW, min(ansi.StringWidth(l.Tag()), 36))
	}
	var order []*Origin
	seen := map[*Origin]bool{}
	for _, l := range rep.Lines {
		text := l.Text
		if !l.TextKnown {
			text = "(not in the recording)"
		}
		tag := ansi.Truncate(l.Tag(), tagW, "…")
		fmt.Fprintf(&b, "%*d %s%s │ %s\n", numW, l.N, tag, strings.Repeat(" ", tagW-ansi.StringWidth(tag)), text)
		if o := l.Origin; o != nil && !seen[o] {
			seen[o] = true
			order = append(order, o)
		}
	}
	if len(order) > 0 {
		b.WriteString("\norigins:\n")
	}
	for _, o := range order {
		b.WriteString(describe(o))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, session.Sanitize(b.String()))
	return err
}

// describe is one origin: who wrote it with what, through which convergence and resolution,
// and which apply landed it.
func describe(o *Origin) string {
	var b strings.Builder
	switch {
	case o.Edited:
		fmt.Fprintf(&b, "  %s: the reviewer's own text for %s\n", o.Who(), o.ConflictID)
	case o.SubagentID == "":
		fmt.Fprintf(&b, "  %s: made by the convergence (no member wrote these lines)\n", o.ConvergenceID)
	default:
		agent := o.AgentType
		if o.AgentName != "" && o.AgentName != o.AgentType {
			agent = strings.TrimSpace(agent + " (" + o.AgentName + ")")
		}
		model := o.Model
		if model == "" {
			model = "model: " + orUnknown(o.Provider)
			if o.Provider == "script" {
				model = "script tapes, no model"
			}
		}
		cost := "cost unknown"
		if o.CostUSD != nil {
			cost = fmt.Sprintf("$%.4f", *o.CostUSD)
		}
		fmt.Fprintf(&b, "  %s %s · %s · %s tokens (%d in, %d out) · %s\n", o.Who(), agent, model,
			thousands(o.Tokens.Input+o.Tokens.Output), o.Tokens.Input, o.Tokens.Output, cost)
		if o.ChangesSeq != 0 {
			fmt.Fprintf(&b, "    written: its recorded changes at #%d\n", o.ChangesSeq)
		}
	}
	if o.ConvergenceID != "" {
		via := fmt.Sprintf("    through: %s %s", o.ConvergenceID, o.Strategy)
		switch {
		case o.ConflictID != "" && o.Method != "":
			via += fmt.Sprintf(" · %s resolved by %s: %s", o.ConflictID, o.Method, o.Choice)
			if o.ResolvedSeq != 0 {
				via += fmt.Sprintf(" (#%d)", o.ResolvedSeq)
			}
		case o.ConflictID != "":
			via += " · " + o.ConflictID + " (unresolved)"
		default:
			via += " · no conflict here"
		}
		b.WriteString(via + "\n")
	}
	fmt.Fprintf(&b, "    landed: %s at #%d\n", o.ApplyID, o.ApplySeq)
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// thousands is n with thousands separators: 12,345.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
