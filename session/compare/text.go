package compare

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// WriteText writes the report as aligned tables that fit 80 columns: the two recordings, the
// overall figures and each agent type's (A, B, B−A), the first divergence, and the per-file
// comparison. Every cell that came from a recording is sanitised (and tabs and newlines shown
// as escapes) before it is measured, so the columns stay aligned whatever the files hold.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	side := func(label, x, y string) {
		fmt.Fprintf(&b, "%-10s %s %s\n", label, pad(x, 33), fit(y, 34))
	}
	side("", "A", "B")
	side("recording", fitLeft(r.A.Path, 33), fitLeft(r.B.Path, 34))
	side("session", r.A.SessionID, r.B.SessionID)
	side("events", fmt.Sprintf("%d, %s", r.A.Events, session.Plural(r.A.Commands, "command")),
		fmt.Sprintf("%d, %s", r.B.Events, session.Plural(r.B.Commands, "command")))
	side("ended", yesNo(r.A.Ended), yesNo(r.B.Ended))

	b.WriteString("\n")
	writeRow(&b, "overall", r.Overall, true)
	for _, row := range r.ByAgentType {
		b.WriteString("\n")
		writeRow(&b, row.AgentType, row, false)
	}

	b.WriteString("\nfirst divergence\n")
	if d := r.Divergence; d == nil {
		b.WriteString("  none: the same commands, and every subagent made the same tool calls with the same results\n")
	} else {
		what := map[string]string{"command": "the command lines differ", "spawn": "the subagents differ",
			"item": "tool calls, results or decisions differ"}[d.Kind]
		head := fmt.Sprintf("  %s, after %s alike", what, session.Plural(d.Command, "command"))
		if d.SubagentID != "" {
			head = fmt.Sprintf("  %s in %s, after %s alike", what, cell(d.SubagentID), session.Plural(d.Command, "command"))
		}
		b.WriteString(fit(head, 80) + "\n")
		for _, p := range []struct {
			name string
			pt   Point
		}{{"A", d.A}, {"B", d.B}} {
			seq := "(none)"
			if p.pt.Seq > 0 {
				seq = fmt.Sprintf("seq %d", p.pt.Seq)
			}
			fmt.Fprintf(&b, "  %s %-11s %s\n", p.name, seq, fit(p.pt.Description, 64))
		}
	}

	b.WriteString("\nfinal changes                  status     A                 B\n")
	if len(r.Files) == 0 {
		b.WriteString("  (none on either side)\n")
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "  %s %-10s %s %s\n", pad(fitLeft(f.Path, 28), 28), statusText[f.Status], pad(changeText(f.A), 17), changeText(f.B))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var statusText = map[string]string{OnlyA: "A only", OnlyB: "B only", Same: "same", Different: "different"}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no (no SessionEnded)"
}

// writeRow writes one row's figures, a line each: the overall row all of them, an agent type's
// the ones that are not zero on both sides.
func writeRow(b *strings.Builder, title string, row Row, all bool) {
	fmt.Fprintf(b, "%s %13s %13s %13s\n", pad(title, 24), "A", "B", "B-A")
	line := func(label, x, y, d string) {
		fmt.Fprintf(b, "  %s %13s %13s %13s\n", pad(label, 22), x, y, d)
	}
	num := func(label string, x, y, d int64) {
		if all || x != 0 || y != 0 {
			line(label, fmt.Sprint(x), fmt.Sprint(y), signed(d))
		}
	}
	a, c, d := row.A, row.B, row.Delta
	line("duration", ms(a.DurationMS), ms(c.DurationMS), signedMS(d.DurationMS))
	num("subagents", int64(a.Subagents), int64(c.Subagents), int64(d.Subagents))
	num("tokens in", a.TokensIn, c.TokensIn, d.TokensIn)
	num("tokens out", a.TokensOut, c.TokensOut, d.TokensOut)
	if all || a.CostUSD != nil || c.CostUSD != nil {
		line("cost", cost(a.CostUSD), cost(c.CostUSD), signedCost(d.CostUSD))
	}
	num("tool calls", int64(a.ToolCalls), int64(c.ToolCalls), int64(d.ToolCalls))
	num("retries", int64(a.Retries), int64(c.Retries), int64(d.Retries))
	num("permission requests", int64(a.PermissionRequests), int64(c.PermissionRequests), int64(d.PermissionRequests))
	num("  granted", int64(a.PermissionsGranted), int64(c.PermissionsGranted), int64(d.PermissionsGranted))
	num("  denied", int64(a.PermissionsDenied), int64(c.PermissionsDenied), int64(d.PermissionsDenied))
	num("conflicts", int64(a.Conflicts), int64(c.Conflicts), int64(d.Conflicts))
	num("  resolved", int64(a.ConflictsResolved), int64(c.ConflictsResolved), int64(d.ConflictsResolved))
	for _, o := range slices.Sorted(maps.Keys(union(a.Outcomes, c.Outcomes))) {
		line("outcome "+o, fmt.Sprint(a.Outcomes[o]), fmt.Sprint(c.Outcomes[o]), signed(int64(d.Outcomes[o])))
	}
}

func signed(n int64) string {
	if n > 0 {
		return fmt.Sprintf("+%d", n)
	}
	return fmt.Sprint(n)
}

func ms(n int64) string { return (time.Duration(n) * time.Millisecond).String() }

func signedMS(n int64) string {
	if n > 0 {
		return "+" + ms(n)
	}
	return ms(n)
}

func cost(c *float64) string {
	if c == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *c)
}

func signedCost(c *float64) string {
	switch {
	case c == nil:
		return "–"
	case *c >= 0:
		return fmt.Sprintf("+$%.4f", *c)
	}
	return fmt.Sprintf("-$%.4f", -*c)
}

// changeText is one side of a file row: the kind and the line counts, and whether it landed.
func changeText(f *FileChange) string {
	if f == nil {
		return "–"
	}
	s := fmt.Sprintf("+%d −%d", f.Added, f.Removed)
	switch {
	case f.Binary:
		s = "binary"
	case f.Kind == session.ChangeAdded:
		s = "new " + s
	case f.Kind == session.ChangeDeleted:
		s = "del " + s
	}
	if f.Applied {
		s += " ✓"
	}
	return s
}

// cell is text from a recording made safe and single-line for a table cell.
func cell(s string) string {
	s = strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
	return session.Sanitize(s)
}

// fit is s as a cell cut to w columns (an ellipsis marks the cut).
func fit(s string, w int) string { return ansi.Truncate(cell(s), w, "…") }

// fitLeft cuts from the left: the end of a path says more than its start.
func fitLeft(s string, w int) string {
	s = cell(s)
	if ansi.StringWidth(s) <= w {
		return s
	}
	return "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-w+1, "")
}

// pad fits s to exactly w columns.
func pad(s string, w int) string {
	s = fit(s, w)
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}
