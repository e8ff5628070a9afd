package session

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Print writes the plain-text rendering of a folded state: a header, the tree, each subagent's
// transcript in spawn order, the parent log, convergences with their conflicts and resolutions,
// permission decisions and the playbook. It uses no terminal features and no clock, and
// iterates only ordered slices, so the same log always prints the same bytes: `replay --print`
// of a recording and the end of the `run --script` that made it are compared byte for byte.
//
// All model and tool text goes through Sanitize, each field on its own (so that its own
// newlines are indented), and then the whole text once more: ids, names, modes and reasons
// are whatever the recording says, and a recording is a file anyone can hand over. Sanitize
// is idempotent and leaves clean text as it is, so the second pass changes no byte of an
// ordinary session.
func Print(w io.Writer, s *State) error {
	var b strings.Builder
	p := printer{b: &b, s: s}
	p.header()
	p.tree()
	p.transcripts()
	p.log()
	p.convergences()
	p.permissions()
	p.applies()
	p.playbook()
	_, err := io.WriteString(w, Sanitize(b.String()))
	return err
}

// Render is Print to a string.
func Render(s *State) string {
	var b strings.Builder
	_ = Print(&b, s)
	return b.String()
}

type printer struct {
	b *strings.Builder
	s *State
}

func (p printer) f(format string, args ...any) { fmt.Fprintf(p.b, format, args...) }

func (p printer) section(title string) { p.f("\n== %s ==\n", title) }

// StatusGlyph is the tree's one-character status mark.
func StatusGlyph(sa *Subagent) string {
	switch sa.Status {
	case StatusQueued:
		return "○"
	case StatusActive:
		return "◐"
	case StatusDone:
		return "✓"
	case StatusFailed:
		return "✗"
	case StatusTimeout:
		return "⧗"
	case StatusCancelled:
		return "⊘"
	case StatusDisconnected:
		return "◌"
	}
	return "?"
}

func (p printer) header() {
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
	p.f("started %s · %s · %s\n", s.StartedAt.UTC().Format(TimeLayout), end, Plural(int(s.LastSeq), "event"))
	if s.Control != "" {
		p.f("control is with %s (transfer-control handoff)\n", s.Control)
	}
}

func (p printer) tree() {
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
		p.f(" · %s · %s · %s tok · %s", sa.Status, FormatDuration(sa.Elapsed(p.s.LastTS)), FormatTokens(sa), Plural(sa.ToolCalls, "tool call"))
		if sa.Retries > 0 {
			p.f(" · %d retries", sa.Retries)
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
		p.f("\n")
	}
	for _, cv := range p.s.Convergences {
		p.f("▾ %s %s (%s) · %s\n", cv.ID, cv.Strategy, strings.Join(cv.Members, ", "), ConvergenceStatus(p.s, cv))
		for _, cf := range cv.Conflicts {
			mark := "⚠"
			if cf.Resolution != nil {
				mark = "✓"
			}
			p.f("  %s %s %s\n", mark, cf.ID, conflictWhere(cf))
		}
	}
}

func conflictWhere(cf *Conflict) string { return ConflictWhere(cf.Kind, cf.File, cf.Lines) }

// ConflictWhere names a conflict for people: its kind, then file:lines when it has a file
// ("hunk main.go:40-58", "vote").
func ConflictWhere(kind, file string, lines LineRange) string {
	where := kind
	if file != "" {
		where += " " + Sanitize(file)
		if !lines.IsZero() {
			where += ":" + lines.String()
		}
	}
	return where
}

func (p printer) transcripts() {
	for _, sa := range p.s.Subagents {
		p.section(fmt.Sprintf("%s %s · %s", sa.ID, sa.AgentType, sa.Status))
		p.f("task: %s\n", Sanitize(sa.Task))
		p.f("mode: %s · tools: %s · timeout %ds · inherit context %t\n", orDash(sa.PermissionMode),
			orDash(strings.Join(sa.Tools, ",")), sa.TimeoutS, sa.InheritContext)
		if rt := sa.Route; rt != nil {
			p.f("model: %s (%s)\n", Sanitize(sa.ModelInUse()), Sanitize(RouteText(sa)))
		}
		t := sa.Transcript
		for i := 0; i < t.Len(); i++ {
			p.item(t, i)
		}
		if sa.LastError != "" {
			p.f("last error: %s\n", Sanitize(sa.LastError))
		}
		if sa.Stopped {
			p.f("stop: %s · %s · %s · tokens in %d out %d", sa.Outcome, FormatDuration(time.Duration(sa.DurationMS)*time.Millisecond),
				Plural(sa.ToolCalls, "tool call"), sa.Tokens.Input, sa.Tokens.Output)
			if sa.CostUSD != nil {
				p.f(" · cost %s", FormatCost(*sa.CostUSD))
			}
			if len(sa.ArtifactPaths) > 0 {
				p.f(" · artifacts %s", Sanitize(strings.Join(sa.ArtifactPaths, ", ")))
			}
			p.f("\n")
		}
		p.changes(sa)
		if c := sa.Capsule; c != nil {
			p.f("capsule: %s\n", indentRest(Sanitize(c.Summary)))
			if c.Confidence != nil {
				p.f("  confidence %.2f\n", *c.Confidence)
			}
			for _, fd := range c.Findings {
				p.f("  finding [%s] %s", orDash(Sanitize(fd.Severity)), Sanitize(fd.Summary))
				if len(fd.FileRefs) > 0 {
					p.f(" (%s)", Sanitize(strings.Join(fd.FileRefs, ", ")))
				}
				p.f("\n")
			}
			for _, ps := range c.PatchSuggestions {
				p.f("  patch %s (%s)\n", Sanitize(strings.Join(ps.Paths, ", ")), Plural(strings.Count(ps.Diff, "\n"), "line"))
			}
			for _, n := range c.PolicyNotes {
				p.f("  policy: %s\n", Sanitize(n))
			}
			for _, w := range c.ParseWarnings {
				p.f("  parse warning: %s\n", Sanitize(w))
			}
		}
	}
}

// ChangeStat is a change set in brief: "2 files +12 −3".
func ChangeStat(ch *SubagentChanges) string {
	return fmt.Sprintf("%s +%d −%d", Plural(len(ch.Files), "file"), ch.Added, ch.Removed)
}

// FileChangeLine is one file of a change set: kind, path (old → new for a rename), counts.
func FileChangeLine(f FileChange) string {
	name := Sanitize(f.Path)
	if f.OldPath != "" && f.OldPath != f.Path {
		name = Sanitize(f.OldPath) + " → " + name
	}
	s := fmt.Sprintf("%s %s", f.Kind, name)
	switch {
	case f.Binary:
		s += " (binary)"
	case f.Kind != ChangeMode:
		s += fmt.Sprintf(" +%d −%d", f.Added, f.Removed)
	}
	if f.OldMode != "" && f.NewMode != "" && f.OldMode != f.NewMode {
		s += fmt.Sprintf(" (mode %s → %s)", f.OldMode, f.NewMode)
	}
	if f.Truncated {
		s += " (diff cut; the result commit has it whole)"
	}
	return s
}

// changes prints an isolated subagent's worktree and what it really changed, with the diffs.
func (p printer) changes(sa *Subagent) {
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
		p.f("changes: could not be read: %s\n", Sanitize(ch.Error))
		return
	}
	p.f("changes: %s\n", ChangeStat(ch))
	for _, f := range ch.Files {
		p.f("  %s\n", FileChangeLine(f))
		if f.Diff != "" {
			p.f("    %s\n", indentRestBy(Sanitize(f.Diff), "    "))
		}
	}
	for _, o := range ch.Outside {
		p.f("  outside the workspace, not applied: %s\n", Sanitize(o))
	}
}

// applies lists what /apply landed in the main workspace and what /undo took back.
func (p printer) applies() {
	if len(p.s.Applies) == 0 {
		return
	}
	p.section("applied to the workspace")
	for _, a := range p.s.Applies {
		p.f("%s %s: %s", a.ApplyID, a.Source, Sanitize(strings.Join(a.Files, ", ")))
		if a.Undone {
			p.f(" · undone")
		}
		p.f("\n")
	}
}

func shortCommit(c string) string { return c[:min(len(c), 12)] }

// item prints one transcript item; its text is sanitized and continuation lines are indented
// so an item never looks like the start of another.
func (p printer) item(t *Transcript, i int) {
	it := t.Item(i)
	text := indentRest(Sanitize(t.Text(i)))
	switch it.Kind {
	case TranscriptStart:
		p.f("· start: %s\n", text)
	case TranscriptToken, TranscriptMessage:
		p.f("assistant: %s\n", text)
	case TranscriptThinking:
		p.f("thinking: %s\n", text)
	case TranscriptToolCall:
		p.f("> %s %s\n", Sanitize(it.Tool), Sanitize(compactJSON(it.Args)))
	case TranscriptToolResult:
		mark := "<"
		if it.IsError {
			mark = "< error"
		}
		p.f("%s %s: %s\n", mark, Sanitize(it.Tool), text)
	case TranscriptPolicyDenied:
		p.f("! denied %s: %s\n", Sanitize(it.Tool), text)
	case TranscriptError:
		p.f("! error: %s\n", text)
	case ItemUser:
		p.f("user: %s\n", text)
	default:
		p.f("%s: %s\n", it.Kind, text)
	}
}

func (p printer) log() {
	p.section("session log")
	if len(p.s.Log) == 0 {
		p.f("(empty)\n")
	}
	for _, l := range p.s.Log {
		switch l.Kind {
		case "command":
			p.f("#%d › %s\n", l.Seq, Sanitize(l.Text))
		case "rejected":
			p.f("#%d ✗ %s\n   %s\n", l.Seq, Sanitize(l.Text), indentRest(Sanitize(l.Detail)))
		case "mirror":
			t := p.s.Subagent(l.SubagentID).Transcript
			it := t.Item(l.Ref)
			text := Sanitize(t.Text(l.Ref))
			if it.Kind == TranscriptToolCall {
				text = Sanitize(it.Tool) + " " + Sanitize(compactJSON(it.Args))
			}
			p.f("#%d [%s] %s: %s\n", l.Seq, l.SubagentID, it.Kind, indentRest(text))
		default:
			line := fmt.Sprintf("#%d %s: %s", l.Seq, l.Kind, Sanitize(l.Text))
			if l.Detail != "" {
				line += " (" + Sanitize(l.Detail) + ")"
			}
			p.f("%s\n", indentRest(line))
		}
	}
}

func (p printer) convergences() {
	if len(p.s.Convergences) == 0 {
		return
	}
	p.section("convergences")
	for _, cv := range p.s.Convergences {
		p.f("%s · %s · %s · resolution %s · output %s\n", cv.ID, cv.Strategy, cv.Status, cv.ConflictResolution, cv.OutputFormat)
		p.f("  members: %s\n", strings.Join(cv.Members, ", "))
		if cv.Status == ConvergenceDone {
			p.f("  outcome %s · %s · %s · output %s\n", cv.Outcome, Plural(cv.ConflictCount, "conflict"), Plural(cv.ResolutionCount, "resolution"), Plural(cv.OutputSize, "byte"))
		}
		for _, cf := range cv.Conflicts {
			p.f("  conflict %s %s\n", cf.ID, conflictWhere(cf))
			for _, sd := range cf.Sides {
				conf := ""
				if sd.Confidence != nil {
					conf = fmt.Sprintf(" (confidence %.2f)", *sd.Confidence)
				}
				p.f("    %s%s: %s\n", sd.SubagentID, conf, indentRestBy(Sanitize(valueText(sd.Value)), "      "))
			}
			if cf.Context != "" {
				p.f("    current file:\n      %s\n", indentRestBy(strings.TrimRight(Sanitize(cf.Context), "\n"), "      "))
			}
			if cf.ReviewReason != "" {
				p.f("    review: %s\n", Sanitize(cf.ReviewReason))
			}
			if r := cf.Resolution; r != nil {
				p.f("    resolved by %s: %s", r.Method, r.Choice)
				if r.Note != "" {
					p.f(" — %s", Sanitize(r.Note))
				}
				if len(r.Overridden) > 0 {
					p.f(" (overrides %s)", strings.Join(r.Overridden, ", "))
				}
				p.f("\n")
				if r.Choice == "edit" {
					p.f("      written by the reviewer:\n      %s\n", indentRestBy(Sanitize(r.Content), "      "))
				}
			} else {
				p.f("    unresolved\n")
			}
		}
		if cv.Result != "" {
			p.f("  result (%s):\n    %s\n", cv.ResultFormat, indentRestBy(Sanitize(cv.Result), "    "))
		}
		if bt := cv.Batch; bt != nil {
			p.f("  delta batch: %s, %s", Plural(len(bt.Operations), "playbook op"), Plural(len(bt.Patches), "patch"))
			if cv.Applied {
				p.f(" · applied to %s", orDash(Sanitize(strings.Join(cv.AppliedFiles, ", "))))
			}
			p.f("\n")
			if bt.Reasoning != "" {
				p.f("    reasoning: %s\n", indentRestBy(Sanitize(bt.Reasoning), "      "))
			}
			for _, op := range bt.Operations {
				p.f("    %s %s", op.Type, Sanitize(op.BulletID))
				if op.Section != "" {
					p.f(" [%s]", Sanitize(op.Section))
				}
				if op.Content != "" {
					p.f(": %s", Sanitize(op.Content))
				}
				p.f("\n")
			}
			for _, pt := range bt.Patches {
				p.f("    %s\n", indentRestBy(strings.TrimRight(Sanitize(pt.Diff), "\n"), "    "))
			}
		}
		for _, n := range cv.Notes {
			p.f("  note: %s\n", Sanitize(n))
		}
	}
}

func (p printer) permissions() {
	if len(p.s.Permissions) == 0 {
		return
	}
	p.section("permissions")
	for _, pr := range p.s.Permissions {
		p.f("%s %s %s %s → %s", pr.ID, pr.SubagentID, Sanitize(pr.Tool), Sanitize(compactJSON(pr.Args)), pr.Decision)
		switch pr.Decision {
		case DecisionGranted:
			p.f(" (%s)", pr.Scope)
		case DecisionDenied:
			if pr.DenyReason != "" {
				p.f(" (%s)", Sanitize(pr.DenyReason))
			}
		}
		if pr.By != "" {
			p.f(" by %s", Sanitize(pr.By))
		}
		p.f("\n")
	}
}

func (p printer) playbook() {
	if len(p.s.Playbook) == 0 {
		return
	}
	p.section("playbook")
	for _, e := range p.s.Playbook {
		p.f("- %s", e.ID)
		if e.Section != "" {
			p.f(" [%s]", Sanitize(e.Section))
		}
		p.f(": %s (from %s)\n", indentRest(Sanitize(e.Content)), e.Source)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func indentRest(s string) string { return indentRestBy(s, "  ") }

func indentRestBy(s, pad string) string {
	s = strings.TrimRight(s, "\n")
	return strings.ReplaceAll(s, "\n", "\n"+pad)
}

// compactJSON renders args with sorted keys (encoding/json sorts map keys), so it is stable.
func compactJSON(v map[string]any) string {
	if len(v) == 0 {
		return "{}"
	}
	return JSONText(v, "")
}

func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return JSONText(v, "")
}

// JSONText is v as JSON the way it was written: no \u003e for >, no \u0026 for & (the text is
// shown, never put into HTML). Map keys are sorted. indent "" is compact.
func JSONText(v any, indent string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// FormatDuration writes d as mm:ss (or h:mm:ss).
func FormatDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d", m, sec)
}

// fmtTokens shows provider-reported tokens when known, else an estimate of streamed output
// (4 bytes a token), marked with ~.
// FormatTokens writes a subagent's token count compactly ("1.2k"; "~" while only streamed bytes are known).
func FormatTokens(sa *Subagent) string {
	n := sa.Tokens.Input + sa.Tokens.Output
	prefix := ""
	if n == 0 && sa.StreamedBytes > 0 {
		n, prefix = int64(sa.StreamedBytes/4), "~"
	}
	if n >= 1000 {
		return fmt.Sprintf("%s%.1fk", prefix, float64(n)/1000)
	}
	return fmt.Sprintf("%s%d", prefix, n)
}

// FormatCost writes a cost in US dollars: cents to four places below a dollar ("$0.0123").
func FormatCost(usd float64) string {
	if usd >= 1 {
		return fmt.Sprintf("$%.2f", usd)
	}
	return fmt.Sprintf("$%.4f", usd)
}

// RouteText says where a subagent's model requests went and why: the agent's choice and the
// route's reason, then each switch to a fallback.
func RouteText(sa *Subagent) string {
	rt := sa.Route
	if rt == nil {
		return ""
	}
	t := rt.Why
	if rt.Requested != "" {
		t = "agent asks for " + rt.Requested + "; " + t
	}
	for _, d := range rt.Dropped {
		t += "; not sent: " + d
	}
	for _, sw := range sa.Switches {
		t += "; switched from " + Link(sw.FromProvider, sw.FromModel) + ": " + sw.Reason
	}
	return t
}

// Link is provider/model, or the provider alone when the model is its configured one.
func Link(provider, model string) string {
	if model == "" {
		return provider
	}
	return provider + "/" + model
}

// ConvergenceStatus describes a convergence's state for people: "pending (waiting for sa-2)"
// while members run, "review (cf-1 open)" while conflicts wait, else its status and outcome.
func ConvergenceStatus(s *State, cv *Convergence) string {
	switch cv.Status {
	case ConvergenceRunning:
		var waiting []string
		for _, id := range cv.Members {
			if sa := s.Subagent(id); sa != nil && !sa.Terminal() {
				waiting = append(waiting, id)
			}
		}
		if len(waiting) > 0 {
			return "pending (waiting for " + strings.Join(waiting, ", ") + ")"
		}
		return "pending"
	case ConvergenceReview:
		var open []string
		for _, cf := range cv.Conflicts {
			if cf.Resolution == nil {
				open = append(open, cf.ID)
			}
		}
		return "review (" + strings.Join(open, ", ") + " open)"
	case ConvergenceDone:
		return "complete · " + cv.Outcome
	}
	return cv.Status
}
