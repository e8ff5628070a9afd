package converge

import (
	"fmt"
	"strings"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// Document is the combined result; the json output format is this, indented.
type Document struct {
	ConvergenceID      string               `json:"convergence_id"`
	Strategy           string               `json:"strategy"`
	ConflictResolution string               `json:"conflict_resolution"`
	Outcome            string               `json:"outcome"`
	Members            []MemberDoc          `json:"members"`
	Summary            string               `json:"summary"`
	Findings           []FindingDoc         `json:"findings"`
	Patches            []session.Patch      `json:"patches"`
	Operations         []session.PlaybookOp `json:"operations"`
	Conflicts          []ConflictDoc        `json:"conflicts"`
	Notes              []string             `json:"notes"`
	// Files and Sources are the resolved change set when members bring recorded changes
	// (Result.Files, Result.Sources).
	Files   []session.FileChange `json:"files,omitempty"`
	Sources map[string]string    `json:"sources,omitempty"`
}

// MemberDoc is one member and whether its result was used.
type MemberDoc struct {
	SubagentID string   `json:"subagent_id"`
	Outcome    string   `json:"outcome"`
	Confidence *float64 `json:"confidence,omitempty"`
	Used       bool     `json:"used"`
}

// FindingDoc is a finding with the members that reported it.
type FindingDoc struct {
	protocols.Finding
	Sources []string `json:"sources"`
}

// ConflictDoc is how a conflict was settled.
type ConflictDoc struct {
	ConflictID string `json:"conflict_id"`
	Kind       string `json:"kind"`
	Choice     string `json:"choice"`
	Method     string `json:"method"`
	Note       string `json:"note,omitempty"`
	// Edited says the reviewer wrote the conflicted lines by hand (choice edit); the notes
	// say where, and the patches hold the text.
	Edited bool `json:"edited_by_reviewer,omitempty"`
}

// reasoning is the DeltaBatch's one-paragraph account of itself.
func (d Document) reasoning() string {
	var used []string
	for _, m := range d.Members {
		if m.Used {
			used = append(used, m.SubagentID)
		}
	}
	hunks := 0
	for _, p := range d.Patches {
		hunks += strings.Count(p.Diff, "\n@@ ")
	}
	s := fmt.Sprintf("%s of %s (%s): %d file patches (%d hunks), %d findings, %d playbook operations",
		d.Strategy, orDash(strings.Join(used, ", ")), d.Outcome, len(d.Patches), hunks, len(d.Findings), len(d.Operations))
	if d.Files != nil {
		whole := 0
		for _, f := range d.Files {
			if !textPatchable(f) {
				whole++
			}
		}
		s += fmt.Sprintf("; %s really changed (%d beyond the text patches)", session.Plural(len(d.Files), "file"), whole)
	}
	for _, c := range d.Conflicts {
		s += fmt.Sprintf("; %s → %s (%s)", c.ConflictID, c.Choice, c.Method)
	}
	if len(d.Notes) > 0 {
		s += ". " + strings.Join(d.Notes, ". ")
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Markdown renders the document for people: the UI and replay --print. Text from members
// is sanitised where it is shown, not here.
func (d Document) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s · %s\n\n", d.ConvergenceID, d.Strategy)
	fmt.Fprintf(&b, "**Outcome:** %s · resolution %s\n\n", d.Outcome, d.ConflictResolution)
	b.WriteString("| member | outcome | confidence | used |\n|---|---|---|---|\n")
	for _, m := range d.Members {
		c := "—"
		if m.Confidence != nil {
			c = fmt.Sprintf("%.2f", *m.Confidence)
		}
		used := ""
		if m.Used {
			used = "✓"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", m.SubagentID, m.Outcome, c, used)
	}
	if d.Summary != "" {
		b.WriteString("\n## Summary\n\n")
		for _, l := range strings.Split(d.Summary, "\n") {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	if len(d.Findings) > 0 {
		b.WriteString("\n## Findings\n\n")
		for _, f := range d.Findings {
			fmt.Fprintf(&b, "- **%s** %s", orDash(f.Severity), f.Summary)
			if len(f.FileRefs) > 0 {
				fmt.Fprintf(&b, " (`%s`)", strings.Join(f.FileRefs, "`, `"))
			}
			fmt.Fprintf(&b, " — %s\n", strings.Join(f.Sources, ", "))
		}
	}
	if len(d.Patches) > 0 {
		b.WriteString("\n## Patches\n")
		for _, p := range d.Patches {
			fmt.Fprintf(&b, "\n```diff\n%s```\n", p.Diff)
		}
	}
	if len(d.Files) > 0 {
		b.WriteString("\n## Changed files\n\n")
		for _, f := range d.Files {
			fmt.Fprintf(&b, "- %s — %s\n", render.FileChangeLine(f), d.Sources[f.Path])
		}
	}
	if len(d.Operations) > 0 {
		b.WriteString("\n## Playbook\n\n")
		for _, op := range d.Operations {
			fmt.Fprintf(&b, "- %s %s", op.Type, op.BulletID)
			if op.Section != "" {
				fmt.Fprintf(&b, " [%s]", op.Section)
			}
			if op.Content != "" {
				fmt.Fprintf(&b, ": %s", op.Content)
			}
			b.WriteString("\n")
		}
	}
	if len(d.Conflicts) > 0 {
		b.WriteString("\n## Conflicts\n\n")
		for _, c := range d.Conflicts {
			fmt.Fprintf(&b, "- %s (%s) → %s by %s", c.ConflictID, c.Kind, c.Choice, c.Method)
			if c.Edited {
				b.WriteString(" (written by hand: edited by the reviewer)")
			}
			if c.Note != "" {
				fmt.Fprintf(&b, ": %s", c.Note)
			}
			b.WriteString("\n")
		}
	}
	if len(d.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}
