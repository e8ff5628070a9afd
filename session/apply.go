package session

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// ApplyError rejects an event that cannot follow the state: a gap in seq, a stop before a
// spawn, an unknown subagent. The state is unchanged when Apply returns one.
type ApplyError struct {
	Seq        uint64
	Type       Type
	SubagentID string
	Msg        string
}

func (e *ApplyError) Error() string {
	if e.SubagentID != "" {
		return fmt.Sprintf("seq %d (%s %s): %s", e.Seq, e.Type, e.SubagentID, e.Msg)
	}
	return fmt.Sprintf("seq %d (%s): %s", e.Seq, e.Type, e.Msg)
}

// Apply folds one event into s. It is the only function that changes a State.
//
// It is pure in the sense that matters for replay: it reads no clock, file or randomness, only
// s and e (times come from the envelope's ts). It either applies the event whole or returns an
// *ApplyError and leaves s exactly as it was: every rule validates before it mutates.
//
// Events of a type this build does not know (Unknown data) advance seq and are counted in
// Counters.Unknown, nothing else: a newer writer's extra events never break an older reader.
func Apply(s *State, e Event) error {
	switch {
	case e.V > SchemaVersion:
		return reject(&e, "schema version %d is newer than this summit reads (%d)", e.V, SchemaVersion)
	case e.Data == nil:
		return reject(&e, "event has no data")
	case e.Data.Type() != e.Type:
		return reject(&e, "data is %s, envelope says %s", e.Data.Type(), e.Type)
	case !s.Started && e.Type != TypeSessionStarted && e.Type != TypeSessionForked:
		return reject(&e, "the first event must be SessionStarted (or SessionForked)")
	case !s.Started && e.Seq != 1:
		return reject(&e, "seq must start at 1, got %d", e.Seq)
	case s.Started && e.Seq != s.LastSeq+1:
		if e.Seq <= s.LastSeq {
			return reject(&e, "seq %d repeats or goes back (last was %d)", e.Seq, s.LastSeq)
		}
		return reject(&e, "gap in seq: expected %d after %d", s.LastSeq+1, s.LastSeq)
	case s.Started && e.SessionID != s.SessionID:
		return reject(&e, "session_id %q does not match the session %q", e.SessionID, s.SessionID)
	case s.Ended:
		return reject(&e, "event after SessionEnded")
	}
	// The subagent the event is about, looked up once: a known one was checked when it
	// spawned, as the session id was at the start, so the check below runs on ids not seen
	// before only (every event of a recording would otherwise pay it).
	var known *Subagent
	if e.SubagentID != "" && s.Started {
		known = s.lookup(e.SubagentID)
	}
	if !s.Started && !plainID(e.SessionID) || known == nil && !plainID(e.SubagentID) {
		// Ids are printed bare in tree rows and lines of --print: one with a line break or a
		// control character would forge lines there.
		return reject(&e, "session_id %q or subagent_id %q holds a control or invisible character", e.SessionID, e.SubagentID)
	}

	// Rules for events about one subagent: it must exist, and nothing but a late error or
	// permission bookkeeping may follow its SubagentStop.
	var sa *Subagent
	if e.Type != TypeSessionStarted && e.Type != TypeSubagentSpawned && e.SubagentID != "" {
		if sa = known; sa == nil {
			return reject(&e, "unknown subagent %s", e.SubagentID)
		}
	}

	// TranscriptEvent, nine events in ten, is folded here; every other type by applyOther
	// (which keeps this function's frame small: it is paid on every event).
	if d, ok := e.Data.(TranscriptEvent); ok {
		switch {
		case e.SubagentID == "":
			return reject(&e, "subagent_id is required for %s", e.Type)
		case sa.Stopped:
			return reject(&e, "%s already stopped", sa.ID)
		case !slices.Contains(TranscriptEvents, d.EventType):
			return reject(&e, "unknown transcript event_type %q", d.EventType)
		}
		s.transcript(&e, sa, &d)
	} else if err := s.applyOther(e, sa, known); err != nil {
		return err
	}

	s.LastSeq, s.LastTS = e.Seq, e.TS
	s.Counters.Events[e.Type]++
	return nil
}

// reject is the *ApplyError refusing e.
func reject(e *Event, format string, args ...any) error {
	return &ApplyError{Seq: e.Seq, Type: e.Type, SubagentID: e.SubagentID, Msg: fmt.Sprintf(format, args...)}
}

// lookup is s.subagents[id], through a small cache of recent ids (s.recent): a recording
// interleaves the events of the few subagents running at once. The cache holds indexes into
// s.Subagents, checked against the id found there, so a clone that copies it stays right.
func (s *State) lookup(id string) *Subagent {
	h := (uint(id[len(id)-1]) + uint(len(id))) % uint(len(s.recent))
	if i := s.recent[h]; int(i) < len(s.Subagents) && s.Subagents[i].ID == id {
		return s.Subagents[i]
	}
	sa := s.subagents[id]
	if sa != nil && sa.index < len(s.Subagents) && sa.index <= math.MaxUint32 && s.Subagents[sa.index] == sa {
		s.recent[h] = uint32(sa.index)
	}
	return sa
}

// applyOther folds an event of any type but TranscriptEvent, after Apply's checks: sa is the
// subagent it is about (nil for a session event or a spawn), known the subagent its id names.
func (s *State) applyOther(e Event, sa, known *Subagent) error {
	fail := func(format string, args ...any) error { return reject(&e, format, args...) }
	needSub := func() error {
		if e.SubagentID == "" {
			return fail("subagent_id is required for %s", e.Type)
		}
		return nil
	}
	live := func() error {
		if err := needSub(); err != nil {
			return err
		}
		if sa.Stopped {
			return fail("%s already stopped", sa.ID)
		}
		return nil
	}

	var err error
	switch d := e.Data.(type) {
	case Unknown:
		s.Counters.Unknown++

	case SessionStarted:
		if s.Started {
			return fail("second SessionStarted")
		}
		if e.SessionID == "" {
			return fail("session_id is required")
		}
		s.start(e, d)

	case SessionForked:
		if s.Started {
			return fail("SessionForked after the session started")
		}
		if e.SessionID == "" {
			return fail("session_id is required")
		}
		if d.Parent.SessionID == "" || d.Parent.Seq == 0 {
			return fail("SessionForked needs the parent's session_id and seq")
		}
		if d.Parent.SessionID == e.SessionID {
			return fail("a fork has its own session id, not its parent's (%s)", e.SessionID)
		}
		s.start(e, d.Started)
		fork := d
		s.Fork = &fork

	case SessionEnded:
		s.Ended, s.EndedAt, s.EndReason = true, e.TS, d.Reason
		s.log(e, "end", d.Reason, "")

	case CommandIssued:
		s.Counters.Commands++
		s.log(e, "command", d.Line, "")

	case CommandRejected:
		s.Counters.Rejected++
		s.log(e, "rejected", d.Line, d.Error)

	case UserNote:
		if sa != nil {
			if err = live(); err != nil {
				return err
			}
		}
		s.Counters.Notes++
		if sa != nil {
			sa.Transcript.add(Item{Seq: e.Seq, Kind: ItemUser}, d.Text, s.ref())
			s.log(e, "note", d.Text, "to "+sa.ID)
		} else {
			s.log(e, "note", d.Text, "")
		}

	case SubagentSpawned:
		if err = needSub(); err != nil {
			return err
		}
		if known != nil {
			return fail("subagent %s spawned twice", e.SubagentID)
		}
		if p := d.ParentSubagentID; p != "" {
			// A child runs under a subagent that is running: its agent announced it.
			if ps := s.subagents[p]; ps == nil || ps.Stopped {
				return fail("child %s names parent %q, which is not a running subagent", e.SubagentID, p)
			}
		}
		n := &Subagent{
			ID: e.SubagentID, AgentType: d.AgentType, AgentName: d.AgentName,
			PermissionMode: d.PermissionMode, Tools: d.Tools, Task: d.TaskDescription,
			TimeoutS: d.TimeoutS, InheritContext: d.InheritContext, SessionID: d.SubagentSessionID,
			ParentRef: d.ParentSessionRef, Status: StatusQueued, SpawnedAt: e.TS,
			Parent: d.ParentSubagentID, AgentSessionID: d.AgentSessionID, Transcript: &Transcript{counted: s.CountsItems()},
			AgentShadows: d.AgentShadows, Runner: d.Runner, RunnerOn: d.RunnerOn, RunnerRetry: d.RunnerRetry,
		}
		n.index = len(s.Subagents)
		s.Subagents = append(s.Subagents, n)
		s.subagents[n.ID] = n
		s.Counters.Spawns++
		s.typeCounters(n.AgentType).Spawned++

	case SubagentActive:
		if err = live(); err != nil {
			return err
		}
		if sa.Status != StatusQueued && sa.Status != StatusActive {
			return fail("%s is %s, cannot become active", sa.ID, sa.Status)
		}
		sa.Status = StatusActive
		if sa.ActiveAt.IsZero() {
			sa.ActiveAt = e.TS
		}

	case SubagentError:
		if err = needSub(); err != nil {
			return err
		}
		s.Counters.Errors++
		sa.Errors++
		sa.LastError = d.Error
		if d.Retrying() && !sa.Stopped {
			s.Counters.Retries++
			sa.Retries++
		} else if !sa.Terminal() {
			sa.Status = StatusFailed
			sa.EndedAt = e.TS
		}

	case SubagentTimeout:
		if err = live(); err != nil {
			return err
		}
		s.Counters.Timeouts++
		sa.Status, sa.EndedAt = StatusTimeout, e.TS

	case SubagentCancelled:
		if err = live(); err != nil {
			return err
		}
		s.Counters.Cancellations++
		sa.Status, sa.EndedAt = StatusCancelled, e.TS

	case SubagentStop:
		if err = needSub(); err != nil {
			return err
		}
		if sa.Stopped {
			return fail("%s stopped twice", sa.ID)
		}
		status, ok := map[string]string{OutcomeSuccess: StatusDone, OutcomeFailure: StatusFailed,
			OutcomeTimeout: StatusTimeout, OutcomeCancelled: StatusCancelled, OutcomeDisconnected: StatusDisconnected,
			OutcomeInterrupted: StatusInterrupted}[d.Outcome]
		if !ok || d.Outcome == OutcomeDisconnected && sa.Parent == "" {
			return fail("outcome %q is not success, failure, timeout or cancelled (or disconnected, for a child)", d.Outcome)
		}
		if d.Outcome == OutcomeInterrupted && s.Fork == nil {
			return fail("outcome interrupted is only for a forked session's subagents that ran at a fork point")
		}
		sa.Stopped, sa.Status, sa.Outcome = true, status, d.Outcome
		sa.EndedAt, sa.StopSeq = e.TS, e.Seq
		sa.Capsule, sa.ArtifactPaths, sa.DurationMS, sa.Tokens, sa.CostUSD = d.Capsule, d.ArtifactPaths, d.DurationMS, d.Tokens, d.CostUSD
		sa.CurrentTool, sa.currentCallID = "", ""
		if d.ToolInvocationCount > sa.ToolCalls {
			sa.ToolCalls = d.ToolInvocationCount
		}
		s.Counters.Outcomes[d.Outcome]++
		tc := s.typeCounters(sa.AgentType)
		tc.Stopped++
		tc.TotalDurationMS += d.DurationMS
		if d.Outcome == OutcomeSuccess {
			tc.Succeeded++
		}
		switch {
		case d.CostUSD != nil:
			tc.CostUSD += *d.CostUSD
			s.Counters.CostUSD += *d.CostUSD
			s.Counters.Priced++
		case sa.Route != nil:
			s.Counters.Unpriced++
		}

	case PermissionRequested:
		if err = live(); err != nil {
			return err
		}
		if d.RequestID == "" || s.permissions[d.RequestID] != nil {
			return fail("permission request id %q is empty or already used", d.RequestID)
		}
		p := &Permission{ID: d.RequestID, SubagentID: sa.ID, Tool: d.Tool, Args: d.Args,
			Reason: d.Reason, Seq: e.Seq, At: e.TS, Decision: DecisionPending}
		if s.countOnly {
			p.Args, p.Reason = nil, "" // shown, never counted
		}
		if !s.forgetDecided {
			s.Permissions = append(s.Permissions, p)
		}
		s.permissions[p.ID] = p
		sa.PendingRequest = p.ID
		s.Counters.PermissionRequests++
		s.log(e, "permission", fmt.Sprintf("%s asks for %s", sa.ID, d.Tool), p.ID)

	case PermissionGranted:
		var p *Permission
		if p, err = s.decide(e, d.RequestID, fail); err != nil {
			return err
		}
		p.Decision, p.Scope, p.By = DecisionGranted, d.Scope, d.By
		s.Counters.Granted++
		if sa := s.subagents[p.SubagentID]; sa != nil && p.Tool == ToolBypassPermissions {
			sa.PermissionMode = ToolBypassPermissions // approved at delegation (DESIGN §5)
		}
		s.settleRequest(p)

	case PermissionDenied:
		var p *Permission
		if p, err = s.decide(e, d.RequestID, fail); err != nil {
			return err
		}
		p.Decision, p.DenyReason, p.By = DecisionDenied, d.Reason, d.By
		s.Counters.Denied++
		s.settleRequest(p)

	case HandoffInitiated:
		// A handoff to a subagent that has already stopped is allowed: the handoff then
		// completes at once, and a recording that does this is still a valid one.
		if err = needSub(); err != nil {
			return err
		}
		if d.HandoffMode != HandoffMonitor && d.HandoffMode != HandoffTransferControl {
			return fail("handoff_mode %q is not monitor or transfer_control", d.HandoffMode)
		}
		if h := s.openHandoff(sa.ID); h != nil {
			return fail("%s already has a handoff open since seq %d", sa.ID, h.Seq)
		}
		if d.HandoffMode == HandoffTransferControl && s.Control != "" {
			return fail("control is already with %s", s.Control)
		}
		s.Handoffs = append(s.Handoffs, &Handoff{SubagentID: sa.ID, Mode: d.HandoffMode,
			TimeoutS: d.TimeoutS, OnFailure: d.OnFailure, Seq: e.Seq, Status: HandoffActive})
		if d.HandoffMode == HandoffTransferControl {
			s.Control = sa.ID
		}
		s.Counters.Handoffs++
		s.log(e, "handoff", fmt.Sprintf("handoff to %s (%s)", sa.ID, d.HandoffMode), "")

	case HandoffComplete:
		if err = needSub(); err != nil {
			return err
		}
		h := s.openHandoff(sa.ID)
		if h == nil || h.Status != HandoffActive {
			return fail("no active handoff to %s", sa.ID)
		}
		h.Status, h.Outcome = HandoffDone, d.Outcome
		if s.Control == sa.ID {
			s.Control = "" // the parent resumes when the subagent ends
		}
		s.log(e, "handoff", fmt.Sprintf("handoff to %s complete: %s", sa.ID, d.Outcome), "")

	case HandoffResolved:
		if err = needSub(); err != nil {
			return err
		}
		h := s.openHandoff(sa.ID)
		if h == nil {
			return fail("no open handoff to %s", sa.ID)
		}
		h.Status, h.Outcome, h.Action, h.Artifacts = HandoffSettled, d.Outcome, d.Action, d.Artifacts
		if s.Control == sa.ID {
			s.Control = ""
		}
		s.log(e, "handoff", fmt.Sprintf("handoff to %s resolved: %s", sa.ID, d.Outcome), d.Action)

	case ConvergenceInitiated:
		if d.ConvergenceID == "" || s.convergences[d.ConvergenceID] != nil {
			return fail("convergence id %q is empty or already used", d.ConvergenceID)
		}
		if len(d.SubagentIDs) == 0 {
			return fail("convergence %s names no subagents", d.ConvergenceID)
		}
		for _, id := range d.SubagentIDs {
			if s.subagents[id] == nil {
				return fail("convergence %s names unknown subagent %s", d.ConvergenceID, id)
			}
		}
		cv := &Convergence{ID: d.ConvergenceID, Members: d.SubagentIDs, Strategy: d.Strategy,
			ConflictResolution: d.ConflictResolution, OutputFormat: d.OutputFormat, Seq: e.Seq,
			Status: ConvergenceRunning}
		s.Convergences = append(s.Convergences, cv)
		s.convergences[cv.ID] = cv
		s.Counters.Convergences++
		s.log(e, "convergence", fmt.Sprintf("%s %s %v", cv.ID, cv.Strategy, cv.Members), "")

	case ConflictDetected:
		var cv *Convergence
		if cv, err = s.convergence(d.ConvergenceID, fail); err != nil {
			return err
		}
		if d.ConflictID == "" || s.conflicts[d.ConflictID] != nil {
			return fail("conflict id %q is empty or already used", d.ConflictID)
		}
		cf := &Conflict{ID: d.ConflictID, ConvergenceID: cv.ID, Kind: d.Kind, File: d.File, Sides: d.Sides, Context: d.Context, Choices: d.Choices,
			EditTemplate: d.EditTemplate, Review: d.Review}
		if d.Lines != nil {
			cf.Lines = *d.Lines
		}
		sides := make([]string, len(d.Sides))
		for i, sd := range d.Sides {
			sides[i] = sd.SubagentID
		}
		s.log(e, "conflict", fmt.Sprintf("%s conflict %s %s between %s", cv.ID, cf.ID, conflictWhere(cf), strings.Join(sides, ", ")), "")
		if len(cv.Conflicts) == 0 {
			s.Counters.ConvergencesWithConflicts++
		}
		cv.Conflicts = append(cv.Conflicts, cf)
		s.conflicts[cf.ID] = cf
		s.Counters.Conflicts++

	case ConflictReviewRequest:
		var cf *Conflict
		if cf, err = s.conflict(d.ConvergenceID, d.ConflictID, fail); err != nil {
			return err
		}
		cf.ReviewRequested, cf.ReviewReason = true, d.Reason
		cf.markReview(e)
		text := fmt.Sprintf("%s needs review", cf.ID)
		if d.Reason != "" {
			text += ": " + d.Reason
		}
		s.log(e, "conflict", text, "")

	case ManualReviewRequired:
		var cv *Convergence
		if cv, err = s.convergence(d.ConvergenceID, fail); err != nil {
			return err
		}
		for _, id := range d.ConflictIDs {
			if _, err = s.conflict(cv.ID, id, fail); err != nil {
				return err
			}
		}
		for _, id := range d.ConflictIDs {
			s.conflicts[id].ReviewRequested = true
			s.conflicts[id].markReview(e)
		}
		if cv.Status != ConvergenceDone {
			cv.Status = ConvergenceReview
		}

	case ConflictResolved:
		var cf *Conflict
		if cf, err = s.conflict(d.ConvergenceID, d.ConflictID, fail); err != nil {
			return err
		}
		if cf.Resolution != nil {
			return fail("conflict %s already resolved", cf.ID)
		}
		r := d
		cf.Resolution = &r
		s.Counters.Resolutions++
		text := fmt.Sprintf("%s resolved by %s: %s", cf.ID, d.Method, d.Choice)
		if d.WholeFile {
			text += "'s whole " + cf.File
		}
		if len(d.Overridden) > 0 {
			text += " (overrides " + strings.Join(d.Overridden, ", ") + ")"
		}
		s.log(e, "conflict", text, d.Note)

	case ConvergenceComplete:
		var cv *Convergence
		if cv, err = s.convergence(d.ConvergenceID, fail); err != nil {
			return err
		}
		if cv.Status == ConvergenceDone {
			return fail("convergence %s completed twice", cv.ID)
		}
		cv.Status, cv.Outcome = ConvergenceDone, d.Outcome
		cv.ConflictCount, cv.ResolutionCount, cv.OutputSize = d.ConflictCount, d.ResolutionCount, d.OutputSize
		cv.Notes = d.Notes
		s.log(e, "convergence", fmt.Sprintf("%s complete: %s", cv.ID, d.Outcome), strings.Join(d.Notes, "\n"))

	case ConvergedResult:
		var cv *Convergence
		if cv, err = s.convergence(d.ConvergenceID, fail); err != nil {
			return err
		}
		cv.ResultFormat, cv.Result = d.Format, d.Output

	case DeltaBatch:
		var cv *Convergence
		if cv, err = s.convergence(d.ConvergenceID, fail); err != nil {
			return err
		}
		b := d
		cv.Batch = &b

	case DeltaBatchApplied:
		var cv *Convergence
		if cv, err = s.convergence(d.ConvergenceID, fail); err != nil {
			return err
		}
		if cv.Applied {
			return fail("delta batch of %s applied twice", cv.ID)
		}
		var book []PlaybookEntry
		if cv.Batch != nil {
			if book, err = ApplyPlaybook(s.Playbook, cv.Batch.Operations, cv.ID); err != nil {
				return fail("%v", err)
			}
		} else {
			book = s.Playbook
		}
		cv.PlaybookBefore = s.Playbook
		s.Playbook = book
		cv.Applied, cv.AppliedFiles, cv.AppliedSeq = true, d.Files, e.Seq
		s.Counters.DeltaBatchesApplied++
		s.log(e, "convergence", fmt.Sprintf("%s applied: %s", cv.ID, Plural(len(d.Files), "file")), "")

	case SubagentIsolated:
		if err = live(); err != nil {
			return err
		}
		if sa.Isolation != nil {
			return fail("%s is already isolated", sa.ID)
		}
		iso := d
		sa.Isolation = &iso
		s.log(e, "workspace", fmt.Sprintf("%s works in its own worktree at %s", sa.ID, d.Base), "")

	case SubagentChanges:
		if err = live(); err != nil {
			return err
		}
		ch := d
		sa.Changes = &ch
		text := fmt.Sprintf("%s changed %s (+%d −%d)", sa.ID, Plural(len(d.Files), "file"), d.Added, d.Removed)
		if d.Error != "" {
			text = fmt.Sprintf("%s: its changes could not be read: %s", sa.ID, d.Error)
		}
		s.log(e, "workspace", text, "")

	case ChangesApplied:
		if d.ApplyID == "" || s.FindApply(d.ApplyID) != nil {
			return fail("apply id %q is empty or already used", d.ApplyID)
		}
		if s.subagents[d.Source] == nil && s.convergences[d.Source] == nil {
			return fail("apply of unknown %q", d.Source)
		}
		s.Applies = append(s.Applies, &Applied{ChangesApplied: d, Seq: e.Seq})
		s.log(e, "workspace", fmt.Sprintf("%s applied %s: %s", d.ApplyID, d.Source, Plural(len(d.Files), "file")), strings.Join(d.Files, ", "))

	case ApplyUndone:
		a := s.FindApply(d.ApplyID)
		if a == nil || a.Undone {
			return fail("%q is not an apply that can be undone", d.ApplyID)
		}
		a.Undone = true
		if cv := s.convergences[a.ConvergenceID]; cv != nil && cv.Applied {
			// Its playbook operations go back with the files; it may be applied again.
			s.Playbook, cv.Applied, cv.AppliedFiles, cv.AppliedSeq = cv.PlaybookBefore, false, nil, 0
		}
		s.log(e, "workspace", fmt.Sprintf("%s undone: %s restored", d.ApplyID, Plural(len(d.Files), "file")), "")

	case ModelTurn:
		if err = live(); err != nil {
			return err
		}
		if d.Turn < 1 || d.Attempt < 1 || d.Tokens.Input < 0 || d.Tokens.Output < 0 {
			return fail("turn %d, attempt %d, tokens %d/%d: turns and attempts count from 1, tokens from 0", d.Turn, d.Attempt, d.Tokens.Input, d.Tokens.Output)
		}
		sa.ModelCalls++
		sa.Tokens.Input += d.Tokens.Input
		sa.Tokens.Output += d.Tokens.Output

	case ModelRouted:
		if err = needSub(); err != nil {
			return err
		}
		if d.From != "" && sa.Route != nil {
			// A move to a fallback mid-run (overload): the subagent now runs on d's model. It
			// is kept with the other switches so the first route, and why, stay on record.
			sw := ModelSwitched{ToProvider: d.Provider, ToModel: d.Model, Reason: d.Why}
			sw.FromProvider, sw.FromModel = sa.Route.Provider, sa.Route.Model
			if n := len(sa.Switches); n > 0 {
				sw.FromProvider, sw.FromModel = sa.Switches[n-1].ToProvider, sa.Switches[n-1].ToModel
			}
			sa.Switches = append(sa.Switches, sw)
			s.log(e, "model", fmt.Sprintf("%s switched to %s: %s", sa.ID, sa.ModelInUse(), d.Why), "")
			break
		}
		rt := d
		sa.Route = &rt
		s.log(e, "model", fmt.Sprintf("%s runs on %s: %s", sa.ID, sa.ModelInUse(), d.Why), "")

	case ModelSwitched:
		if err = needSub(); err != nil {
			return err
		}
		sa.Switches = append(sa.Switches, d)
		s.log(e, "model", fmt.Sprintf("%s switched to %s: %s", sa.ID, sa.ModelInUse(), d.Reason), "")

	case ChangesRebased:
		if err = needSub(); err != nil {
			return err
		}
		if sa.Changes == nil {
			return fail("%s has no changes to rebase", sa.ID)
		}
		rb := d
		sa.Rebased = &rb
		s.log(e, "workspace", fmt.Sprintf("%s's changes rebased onto %s for %s", sa.ID, d.Base, d.ConvergenceID), "")

	case WorktreeDiscarded:
		if err = needSub(); err != nil {
			return err
		}
		sa.Discarded = true
		s.log(e, "workspace", sa.ID+"'s worktree discarded", d.Reason)

	case HookRan:
		switch d.Outcome {
		case HookOK, HookBlocked, HookFailed, HookTimeout, HookError:
		default:
			return fail("hook outcome %q is not ok, blocked, failed, timeout or error", d.Outcome)
		}
		// A UserPromptSubmit hook may block a /delegate's task, before any subagent exists.
		if d.Outcome == HookBlocked && (sa == nil && d.HookEvent != "UserPromptSubmit" || !slices.Contains(BlockingHookEvents, d.HookEvent)) {
			return fail("only a %s hook of a subagent (or a UserPromptSubmit hook on a /delegate's task) can block", strings.Join(BlockingHookEvents, ", "))
		}
		if d.TriggerSeq >= e.Seq {
			return fail("trigger_seq %d does not come before the hook's own seq", d.TriggerSeq)
		}
		s.Counters.Hooks++
		outcome := d.Outcome
		if d.Decision != "" && d.Outcome != HookBlocked {
			outcome += " (" + d.Decision + ")"
		}
		ev := d.HookEvent
		if d.Tool != "" {
			ev += " " + d.Tool
		}
		text := fmt.Sprintf("%s hook %s: %s", ev, oneLineHook(d.Command), outcome)
		if sa != nil {
			text = fmt.Sprintf("%s hook %s on %s: %s", ev, oneLineHook(d.Command), sa.ID, outcome)
		}
		switch d.Outcome {
		case HookBlocked:
			s.Counters.HooksBlocked++
		case HookFailed, HookTimeout, HookError:
			s.Counters.HooksFailed++
		}
		// A block changes nothing else here: the reason reaches the subagent as a UserNote.
		s.log(e, "hook", text, d.Reason)

	case VerifyRan:
		switch d.Outcome {
		case VerifyPassed, VerifyFailed, VerifyTimeout, VerifyError:
		default:
			return fail("verify outcome %q is not passed, failed, timeout or error", d.Outcome)
		}
		if (d.Outcome == VerifyPassed) != (d.ExitCode == 0) {
			return fail("verify outcome %s does not match exit code %d", d.Outcome, d.ExitCode)
		}
		if d.Forced && d.Passed() {
			return fail("a verify that passed cannot be forced")
		}
		v := d
		switch cv := s.Convergence(d.Target); {
		case sa != nil && sa.ID == d.Target:
			sa.Verify = &v
		case cv != nil:
			cv.Verify = &v
		default:
			return fail("verify target %q is not a known subagent (with subagent_id) or convergence", d.Target)
		}
		s.Counters.Verifies++
		if !d.Passed() {
			s.Counters.VerifiesFailed++
		}
		s.log(e, "verify", d.Target+" "+d.Measured(), d.Output)
	case WorkspaceTrusted:
		if s.Info.WorkspaceTrust != "untrusted" {
			return fail("the workspace is %q, not untrusted", s.Info.WorkspaceTrust)
		}
		if s.Trusted != nil {
			return fail("the workspace was already trusted at seq %d", s.Trusted.Seq)
		}
		s.Trusted = &TrustedNow{Seq: e.Seq, Applied: d.Applied, Note: d.Note}
		text := "workspace trusted: " + strings.Join(d.Items, "; ")
		if !d.Applied {
			text += " (from the next session: " + d.Note + ")"
		}
		s.log(e, "trust", text, "")

	case RunnerCursor:
		if err = needSub(); err != nil {
			return err
		}
		if sa.Runner == "" {
			return fail("%s was not placed on a runner", sa.ID)
		}
		if d.Job == "" {
			return fail("a runner cursor names no job")
		}
		if d.Job == sa.RunnerJob && d.Seq < sa.RunnerSeq {
			return fail("job %s's cursor goes back from %d to %d", d.Job, sa.RunnerSeq, d.Seq)
		}
		// A --retry's new job, maybe on another runner, starts its own stream: its cursor
		// starts again, and the row names the runner it runs on now.
		sa.RunnerJob, sa.RunnerSeq = d.Job, d.Seq
		if d.Runner != "" {
			sa.Runner = d.Runner
		}

	default:
		// Reached only if a type is added to Types without a rule here; the exhaustiveness
		// test catches that before it ships.
		return fail("no fold rule for %s", e.Type)
	}
	return nil
}

func (s *State) log(e Event, kind, text, detail string) {
	if s.countOnly {
		return // a counting state keeps no log (SetCountOnly)
	}
	s.Log = append(s.Log, LogItem{Seq: e.Seq, Kind: kind, Text: text, Detail: detail, SubagentID: e.SubagentID})
}

func (s *State) typeCounters(agentType string) *TypeCounters {
	tc := s.Counters.ByAgentType[agentType]
	if tc == nil {
		tc = &TypeCounters{}
		s.Counters.ByAgentType[agentType] = tc
	}
	return tc
}

// transcript folds one TranscriptEvent into the subagent's store and, while a monitor handoff
// is open, mirrors each new item into the parent log.
func (s *State) transcript(e *Event, sa *Subagent, d *TranscriptEvent) {
	t, ref := sa.Transcript, s.ref()
	before := t.Len()
	switch d.EventType {
	case TranscriptToken:
		t.extend(e.Seq, TranscriptToken, d.Text, ref)
		sa.StreamedBytes += len(d.Text)
	case TranscriptThinking:
		t.extend(e.Seq, TranscriptThinking, d.Text, ref)
	case TranscriptToolCall:
		t.add(Item{Seq: e.Seq, Kind: d.EventType, Tool: d.Tool, CallID: d.CallID, Args: d.Args}, "", ref)
		sa.ToolCalls++
		s.Counters.ToolCalls++
		sa.CurrentTool, sa.currentCallID = d.Tool, d.CallID
	case TranscriptToolResult:
		t.add(Item{Seq: e.Seq, Kind: d.EventType, Tool: d.Tool, CallID: d.CallID, IsError: d.IsError}, d.Result, ref)
		if sa.currentCallID == d.CallID {
			sa.CurrentTool, sa.currentCallID = "", ""
		}
	case TranscriptPolicyDenied:
		t.add(Item{Seq: e.Seq, Kind: d.EventType, Tool: d.Tool, IsError: true}, d.Reason, ref)
		sa.PolicyDenials++
		s.Counters.PolicyDenials++
	default: // subagent_start, message, error
		t.add(Item{Seq: e.Seq, Kind: d.EventType, IsError: d.EventType == TranscriptError}, d.Text, ref)
		// ACP (agents/acp) ---: a plan message names the step the tree shows.
		if d.EventType == TranscriptMessage && d.Tool == PlanTool {
			sa.PlanStep, _ = d.Args["step"].(string)
		}
		if d.EventType == TranscriptMessage && d.Tool == AgentStateTool {
			sa.AgentState, _ = d.Args["state"].(string)
		}
		// --- ACP
	}
	if t.Len() > before && !s.countOnly {
		if h := s.openHandoff(sa.ID); h != nil && h.Status == HandoffActive && h.Mode == HandoffMonitor {
			s.Log = append(s.Log, LogItem{Seq: e.Seq, Kind: "mirror", SubagentID: sa.ID, Ref: t.Len() - 1})
		}
	}
}

// openHandoff returns the subagent's latest handoff that is not yet resolved, or nil.
func (s *State) openHandoff(id string) *Handoff {
	for i := len(s.Handoffs) - 1; i >= 0; i-- {
		if h := s.Handoffs[i]; h.SubagentID == id {
			if h.Status == HandoffSettled {
				return nil
			}
			return h
		}
	}
	return nil
}

func (s *State) decide(e Event, id string, fail func(string, ...any) error) (*Permission, error) {
	p := s.permissions[id]
	switch {
	case p == nil:
		return nil, fail("unknown permission request %q", id)
	case p.Decision != DecisionPending:
		return nil, fail("permission request %s already %s", id, p.Decision)
	case e.SubagentID != "" && e.SubagentID != p.SubagentID:
		return nil, fail("permission request %s belongs to %s", id, p.SubagentID)
	}
	return p, nil
}

func (s *State) settleRequest(p *Permission) {
	if sa := s.subagents[p.SubagentID]; sa != nil && sa.PendingRequest == p.ID {
		sa.PendingRequest = ""
	}
	if s.forgetDecided {
		delete(s.permissions, p.ID) // SetForgetDecided: nothing refers to it again
	}
}

func (s *State) convergence(id string, fail func(string, ...any) error) (*Convergence, error) {
	if cv := s.convergences[id]; cv != nil {
		return cv, nil
	}
	return nil, fail("unknown convergence %q", id)
}

func (s *State) conflict(cvID, id string, fail func(string, ...any) error) (*Conflict, error) {
	cf := s.conflicts[id]
	if cf == nil {
		return nil, fail("unknown conflict %q", id)
	}
	if cvID != "" && cf.ConvergenceID != cvID {
		return nil, fail("conflict %s belongs to %s, not %s", id, cf.ConvergenceID, cvID)
	}
	return cf, nil
}

// ApplyPlaybook returns book with ops applied, or an error naming the first op that cannot
// apply; book itself is never modified, so a bad batch changes nothing. source names the
// entries' origin (a convergence id).
func ApplyPlaybook(book []PlaybookEntry, ops []PlaybookOp, source string) ([]PlaybookEntry, error) {
	out := slices.Clone(book)
	find := func(id string) int {
		return slices.IndexFunc(out, func(p PlaybookEntry) bool { return p.ID == id })
	}
	for i, op := range ops {
		if op.BulletID == "" {
			return nil, fmt.Errorf("playbook op %d has no bullet_id", i+1)
		}
		at := find(op.BulletID)
		if op.Type != OpAdd && at < 0 && (op.Type == OpUpdate || op.Type == OpTag || op.Type == OpRemove) {
			return nil, fmt.Errorf("playbook op %d (%s) names unknown entry %q", i+1, op.Type, op.BulletID)
		}
		switch op.Type {
		case OpAdd:
			if at >= 0 {
				return nil, fmt.Errorf("playbook op %d adds %q, which exists", i+1, op.BulletID)
			}
			out = append(out, PlaybookEntry{ID: op.BulletID, Section: op.Section, Content: op.Content, Source: source})
		case OpUpdate:
			if op.Section != "" {
				out[at].Section = op.Section
			}
			out[at].Content, out[at].Source = op.Content, source
		case OpTag:
			tags := maps.Clone(out[at].Tags)
			if tags == nil {
				tags = map[string]int{}
			}
			for k, v := range op.Metadata {
				if n, ok := v.(float64); ok {
					tags[k] += int(n)
				} else if n, ok := v.(int); ok {
					tags[k] += n
				}
			}
			out[at].Tags = tags
		case OpRemove:
			out = slices.Delete(out, at, at+1)
		default:
			return nil, fmt.Errorf("playbook op %d: type %q is not ADD, UPDATE, TAG or REMOVE", i+1, op.Type)
		}
	}
	return out, nil
}

// SkipTo accepts a known gap before seq (lines a lenient read skipped), counting it.
func (s *State) SkipTo(seq uint64) {
	s.Counters.Gaps += int(seq - s.LastSeq - 1)
	s.LastSeq = seq - 1
}

// markReview notes when a conflict's review was first asked for.
func (cf *Conflict) markReview(e Event) {
	if cf.ReviewSeq == 0 {
		cf.ReviewSeq, cf.ReviewAt = e.Seq, e.TS
	}
}

// plainID reports whether an id is free of control characters, line breaks and characters
// that reorder or hide text.
func plainID(id string) bool {
	for _, r := range id {
		if r < 0x20 || r >= 0x7f && r < 0xa0 || invisible(r) {
			return false
		}
	}
	return true
}

// start folds a session's start (SessionStarted, or SessionForked's own start).
func (s *State) start(e Event, d SessionStarted) {
	s.Started, s.SessionID, s.Info, s.StartedAt = true, e.SessionID, d, e.TS
	s.subagents = map[string]*Subagent{}
	s.convergences = map[string]*Convergence{}
	s.conflicts = map[string]*Conflict{}
	s.permissions = map[string]*Permission{}
	s.Counters.Events = map[Type]int{}
	s.Counters.Outcomes = map[string]int{}
	s.Counters.ByAgentType = map[string]*TypeCounters{}
}

// oneLineHook is a hook's command for a log line: its first line, at most 60 characters.
func oneLineHook(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if i := strings.IndexByte(cmd, '\n'); i >= 0 {
		cmd = cmd[:i] + " …"
	}
	if r := []rune(cmd); len(r) > 60 {
		cmd = string(r[:59]) + "…"
	}
	return "`" + cmd + "`"
}
