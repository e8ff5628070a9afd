package live

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

// Exit codes of a headless run (DESIGN §10).
const (
	ExitOK         = 0 // every command accepted, every subagent succeeded, no conflict left
	ExitFailed     = 1 // a command was rejected or a subagent did not succeed
	ExitUsage      = 2 // bad flags or an unreadable script (decided by the caller)
	ExitUnresolved = 3 // conflicts are left unresolved (and nothing else failed)
)

// MaxScriptLine bounds one script line (a pasted task may be long; a binary file is not).
const MaxScriptLine = 1 << 20

// RunScript runs a headless script: blank lines and lines starting with # are skipped, every
// other line is submitted as typed (one that names a convergence still computing first waits
// for it: scriptwait.go). At the end it waits for every subagent and convergence to
// settle, then closes the session (reason script_end, or quit after /quit). Progress goes to
// progress. It returns the exit code; the error is a failure to read the script or to record.
//
// Under a SimClock the caller is the clock's first participant; RunScript ends its
// participation before returning, so the clock drains.
func RunScript(ctx context.Context, x *Orchestrator, script io.Reader, progress io.Writer) (int, error) {
	if sc, ok := x.clock.(*SimClock); ok {
		defer func() { sc.Done(); <-sc.Idle() }()
	}
	sc := bufio.NewScanner(script)
	sc.Buffer(make([]byte, 64*1024), MaxScriptLine)
	red := record.NewRedactor(os.Environ()) // the echoed lines keep secrets out, as the recording does
	reason := "script_end"
	n := 0
	for sc.Scan() {
		n++
		if ctx.Err() != nil { // SIGINT, SIGTERM, SIGHUP or SIGQUIT: close cleanly, run no more lines
			reason = "signal"
			break
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fmt.Fprintf(progress, "» %s\n", session.Sanitize(red.RedactText(line)))
		// A line naming a convergence still computing waits for it, as a person would
		// (scriptwait.go).
		x.awaitNamed(ctx, line, func(s string) { fmt.Fprintln(progress, s) })
		r, err := x.Submit(ctx, line)
		if err != nil {
			_ = x.Close("error")
			return ExitFailed, fmt.Errorf("line %d: %w", n, err)
		}
		switch {
		case r.Rejected:
			fmt.Fprintf(progress, "  line %d rejected: %s\n", n, indent(session.Sanitize(r.Error)))
		case r.Output != "":
			fmt.Fprintf(progress, "  %s\n", indent(strings.TrimRight(render.AlignTabs(session.Sanitize(r.Output)), "\n"))) // tables as columns
		}
		if r.Quit {
			reason = "quit"
			break
		}
	}
	if err := sc.Err(); err != nil {
		_ = x.Close("error")
		return ExitUsage, fmt.Errorf("script line %d: %w", n+1, err)
	}
	if reason == "script_end" {
		if err := x.WaitAll(ctx); err != nil {
			why := "error"
			if ctx.Err() != nil {
				why = "signal"
			}
			_ = x.Close(why)
			return ExitFailed, err
		}
	}
	if err := x.Close(reason); err != nil {
		return ExitFailed, err
	}
	if reason == "signal" {
		return ExitFailed, errors.New("stopped by a signal; the session was closed and recorded")
	}
	s := x.Summary()
	switch {
	case s.Rejected > 0 || len(s.Failed) > 0:
		if s.Rejected > 0 {
			fmt.Fprintf(progress, "summit: %s rejected\n", session.Plural(s.Rejected, "command"))
		}
		if len(s.Failed) > 0 {
			fmt.Fprintf(progress, "summit: did not succeed: %s\n", strings.Join(s.Failed, ", "))
		}
		return ExitFailed, nil
	case len(s.Unresolved) > 0:
		fmt.Fprintf(progress, "summit: unresolved conflicts: %s\n", strings.Join(s.Unresolved, ", "))
		return ExitUnresolved, nil
	}
	return ExitOK, nil
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// Progress renders the lifecycle events worth a line on stderr while a run goes ("" for the
// rest: tokens and tool results would drown it). Every line passes session.Sanitize whole:
// tool and agent names are model text too.
func Progress(ev session.Event) string { return session.Sanitize(progress(ev)) }

func progress(ev session.Event) string {
	id := ev.SubagentID
	switch d := ev.Data.(type) {
	case session.SubagentSpawned:
		q := ""
		if d.Queued {
			q = " (queued)"
		}
		return fmt.Sprintf("  %s spawned: %s%s", id, d.AgentType, q)
	case session.TranscriptEvent:
		switch d.EventType {
		case session.TranscriptToolCall:
			return fmt.Sprintf("  %s → %s", id, d.Tool)
		case session.TranscriptPolicyDenied:
			return fmt.Sprintf("  %s ✗ %s denied: %s", id, d.Tool, session.Sanitize(d.Reason))
		}
	case session.SubagentError:
		retry := ""
		if d.Retrying() {
			retry = " (retrying)"
		}
		return fmt.Sprintf("  %s error: %s%s", id, session.Sanitize(d.Error), retry)
	case session.ModelSwitched:
		// A model switch changes who answers for the rest of the run: always shown, with why.
		return fmt.Sprintf("  %s model switched: %s → %s: %s", id, provider.Link{Provider: d.FromProvider, Model: d.FromModel},
			provider.Link{Provider: d.ToProvider, Model: d.ToModel}, session.Sanitize(oneLine(d.Reason, 300)))
	case session.ModelRouted:
		if d.From == "" { // the first route: summit models and the log say it
			return ""
		}
		return fmt.Sprintf("  %s model switched: %s → %s: %s", id, session.Sanitize(d.From),
			provider.Link{Provider: d.Provider, Model: d.Model}, session.Sanitize(oneLine(d.Why, 300)))
	case session.SubagentTimeout:
		return fmt.Sprintf("  %s timed out after %ds", id, d.TimeoutS)
	case session.SubagentCancelled:
		return fmt.Sprintf("  %s cancelled: %s", id, session.Sanitize(d.Reason))
	case session.SubagentStop:
		return fmt.Sprintf("  %s stopped: %s", id, d.Outcome)
	case session.HookRan:
		on := ""
		if id != "" {
			on = " on " + id
		}
		why := ""
		if d.Reason != "" {
			why = ": " + session.Sanitize(oneLine(d.Reason, 120))
		}
		return fmt.Sprintf("  %s hook%s %s%s", d.HookEvent, on, d.Outcome, why)
	case session.VerifyRan:
		return fmt.Sprintf("  %s %s", d.Target, d.Measured()) // summit's measurement, before the /apply's record
	case session.PermissionRequested:
		return fmt.Sprintf("  %s asks for %s (%s)", id, d.Tool, d.RequestID)
	case session.PermissionGranted:
		return fmt.Sprintf("  %s granted %s", d.RequestID, d.By)
	case session.PermissionDenied:
		return fmt.Sprintf("  %s denied: %s", d.RequestID, session.Sanitize(d.Reason))
	case session.HandoffComplete:
		return fmt.Sprintf("  handoff to %s complete: %s", id, d.Outcome)
	case session.HandoffResolved:
		return fmt.Sprintf("  handoff to %s resolved: %s (%s)", id, d.Outcome, d.Action)
	case session.ConflictDetected:
		var lines session.LineRange
		if d.Lines != nil {
			lines = *d.Lines
		}
		where := session.ConflictWhere(d.Kind, d.File, lines)
		sides := make([]string, len(d.Sides))
		for i, sd := range d.Sides {
			sides[i] = sd.SubagentID
		}
		out := fmt.Sprintf("  %s conflict %s: %s between %s (choices: %s)", d.ConvergenceID, d.ConflictID, where, strings.Join(sides, ", "), strings.Join(d.Choices, " | "))
		return out + reviewProgress(d.Review)
	case session.ConflictReviewRequest:
		why := ""
		if d.Reason != "" {
			why = " (" + session.Sanitize(d.Reason) + ")"
		}
		return fmt.Sprintf("  %s needs review%s: /resolve %s --choose <choice> [--note TEXT]", d.ConflictID, why, d.ConflictID)
	case session.ConflictResolved:
		out := fmt.Sprintf("  %s resolved by %s: %s", d.ConflictID, d.Method, d.Choice)
		if d.WholeFile {
			out = fmt.Sprintf("  %s resolved by %s: %s's whole file (%s dropped)", d.ConflictID, d.Method, d.Choice, session.Plural(len(d.Dropped), "hunk"))
		}
		// What else lands with the choice, and the playbook operations it drops (issue 27).
		for _, h := range d.AlsoLands {
			head, _, _ := strings.Cut(h.Text, "\n")
			out += "\n    with it also lands " + session.Sanitize(h.SubagentID+"'s "+head)
		}
		for _, op := range d.PlaybookDropped {
			out += "\n    playbook operation dropped: " + session.Sanitize(op.SubagentID+"'s "+op.Text)
		}
		return out
	case session.ConvergenceComplete:
		return fmt.Sprintf("  %s complete: %s · %s · %d resolved · %s", d.ConvergenceID, d.Outcome, session.Plural(d.ConflictCount, "conflict"), d.ResolutionCount, session.Plural(d.OutputSize, "byte"))
	case session.DeltaBatchApplied:
		return fmt.Sprintf("  %s applied to %s", d.ConvergenceID, session.Sanitize(strings.Join(d.Files, ", ")))
	}
	return ""
}

// reviewProgress tells a script what a region choice lands beyond its side (issue 27): the
// other sides' hunks in the file that still land with it, and the --whole-file alternative.
func reviewProgress(rv *session.ConflictReview) string {
	if rv == nil {
		return ""
	}
	var b strings.Builder
	file := session.Sanitize(rv.File)
	for _, o := range rv.Outcomes {
		if o.WholeFile || len(o.AlsoLands) == 0 {
			continue
		}
		var hs []string
		for _, h := range o.AlsoLands {
			head, _, _ := strings.Cut(h.Text, "\n")
			hs = append(hs, session.Sanitize(h.SubagentID+" "+head))
		}
		fmt.Fprintf(&b, "\n    --choose %s also lands in %s: %s", o.Choice, file, strings.Join(hs, "; "))
	}
	var whole []string
	for _, o := range rv.Outcomes {
		if o.WholeFile {
			whole = append(whole, o.Choice)
		}
	}
	if len(whole) > 0 {
		fmt.Fprintf(&b, "\n    --choose %s --whole-file takes that side's whole %s", strings.Join(whole, "|"), file)
	}
	return b.String()
}
