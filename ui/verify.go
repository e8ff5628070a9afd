package ui

import (
	"strings"

	"github.com/summit-dev/summit/session"
)

// Verification in the workbench (issue 27). An agent's capsule verification is its claim
// ("claims: passed"); a VerifyRan is summit's measurement ("measured: ✓ `go test ./...` exit 0
// in 3.1s"). They are drawn with those words, never one for the other.

// verifyTag is a tree row's mark of summit's last measurement ("" when none).
func verifyTag(v *session.VerifyRan) string {
	switch {
	case v == nil:
		return ""
	case v.Passed():
		return "verify ✓"
	case v.Forced:
		return "verify ✗ forced"
	}
	return "verify ✗"
}

// checkLines are the claims and measurements behind a review: each side's capsule claim and
// summit's measurement of it, then the convergence's own measurement.
func (m *Model) checkLines(cf *session.Conflict, inner int) []string {
	var lines []string
	add := func(who, what string, v *session.VerifyRan) {
		if what != "" {
			lines = append(lines, wrap(who+" "+what, inner)...)
		}
		if v != nil {
			l := wrap(who+" "+v.Measured(), inner)
			paint := m.sty.ok.Render
			if !v.Passed() {
				paint = m.sty.bad.Render
			}
			lines = append(lines, m.styled(l, paint)...)
		}
	}
	for _, sd := range cf.Sides {
		sa := m.st.Subagent(sd.SubagentID)
		if sa == nil {
			continue
		}
		claim := ""
		if c := sa.Capsule; c != nil && c.Verification != nil {
			claim = session.Claimed(c.Verification) + " (the agent's own check)"
		}
		add(sa.ID, claim, sa.Verify)
	}
	if cv := m.st.Convergence(cf.ConvergenceID); cv != nil {
		add(cv.ID, "", cv.Verify)
	}
	if len(lines) == 0 {
		return nil
	}
	return append([]string{m.sty.bold.Render("checks:")}, lines...)
}

// diffPanel reports whether a panel shows diffs (/diff, /apply --dry-run): its + and - lines
// are coloured.
func diffPanel(name string) bool {
	return strings.HasPrefix(name, "/diff") || strings.HasPrefix(name, "/apply") && strings.Contains(name, "--dry-run")
}

// panelDiffLines colours the wrapped lines of one diff line the way every diff is coloured
// (diffPaint: file and hunk headers, added and removed lines, measurements).
func (m *Model) panelDiffLines(src string, wrapped []string) []string {
	return m.styled(wrapped, m.diffPaint(src))
}
