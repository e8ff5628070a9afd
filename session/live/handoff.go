package live

import (
	"context"
	"fmt"
	"time"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// handoff is an open /handoff.
type handoff struct {
	s       *sub
	cmd     commands.Handoff
	settled *Event // fired after HandoffResolved (or when the session ends first)
}

// handoff checks a /handoff and opens it: HandoffInitiated now, then a watcher participant
// that records HandoffComplete when the subagent stops (or the handoff times out) and
// HandoffResolved after the --on-failure action.
func (x *Orchestrator) handoff(line string, c commands.Handoff) (Reply, error) {
	x.mu.Lock()
	s := x.subs[c.SubagentID]
	sa := x.state.Subagent(c.SubagentID)
	open := x.handoffs[c.SubagentID]
	control := x.state.Control
	ids := x.subIDs()
	// The folded subagent changes under mu: read what the checks need while it is held.
	terminal, status := sa != nil && sa.Terminal(), ""
	if sa != nil {
		status = sa.Status
	}
	x.mu.Unlock()
	switch {
	case s == nil || sa == nil:
		return x.rejectf(line, c, "unknown subagent %s%s", c.SubagentID, didYouMean(c.SubagentID, ids))
	case terminal:
		return x.rejectf(line, c, "%s has already stopped (%s); its result is in /status %s", sa.ID, status, sa.ID)
	case open != nil:
		return x.rejectf(line, c, "%s already has a handoff open", sa.ID)
	case s.child != nil:
		return x.rejectf(line, c, "%s is a subagent its agent started itself, under %s: it takes no input from summit; hand off to %s",
			sa.ID, s.child.parent, s.child.parent)
	case c.TransferControl && control != "":
		return x.rejectf(line, c, "control is already with %s; wait for it to end", control)
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	if err := x.openHandoff(s, c); err != nil {
		return Reply{}, err
	}
	mode := "monitoring"
	if c.TransferControl {
		mode = "control is with " + s.id + "; plain input goes to it"
	}
	return Reply{Output: fmt.Sprintf("handoff to %s (%s)", s.id, mode)}, nil
}

func (x *Orchestrator) openHandoff(s *sub, c commands.Handoff) error {
	mode := session.HandoffMonitor
	if c.TransferControl {
		mode = session.HandoffTransferControl
	}
	h := &handoff{s: s, cmd: c, settled: x.clock.NewEvent()}
	x.mu.Lock()
	x.handoffs[s.id] = h
	x.mu.Unlock()
	_, err := x.emit(s.id, session.HandoffInitiated{ParentSessionID: x.o.SessionID, HandoffMode: mode,
		TimeoutS: c.Timeout, OnFailure: c.OnFailure})
	if err != nil {
		return err
	}
	x.clock.Go(func() { x.watch(h) })
	return nil
}

// watch follows one handoff to its resolution.
func (x *Orchestrator) watch(h *handoff) {
	s := h.s
	defer h.settled.Fire()
	ctx, cancel := context.WithCancel(x.ctx)
	defer cancel()
	expired := x.clock.NewEvent()
	AfterFunc(x.clock, ctx, time.Duration(h.cmd.Timeout)*time.Second, func() { expired.Fire(); cancel() })
	stopped := s.stopped.Wait(ctx) == nil
	outcome := session.OutcomeTimeout
	if stopped {
		s.mu.Lock()
		outcome = s.outcome
		s.mu.Unlock()
	} else if !expired.Fired() {
		return // the session is ending; Close cancels the subagent and records its stop
	}
	if _, err := x.emit(s.id, session.HandoffComplete{Outcome: outcome}); err != nil {
		return
	}
	resolved := session.HandoffResolved{Outcome: outcome, Action: "none"}
	if outcome != session.OutcomeSuccess {
		resolved.Action = h.cmd.OnFailure
		switch h.cmd.OnFailure {
		case commands.OnFailureRetry, commands.OnFailureAbort:
			if !stopped {
				s.cancel("handoff " + h.cmd.OnFailure + ": the handoff timed out after " + fmt.Sprint(h.cmd.Timeout) + "s")
				_ = s.stopped.Wait(x.ctx)
			}
		}
	}
	x.mu.Lock()
	if sa := x.state.Subagent(s.id); sa != nil {
		resolved.Artifacts = append([]string{}, sa.ArtifactPaths...)
	}
	x.mu.Unlock()
	if resolved.Artifacts == nil {
		resolved.Artifacts = []string{}
	}
	var retry *sub
	if resolved.Action == commands.OnFailureRetry {
		var err error
		if retry, err = x.spawn(s.cmd); err != nil {
			return
		}
		resolved.RetrySubagentID = retry.id
	}
	if _, err := x.emit(s.id, resolved); err != nil {
		return
	}
	x.mu.Lock()
	delete(x.handoffs, s.id)
	x.mu.Unlock()
	if retry != nil {
		// The task runs once more under a handoff of the same mode; if that fails too, it
		// stops there (abort), so a retry never loops.
		again := h.cmd
		again.SubagentID, again.OnFailure = retry.id, commands.OnFailureAbort
		_ = x.openHandoff(retry, again)
	}
}
