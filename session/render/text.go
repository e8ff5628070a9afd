package render

import (
	"fmt"
	"strings"

	"github.com/summit-dev/summit/session"
)

// ChangedFilesText says, in one line, which files changed since the last session; paths
// under workspace are shown relative to it. "" when none did.
func ChangedFilesText(changes []session.AgentFileChange, workspace string) string {
	if len(changes) == 0 {
		return ""
	}
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		p := c.Path
		if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(workspace, "/")+"/"); ok && workspace != "" {
			p = rel
		}
		what := c.Change
		if c.During != "" {
			what += ", while session " + c.During + " ran"
		}
		parts = append(parts, session.Sanitize(p)+" ("+what+")")
	}
	return fmt.Sprintf("%s changed since the last session, in effect from now: %s",
		session.Plural(len(changes), "agent or config file"), strings.Join(parts, ", "))
}

// WaitingText is one line about a waiting item, for /inbox and the workbench's dock.
func WaitingText(s *session.State, w session.Waiting) string {
	if w.ID == session.TrustItem {
		return fmt.Sprintf("workspace not trusted: %s of its own config and agent files ignored", session.Plural(len(s.Info.TrustItems), "item"))
	}
	if w.Review {
		cf := s.Conflict(w.ID)
		if cf == nil {
			return w.ID
		}
		return fmt.Sprintf("%s %s · %s needs review (%s)", cf.ID, cf.ConvergenceID, session.ConflictWhere(cf.Kind, cf.File, cf.Lines), session.Plural(len(cf.Sides), "side"))
	}
	p := s.Permission(w.ID)
	if p == nil {
		return w.ID
	}
	who := p.SubagentID
	if sa := s.Subagent(p.SubagentID); sa != nil {
		who += " " + session.Sanitize(sa.AgentType)
		if sa.PermissionMode != "" {
			who += " (" + sa.PermissionMode + ")"
		}
	}
	return fmt.Sprintf("%s %s asks to use %s", p.ID, who, session.Sanitize(p.Tool))
}

// TrustText says, in one line, what of an untrusted workspace is ignored, or that the user
// trusted it during the session; "" for a trusted workspace or one with nothing to trust.
func TrustText(s *session.State) string {
	if s.Info.WorkspaceTrust != "untrusted" {
		return ""
	}
	if t := s.Trusted; t != nil {
		if t.Applied {
			return "workspace trusted in this session: its config and agent files are in effect"
		}
		return "workspace trusted: in effect from the next session (" + session.Sanitize(t.Note) + ")"
	}
	if len(s.Info.UntrustedIgnored) == 0 {
		return ""
	}
	return "workspace not trusted, ignored: " + session.Sanitize(strings.Join(s.Info.UntrustedIgnored, ", ")) + " (trust it in the inbox, or summit trust)"
}
