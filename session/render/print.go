package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/summit-dev/summit/session"
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
//
// The text is written as it is produced, through a 64 KiB buffer, so printing costs no memory
// in proportion to the session (see output for how the second pass runs on pieces and gives
// the bytes one pass over the whole would give). After a write error nothing more is written;
// the error is returned.
func Print(w io.Writer, s *session.State) error {
	return printState(w, s, nil)
}

func printState(w io.Writer, s *session.State, sp *TextSpool) error {
	out := &output{w: w, limit: outputBuffer}
	p := &printer{w: out, s: s, sp: sp}
	p.header()
	p.tree()
	p.transcripts()
	p.log()
	p.convergences()
	p.permissions()
	p.applies()
	p.playbook()
	out.flush()
	if out.err == nil && sp != nil {
		out.err = sp.err
	}
	return out.err
}

// Render is Print to a string.
func Render(s *session.State) string {
	var b strings.Builder
	_ = Print(&b, s)
	return b.String()
}

type printer struct {
	w  *output
	s  *session.State
	sp *TextSpool // the transcripts' items and the log, when the fold left them out of s (or nil)
}

func (p *printer) f(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

func (p *printer) section(title string) { p.f("\n== %s ==\n", title) }

// outputBuffer is how much output is held before it is written (a variable for the tests).
var outputBuffer = 64 << 10

// output buffers what the printer writes. What it writes raw (ids, names, the layout) gets
// the second Sanitize pass on its way out, in pieces cut where the concatenation of the
// pieces' sanitized forms is the sanitized whole: after a newline, else before a byte that can
// start a UTF-8 sequence (Sanitize reads the text rune by rune, and a rune never takes such a
// byte as its continuation). Text already sanitized (writeClean: the transcripts, the bulk of
// the output) skips it, which changes nothing: Sanitize is idempotent, and sanitized text is
// valid UTF-8, so it starts and ends on such a cut.
type output struct {
	w     io.Writer
	limit int
	raw   []byte // written, not yet sanitized
	out   []byte // sanitized, not yet written
	err   error
}

func (o *output) Write(b []byte) (int, error) {
	if o.err != nil {
		return len(b), nil
	}
	o.raw = append(o.raw, b...)
	if len(o.raw) >= o.limit {
		o.sanitize(false)
	}
	return len(b), nil
}

func (o *output) WriteString(s string) (int, error) {
	if o.err != nil {
		return len(s), nil
	}
	o.raw = append(o.raw, s...)
	if len(o.raw) >= o.limit {
		o.sanitize(false)
	}
	return len(s), nil
}

// writeClean writes text that Sanitize leaves as it is (its own output).
func (o *output) writeClean(s string) {
	if o.err != nil {
		return
	}
	o.sanitize(true)
	o.out = append(o.out, s...)
	if len(o.out) >= o.limit {
		o.writeOut()
	}
}

// sanitize moves the raw bytes (all of them, else up to a safe cut) to out, sanitized.
func (o *output) sanitize(all bool) {
	n := len(o.raw)
	if !all {
		n = safeCut(o.raw)
	}
	if n == 0 {
		return
	}
	if piece := o.raw[:n]; plainText(piece) {
		o.out = append(o.out, piece...)
	} else {
		o.out = append(o.out, session.Sanitize(string(piece))...)
	}
	o.raw = o.raw[:copy(o.raw, o.raw[n:])]
	if len(o.out) >= o.limit {
		o.writeOut()
	}
}

func (o *output) writeOut() {
	if o.err == nil && len(o.out) > 0 {
		_, o.err = o.w.Write(o.out)
	}
	o.out = o.out[:0]
}

func (o *output) flush() {
	o.sanitize(true)
	o.writeOut()
}

// plainText reports whether b is printable ASCII, newlines and tabs: text Sanitize leaves as
// it is.
func plainText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return false
		}
	}
	return true
}

// safeCut is where b can be cut so that sanitizing the two parts apart gives what sanitizing b
// gives: after its last newline, else before its last byte that is not a UTF-8 continuation
// byte (0 when there is none).
func safeCut(b []byte) int {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return i + 1
	}
	for i := len(b) - 1; i > 0; i-- {
		if b[i] < 0x80 || b[i] >= 0xc0 {
			return i
		}
	}
	return 0
}

// indenter writes sanitized text with its continuation lines indented by pad and its trailing
// newlines left out, as indentRestBy does, whatever pieces the text comes in.
type indenter struct {
	w   *output
	pad string
	nl  int // newlines held back: written (with pad) only if more text follows
}

func (in *indenter) write(s string) {
	for len(s) > 0 {
		j := strings.IndexByte(s, '\n')
		if j != 0 {
			for ; in.nl > 0; in.nl-- {
				in.w.WriteString("\n")
				in.w.WriteString(in.pad)
			}
			if j < 0 {
				in.w.writeClean(s)
				return
			}
			in.w.writeClean(s[:j])
		}
		in.nl++
		s = s[j+1:]
	}
}

// itemText writes the item's text, sanitized and with its continuation lines indented by pad:
// indentRestBy(Sanitize(text), pad).
func (p *printer) itemText(v *itemView, pad string) {
	in := indenter{w: p.w, pad: pad}
	v.each(func(s string) { in.write(session.Sanitize(s)) })
}

// toolCall writes a tool call's tool and arguments (its text: the compact JSON), sanitized:
// as they are (pad ""), or through indentRestBy with pad.
func (p *printer) toolCall(v *itemView, pad string) {
	write := p.w.writeClean
	if pad != "" {
		in := indenter{w: p.w, pad: pad}
		write = in.write
	}
	write(session.Sanitize(v.tool) + " ")
	v.each(func(s string) { write(session.Sanitize(s)) })
}

// itemView is what the printer needs of a transcript item: kind, tool, error flag and text.
// The text is str (an item of the state: stateItem), or (when r is set) the n bytes r reads
// next (an item of a TextSpool's stream).
type itemView struct {
	kind, tool string
	isError    bool
	str        string
	r          *reader
	n          int64
}

// each calls fn with the item's text, in pieces that each end with a whole rune.
func (v *itemView) each(fn func(string)) {
	if v.r == nil {
		fn(v.str)
		return
	}
	v.r.text(v.n, fn)
}

// stateItem is item i of a transcript the state keeps.
func stateItem(sa *session.Subagent, i int) *itemView {
	it := sa.Transcript.Item(i)
	v := &itemView{kind: it.Kind, tool: it.Tool, isError: it.IsError}
	if it.Kind == session.TranscriptToolCall {
		v.str = compactJSON(it.Args)
	} else {
		v.str = sa.Transcript.Text(i)
	}
	return v
}

// StatusGlyph is the tree's one-character status mark.
func StatusGlyph(sa *session.Subagent) string {
	switch sa.Status {
	case session.StatusQueued:
		return "○"
	case session.StatusActive:
		return "◐"
	case session.StatusDone:
		return "✓"
	case session.StatusFailed:
		return "✗"
	case session.StatusTimeout:
		return "⧗"
	case session.StatusCancelled:
		return "⊘"
	case session.StatusDisconnected:
		return "◌"
	case session.StatusInterrupted:
		return "↯"
	}
	return "?"
}

func (p *printer) header() {
	s := p.s
	if !s.Started {
		p.f("(empty session)\n")
		return
	}
	p.f("session %s · %s · provider %s\n", s.SessionID, s.Info.PermissionMode, orDash(s.Info.Provider))
	p.f("workspace %s\n", orDash(s.Info.Workspace))
	if s.Fork != nil {
		p.f("forked from %s\n", ForkLineage(s.Fork))
	}
	end := "still open (no SessionEnded)"
	if s.Ended {
		end = fmt.Sprintf("ended (%s) after %s", s.EndReason, FormatDuration(s.EndedAt.Sub(s.StartedAt)))
	}
	p.f("started %s · %s · %s\n", s.StartedAt.UTC().Format(session.TimeLayout), end, session.Plural(int(s.LastSeq), "event"))
	if s.Control != "" {
		p.f("control is with %s (transfer-control handoff)\n", s.Control)
	}
}

func (p *printer) tree() {
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

// review prints what each choice of a conflict lands (ConflictDetected.review): each member's
// whole change to the file, hunk by hunk, and the other sides' hunks a region choice still
// lands.
func (p *printer) review(cf *session.Conflict) {
	rv := cf.Review
	if rv == nil {
		return
	}
	file := session.Sanitize(rv.File)
	for _, ch := range rv.Changes {
		p.f("    %s's whole change to %s:\n", ch.SubagentID, file)
		for _, h := range ch.Hunks {
			mark := "lands with any region choice"
			if h.Conflict != "" {
				mark = "in " + h.Conflict
			}
			p.f("      [%s]\n      %s\n", mark, indentRestBy(strings.TrimRight(session.Sanitize(h.Text), "\n"), "      "))
		}
	}
	for _, o := range rv.Outcomes {
		if o.WholeFile {
			p.f("    --choose %s --whole-file drops %s\n", o.Choice, session.Plural(len(o.Drops), "hunk"))
			continue
		}
		for _, h := range o.AlsoLands {
			head, _, _ := strings.Cut(h.Text, "\n")
			p.f("    --choose %s also lands %s's %s\n", o.Choice, session.Sanitize(h.SubagentID), session.Sanitize(head))
		}
	}
	// The playbook operations each choice lands and drops (a member's land only with its
	// whole change).
	for _, o := range rv.Outcomes {
		flag := ""
		if o.WholeFile {
			flag = " --whole-file"
		}
		for _, op := range o.PlaybookDrops {
			p.f("    --choose %s%s drops %s's playbook %s\n", o.Choice, flag, session.Sanitize(op.SubagentID), session.Sanitize(op.Text))
		}
	}
}

// resolvedConsequences prints what else a resolution landed in the file and the playbook
// operations it kept and dropped.
func (p *printer) resolvedConsequences(r *session.ConflictResolved) {
	for _, h := range r.AlsoLands {
		head, _, _ := strings.Cut(h.Text, "\n")
		p.f("      with it also lands %s's %s\n", session.Sanitize(h.SubagentID), session.Sanitize(head))
	}
	for _, op := range r.PlaybookKept {
		p.f("      playbook kept: %s's %s\n", session.Sanitize(op.SubagentID), session.Sanitize(op.Text))
	}
	for _, op := range r.PlaybookDropped {
		p.f("      playbook dropped: %s's %s\n", session.Sanitize(op.SubagentID), session.Sanitize(op.Text))
	}
}

func conflictWhere(cf *session.Conflict) string {
	return session.ConflictWhere(cf.Kind, cf.File, cf.Lines)
}

func (p *printer) transcripts() {
	for _, sa := range p.s.Subagents {
		p.section(fmt.Sprintf("%s %s · %s", sa.ID, sa.AgentType, sa.Status))
		p.f("task: %s\n", session.Sanitize(sa.Task))
		p.f("mode: %s · tools: %s · timeout %ds · inherit context %t\n", orDash(sa.PermissionMode),
			orDash(strings.Join(sa.Tools, ",")), sa.TimeoutS, sa.InheritContext)
		if rt := sa.Route; rt != nil {
			p.f("model: %s (%s)\n", session.Sanitize(sa.ModelInUse()), session.Sanitize(RouteText(sa)))
		}
		if p.sp != nil {
			p.sp.items(sa, p.item)
		} else {
			for i := 0; i < sa.Transcript.Len(); i++ {
				p.item(stateItem(sa, i))
			}
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

// ChangeStat is a change set in brief: "2 files +12 −3".
func ChangeStat(ch *session.SubagentChanges) string {
	return fmt.Sprintf("%s +%d −%d", session.Plural(len(ch.Files), "file"), ch.Added, ch.Removed)
}

// FileChangeLine is one file of a change set: kind, path (old → new for a rename), counts.
func FileChangeLine(f session.FileChange) string {
	name := session.Sanitize(f.Path)
	if f.OldPath != "" && f.OldPath != f.Path {
		name = session.Sanitize(f.OldPath) + " → " + name
	}
	s := fmt.Sprintf("%s %s", f.Kind, name)
	switch {
	case f.Binary:
		s += " (binary)"
	case f.Kind != session.ChangeMode:
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
func (p *printer) changes(sa *session.Subagent) {
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

// applies lists what /apply landed in the main workspace and what /undo took back.
func (p *printer) applies() {
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

func shortCommit(c string) string { return c[:min(len(c), 12)] }

// item prints one transcript item; its text is sanitized and continuation lines are indented
// so an item never looks like the start of another.
func (p *printer) item(v *itemView) {
	text := func(prefix string) {
		p.w.WriteString(prefix)
		p.itemText(v, "  ")
		p.w.WriteString("\n")
	}
	switch v.kind {
	case session.TranscriptStart:
		text("· start: ")
	case session.TranscriptToken, session.TranscriptMessage:
		text("assistant: ")
	case session.TranscriptThinking:
		text("thinking: ")
	case session.TranscriptToolCall:
		p.w.WriteString("> ")
		p.toolCall(v, "")
		p.w.WriteString("\n")
	case session.TranscriptToolResult:
		mark := "<"
		if v.isError {
			mark = "< error"
		}
		text(mark + " " + session.Sanitize(v.tool) + ": ")
	case session.TranscriptPolicyDenied:
		text("! denied " + session.Sanitize(v.tool) + ": ")
	case session.TranscriptError:
		text("! error: ")
	case session.ItemUser:
		text("user: ")
	default:
		text(v.kind + ": ")
	}
}

func (p *printer) log() {
	p.section("session log")
	if p.sp != nil {
		if p.sp.logN == 0 {
			p.f("(empty)\n")
		}
		p.sp.logItems(p.logItem)
		return
	}
	if len(p.s.Log) == 0 {
		p.f("(empty)\n")
	}
	for _, l := range p.s.Log {
		p.logItem(l)
	}
}

// logItem prints one log item. A mirror item's Ref is the index of its item in the state's
// transcript, or (printing from a spool) the place of the item in its stream.
func (p *printer) logItem(l session.LogItem) {
	switch l.Kind {
	case "command":
		p.f("#%d › %s\n", l.Seq, session.Sanitize(l.Text))
	case "rejected":
		p.f("#%d ✗ %s\n   %s\n", l.Seq, session.Sanitize(l.Text), indentRest(session.Sanitize(l.Detail)))
	case "mirror":
		var v *itemView
		if p.sp != nil {
			it, err := p.sp.mirrored(l.SubagentID, int64(l.Ref))
			if err != nil {
				p.sp.readErr(err)
				return
			}
			v = &it
		} else {
			v = stateItem(p.s.Subagent(l.SubagentID), l.Ref)
		}
		p.f("#%d [%s] %s: ", l.Seq, l.SubagentID, v.kind)
		if v.kind == session.TranscriptToolCall {
			p.toolCall(v, "  ")
		} else {
			p.itemText(v, "  ")
		}
		p.w.WriteString("\n")
	default:
		line := fmt.Sprintf("#%d %s: %s", l.Seq, l.Kind, session.Sanitize(l.Text))
		if l.Detail != "" {
			line += " (" + session.Sanitize(l.Detail) + ")"
		}
		p.f("%s\n", indentRest(line))
	}
}

func (p *printer) convergences() {
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
				p.f("    %s%s: %s\n", sd.SubagentID, conf, indentRestBy(session.Sanitize(strings.TrimRight(SideText(sd, ""), "\n")), "      "))
			}
			if cf.Context != "" {
				p.f("    current file:\n      %s\n", indentRestBy(strings.TrimRight(session.Sanitize(cf.Context), "\n"), "      "))
			}
			p.review(cf)
			if cf.ReviewReason != "" {
				p.f("    review: %s\n", session.Sanitize(cf.ReviewReason))
			}
			if r := cf.Resolution; r != nil {
				p.f("    resolved by %s: %s", r.Method, r.Choice)
				if r.WholeFile {
					p.f("'s whole %s", session.Sanitize(cf.File))
				}
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
				p.resolvedConsequences(r)
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

// VerifyMark is summit's measurement in brief, for a tree row: "measured ✓" or "measured ✗".
func VerifyMark(v *session.VerifyRan) string {
	if v.Passed() {
		return "measured ✓"
	}
	if v.Forced {
		return "measured ✗ (forced)"
	}
	return "measured ✗"
}

// verify prints summit's measurement (VerifyRan) and, when it failed, the end of its output.
func (p *printer) verify(v *session.VerifyRan) {
	if v == nil {
		return
	}
	p.f("verify: %s\n", v.Measured())
	if !v.Passed() && v.Output != "" {
		p.f("  | %s\n", indentRestBy(session.Sanitize(v.Output), "  | "))
	}
}

func (p *printer) permissions() {
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

func (p *printer) playbook() {
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

// SideText is what a conflict's side says, as a reviewer reads it (the review in the
// workbench and replay --print): a hunk's text as it is; for a vote or consensus side why it
// stands apart, its result and its whole change set as diffs; a finding or a playbook
// operation field by field. Never raw JSON, but for a value of no known shape (indent as
// JSONText's).
func SideText(sd session.ConflictSide, indent string) string {
	v, isMap := sd.Value.(map[string]any)
	if sd.Reason == "" && sd.Diff == "" && !isMap {
		if s, ok := sd.Value.(string); ok {
			return s
		}
		return JSONText(sd.Value, indent)
	}
	var b strings.Builder
	if sd.Reason != "" {
		b.WriteString("why: " + sd.Reason + "\n")
	}
	if r, ok := v["result"].(string); ok {
		b.WriteString(r + "\n")
	} else if isMap {
		b.WriteString(fieldsText(v))
	}
	b.WriteString(sd.Diff)
	return b.String()
}

// fieldsText is a side's value (a finding, a playbook operation) a field per line, in key
// order. Lists are joined with commas; bookkeeping (the seq a member finished at) is left out.
func fieldsText(v map[string]any) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		if k != "finished_seq" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		var s string
		switch x := v[k].(type) {
		case string:
			s = x
		case []any:
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = fmt.Sprint(e)
			}
			s = strings.Join(parts, ", ")
		case []string:
			s = strings.Join(x, ", ")
		case nil:
			continue
		default:
			s = JSONText(x, "")
		}
		fmt.Fprintf(&b, "%s: %s\n", strings.ReplaceAll(k, "_", " "), s)
	}
	return b.String()
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
func FormatTokens(sa *session.Subagent) string {
	return formatTokens(sa.Tokens, sa.StreamedBytes)
}

func formatTokens(tok session.Tokens, streamed int) string {
	n := tok.Input + tok.Output
	prefix := ""
	if n == 0 && streamed > 0 {
		n, prefix = int64(streamed/4), "~"
	}
	// strconv, not fmt: the workbench formats every streaming subagent's count each frame
	// (1,000 of them at issue 29's scale). The same text as %.1fk and %d.
	if n >= 1000 {
		return prefix + strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return prefix + strconv.FormatInt(n, 10)
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
func RouteText(sa *session.Subagent) string {
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
		t += "; switched from " + session.Link(sw.FromProvider, sw.FromModel) + ": " + sw.Reason
	}
	return t
}

// ConvergenceStatus describes a convergence's state for people: "pending (waiting for sa-2)"
// while members run, "review (cf-1 open)" while conflicts wait, else its status and outcome.
func ConvergenceStatus(s *session.State, cv *session.Convergence) string {
	switch cv.Status {
	case session.ConvergenceRunning:
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
	case session.ConvergenceReview:
		var open []string
		for _, cf := range cv.Conflicts {
			if cf.Resolution == nil {
				open = append(open, cf.ID)
			}
		}
		return "review (" + strings.Join(open, ", ") + " open)"
	case session.ConvergenceDone:
		return "complete · " + cv.Outcome
	}
	return cv.Status
}

// ForkLineage is one line naming where a forked session came from: its parent at the fork point,
// then the parent's own parents. Paths are quoted as recorded (sanitised by the caller's output).
func ForkLineage(f *session.SessionForked) string {
	one := func(p session.ForkParent) string {
		return fmt.Sprintf("%s at #%d (%s)", p.SessionID, p.Seq, orDash(p.Path))
	}
	var b strings.Builder
	b.WriteString(one(f.Parent))
	for _, p := range f.Parent.Lineage {
		b.WriteString(", itself forked from ")
		b.WriteString(one(p))
	}
	return b.String()
}
