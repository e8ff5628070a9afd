package render

// The printer as it was before it streamed (git d0298b9), kept as the reference the streaming
// printer must match byte for byte (TestPrintMatchesOld).

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/summit-dev/summit/session"
)

func oldPrint(w io.Writer, s *session.State) error {
	var b strings.Builder
	p := oldPrinter{b: &b, s: s}
	p.header()
	p.tree()
	p.transcripts()
	p.log()
	p.convergences()
	p.permissions()
	p.applies()
	p.playbook()
	_, err := io.WriteString(w, session.Sanitize(b.String()))
	return err
}

// Render is Print to a string.
func oldRender(s *session.State) string {
	var b strings.Builder
	_ = oldPrint(&b, s)
	return b.String()
}

type oldPrinter struct {
	b *strings.Builder
	s *session.State
}

func (p oldPrinter) f(format string, args ...any) { fmt.Fprintf(p.b, format, args...) }

func (p oldPrinter) section(title string) { p.f("\n== %s ==\n", title) }

func (p oldPrinter) header() {
	s := p.s
	if !s.Started {
		p.f("(empty session)\n")
		return
	}
	p.f("session %s · %s · provider %s\n", s.SessionID, s.Info.PermissionMode, orDash(s.Info.Provider))
	p.f("workspace %s\n", orDash(s.Info.Workspace))
	end := "still open (no SessionEnded)"
	if s.Ended {
		end = fmt.Sprintf("ended (%s) after %s", s.EndReason, FormatDuration(s.EndedAt.Sub(s.StartedAt)))
	}
	p.f("started %s · %s · %s\n", s.StartedAt.UTC().Format(session.TimeLayout), end, session.Plural(int(s.LastSeq), "event"))
	if s.Control != "" {
		p.f("control is with %s (transfer-control handoff)\n", s.Control)
	}
}

func (p oldPrinter) tree() {
	p.section("tree")
	if len(p.s.Subagents) == 0 && len(p.s.Convergences) == 0 {
		p.f("(no subagents)\n")
	}
	for _, n := range p.s.Tree() {
		sa := n.Subagent
		p.f("%s%s %s %s", strings.Repeat("  ", n.Depth), StatusGlyph(sa), sa.ID, sa.AgentType)
		if sa.AgentName != "" && sa.AgentName != sa.AgentType {
			p.f(" (%s)", sa.AgentName)
		}
		p.f(" · %s · %s · %s tok · %s", sa.Status, FormatDuration(sa.Elapsed(p.s.LastTS)), FormatTokens(sa), session.Plural(sa.ToolCalls, "tool call"))
		if sa.Retries > 0 {
			p.f(" · %s", session.Plural(sa.Retries, "retry"))
		}
		if sa.CurrentTool != "" {
			p.f(" · running %s", sa.CurrentTool)
		}
		if sa.PendingRequest != "" {
			p.f(" · waiting on %s", sa.PendingRequest)
		}
		if ch := sa.Changes; ch != nil && ch.Error == "" {
			p.f(" · %s", ChangeStat(ch))
		}
		if v := sa.Verify; v != nil {
			p.f(" · %s", VerifyMark(v))
		}
		p.f("\n")
	}
	for _, cv := range p.s.Convergences {
		mark := ""
		if v := cv.Verify; v != nil {
			mark = " · " + VerifyMark(v)
		}
		p.f("▾ %s %s (%s) · %s%s\n", cv.ID, cv.Strategy, strings.Join(cv.Members, ", "), ConvergenceStatus(p.s, cv), mark)
		for _, cf := range cv.Conflicts {
			mark := "⚠"
			if cf.Resolution != nil {
				mark = "✓"
			}
			p.f("  %s %s %s\n", mark, cf.ID, conflictWhere(cf))
		}
	}
}

func (p oldPrinter) transcripts() {
	for _, sa := range p.s.Subagents {
		p.section(fmt.Sprintf("%s %s · %s", sa.ID, sa.AgentType, sa.Status))
		p.f("task: %s\n", session.Sanitize(sa.Task))
		p.f("mode: %s · tools: %s · timeout %ds · inherit context %t\n", orDash(sa.PermissionMode),
			orDash(strings.Join(sa.Tools, ",")), sa.TimeoutS, sa.InheritContext)
		if rt := sa.Route; rt != nil {
			p.f("model: %s (%s)\n", session.Sanitize(sa.ModelInUse()), session.Sanitize(RouteText(sa)))
		}
		t := sa.Transcript
		for i := 0; i < t.Len(); i++ {
			p.item(t, i)
		}
		if sa.LastError != "" {
			p.f("last error: %s\n", session.Sanitize(sa.LastError))
		}
		if sa.Stopped {
			p.f("stop: %s · %s · %s · tokens in %d out %d", sa.Outcome, FormatDuration(time.Duration(sa.DurationMS)*time.Millisecond),
				session.Plural(sa.ToolCalls, "tool call"), sa.Tokens.Input, sa.Tokens.Output)
			if sa.CostUSD != nil {
				p.f(" · cost %s", FormatCost(*sa.CostUSD))
			}
			if len(sa.ArtifactPaths) > 0 {
				p.f(" · artifacts %s", session.Sanitize(strings.Join(sa.ArtifactPaths, ", ")))
			}
			p.f("\n")
		}
		p.changes(sa)
		p.verify(sa.Verify)
		if c := sa.Capsule; c != nil {
			p.f("capsule: %s\n", indentRest(session.Sanitize(c.Summary)))
			if c.Confidence != nil {
				p.f("  confidence %.2f\n", *c.Confidence)
			}
			if c.Verification != nil {
				p.f("  verification %s (the agent's own, not measured)\n", session.Claimed(c.Verification))
			}
			for _, fd := range c.Findings {
				p.f("  finding [%s] %s", orDash(session.Sanitize(fd.Severity)), session.Sanitize(fd.Summary))
				if len(fd.FileRefs) > 0 {
					p.f(" (%s)", session.Sanitize(strings.Join(fd.FileRefs, ", ")))
				}
				p.f("\n")
			}
			for _, ps := range c.PatchSuggestions {
				p.f("  patch %s (%s)\n", session.Sanitize(strings.Join(ps.Paths, ", ")), session.Plural(strings.Count(ps.Diff, "\n"), "line"))
			}
			for _, n := range c.PolicyNotes {
				p.f("  policy: %s\n", session.Sanitize(n))
			}
			for _, w := range c.ParseWarnings {
				p.f("  parse warning: %s\n", session.Sanitize(w))
			}
		}
	}
}

func (p oldPrinter) changes(sa *session.Subagent) {
	if iso := sa.Isolation; iso != nil {
		p.f("worktree: isolated at %s (%s)", iso.Base, shortCommit(iso.BaseCommit))
		if sa.Discarded {
			p.f(" · discarded")
		}
		p.f("\n")
	}
	ch := sa.Changes
	if ch == nil {
		return
	}
	if ch.Error != "" {
		p.f("changes: could not be read: %s\n", session.Sanitize(ch.Error))
		return
	}
	p.f("changes: %s\n", ChangeStat(ch))
	for _, f := range ch.Files {
		p.f("  %s\n", FileChangeLine(f))
		if f.Diff != "" {
			p.f("    %s\n", indentRestBy(session.Sanitize(f.Diff), "    "))
		}
	}
	for _, o := range ch.Outside {
		p.f("  outside the workspace, not applied: %s\n", session.Sanitize(o))
	}
}

func (p oldPrinter) applies() {
	if len(p.s.Applies) == 0 {
		return
	}
	p.section("applied to the workspace")
	for _, a := range p.s.Applies {
		p.f("%s %s: %s", a.ApplyID, a.Source, session.Sanitize(strings.Join(a.Files, ", ")))
		if a.Undone {
			p.f(" · undone")
		}
		p.f("\n")
	}
}

func (p oldPrinter) item(t *session.Transcript, i int) {
	it := t.Item(i)
	text := indentRest(session.Sanitize(t.Text(i)))
	switch it.Kind {
	case session.TranscriptStart:
		p.f("· start: %s\n", text)
	case session.TranscriptToken, session.TranscriptMessage:
		p.f("assistant: %s\n", text)
	case session.TranscriptThinking:
		p.f("thinking: %s\n", text)
	case session.TranscriptToolCall:
		p.f("> %s %s\n", session.Sanitize(it.Tool), session.Sanitize(compactJSON(it.Args)))
	case session.TranscriptToolResult:
		mark := "<"
		if it.IsError {
			mark = "< error"
		}
		p.f("%s %s: %s\n", mark, session.Sanitize(it.Tool), text)
	case session.TranscriptPolicyDenied:
		p.f("! denied %s: %s\n", session.Sanitize(it.Tool), text)
	case session.TranscriptError:
		p.f("! error: %s\n", text)
	case session.ItemUser:
		p.f("user: %s\n", text)
	default:
		p.f("%s: %s\n", it.Kind, text)
	}
}

func (p oldPrinter) log() {
	p.section("session log")
	if len(p.s.Log) == 0 {
		p.f("(empty)\n")
	}
	for _, l := range p.s.Log {
		switch l.Kind {
		case "command":
			p.f("#%d › %s\n", l.Seq, session.Sanitize(l.Text))
		case "rejected":
			p.f("#%d ✗ %s\n   %s\n", l.Seq, session.Sanitize(l.Text), indentRest(session.Sanitize(l.Detail)))
		case "mirror":
			t := p.s.Subagent(l.SubagentID).Transcript
			it := t.Item(l.Ref)
			text := session.Sanitize(t.Text(l.Ref))
			if it.Kind == session.TranscriptToolCall {
				text = session.Sanitize(it.Tool) + " " + session.Sanitize(compactJSON(it.Args))
			}
			p.f("#%d [%s] %s: %s\n", l.Seq, l.SubagentID, it.Kind, indentRest(text))
		default:
			line := fmt.Sprintf("#%d %s: %s", l.Seq, l.Kind, session.Sanitize(l.Text))
			if l.Detail != "" {
				line += " (" + session.Sanitize(l.Detail) + ")"
			}
			p.f("%s\n", indentRest(line))
		}
	}
}

func (p oldPrinter) convergences() {
	if len(p.s.Convergences) == 0 {
		return
	}
	p.section("convergences")
	for _, cv := range p.s.Convergences {
		p.f("%s · %s · %s · resolution %s · output %s\n", cv.ID, cv.Strategy, cv.Status, cv.ConflictResolution, cv.OutputFormat)
		p.f("  members: %s\n", strings.Join(cv.Members, ", "))
		if cv.Status == session.ConvergenceDone {
			p.f("  outcome %s · %s · %s · output %s\n", cv.Outcome, session.Plural(cv.ConflictCount, "conflict"), session.Plural(cv.ResolutionCount, "resolution"), session.Plural(cv.OutputSize, "byte"))
		}
		for _, cf := range cv.Conflicts {
			p.f("  conflict %s %s\n", cf.ID, conflictWhere(cf))
			for _, sd := range cf.Sides {
				conf := ""
				if sd.Confidence != nil {
					conf = fmt.Sprintf(" (confidence %.2f)", *sd.Confidence)
				}
				p.f("    %s%s: %s\n", sd.SubagentID, conf, indentRestBy(session.Sanitize(valueText(sd.Value)), "      "))
			}
			if cf.Context != "" {
				p.f("    current file:\n      %s\n", indentRestBy(strings.TrimRight(session.Sanitize(cf.Context), "\n"), "      "))
			}
			if cf.ReviewReason != "" {
				p.f("    review: %s\n", session.Sanitize(cf.ReviewReason))
			}
			if r := cf.Resolution; r != nil {
				p.f("    resolved by %s: %s", r.Method, r.Choice)
				if r.Note != "" {
					p.f(" — %s", session.Sanitize(r.Note))
				}
				if len(r.Overridden) > 0 {
					p.f(" (overrides %s)", strings.Join(r.Overridden, ", "))
				}
				p.f("\n")
				if r.Choice == "edit" {
					p.f("      written by the reviewer:\n      %s\n", indentRestBy(session.Sanitize(r.Content), "      "))
				}
			} else {
				p.f("    unresolved\n")
			}
		}
		if cv.Result != "" {
			p.f("  result (%s):\n    %s\n", cv.ResultFormat, indentRestBy(session.Sanitize(cv.Result), "    "))
		}
		if bt := cv.Batch; bt != nil {
			p.f("  delta batch: %s, %s", session.Plural(len(bt.Operations), "playbook op"), session.Plural(len(bt.Patches), "patch"))
			if cv.Applied {
				p.f(" · applied to %s", orDash(session.Sanitize(strings.Join(cv.AppliedFiles, ", "))))
			}
			p.f("\n")
			if bt.Reasoning != "" {
				p.f("    reasoning: %s\n", indentRestBy(session.Sanitize(bt.Reasoning), "      "))
			}
			for _, op := range bt.Operations {
				p.f("    %s %s", op.Type, session.Sanitize(op.BulletID))
				if op.Section != "" {
					p.f(" [%s]", session.Sanitize(op.Section))
				}
				if op.Content != "" {
					p.f(": %s", session.Sanitize(op.Content))
				}
				p.f("\n")
			}
			for _, pt := range bt.Patches {
				p.f("    %s\n", indentRestBy(strings.TrimRight(session.Sanitize(pt.Diff), "\n"), "    "))
			}
		}
		for _, n := range cv.Notes {
			p.f("  note: %s\n", session.Sanitize(n))
		}
		if cv.Verify != nil {
			p.f("  ")
			p.verify(cv.Verify)
		}
	}
}

func (p oldPrinter) verify(v *session.VerifyRan) {
	if v == nil {
		return
	}
	p.f("verify: %s\n", v.Measured())
	if !v.Passed() && v.Output != "" {
		p.f("  | %s\n", indentRestBy(session.Sanitize(v.Output), "  | "))
	}
}

func (p oldPrinter) permissions() {
	if len(p.s.Permissions) == 0 {
		return
	}
	p.section("permissions")
	for _, pr := range p.s.Permissions {
		p.f("%s %s %s %s → %s", pr.ID, pr.SubagentID, session.Sanitize(pr.Tool), session.Sanitize(compactJSON(pr.Args)), pr.Decision)
		switch pr.Decision {
		case session.DecisionGranted:
			p.f(" (%s)", pr.Scope)
		case session.DecisionDenied:
			if pr.DenyReason != "" {
				p.f(" (%s)", session.Sanitize(pr.DenyReason))
			}
		}
		if pr.By != "" {
			p.f(" by %s", session.Sanitize(pr.By))
		}
		p.f("\n")
	}
}

func (p oldPrinter) playbook() {
	if len(p.s.Playbook) == 0 {
		return
	}
	p.section("playbook")
	for _, e := range p.s.Playbook {
		p.f("- %s", e.ID)
		if e.Section != "" {
			p.f(" [%s]", session.Sanitize(e.Section))
		}
		p.f(": %s (from %s)\n", indentRest(session.Sanitize(e.Content)), e.Source)
	}
}

// valueText is how the old printer showed a side: a string as it is, anything else as JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return JSONText(v, "")
}
