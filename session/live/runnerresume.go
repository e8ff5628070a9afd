package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/gitws"
	"github.com/summit-dev/summit/session/runners"
)

// Reattaching placed subagents after a restart (issue 29 item 8). The cursor of a placed
// subagent's job stream is event-sourced: RunnerCursor{job, runner, seq} is recorded when the
// job is placed and with every event folded from the stream, in the same write call as that
// event (emitFromRunner: the recorder's Hold/Release), so the recording says exactly how far
// the stream is folded, whatever instant the session was killed at. `summit resume FILE`
// folds the recording, appends to it (record.ReopenRecorderFile) and reattaches every placed
// subagent that has not stopped: it follows its job's stream again from the recorded cursor
// (nothing folded twice, nothing dropped), answers its permission requests (an undecided
// one is matched with the runner's request by the stream's order) and watches its runner's
// lease as runJob does, keeps its grants for the whole subagent, and with --retry places it
// again from its base when its runner dies (placeOnRunners, as runOnRunner). What ran here
// stops: local subagents as failures naming the restart (/retry runs them again),
// convergences and handoffs as interrupted, as in a fork.

// ResumeStart is a session restarted on its own recording: State is its fold (with text),
// and Options.Recorder appends to the same file.
type ResumeStart struct {
	State *session.State
	// Closing are the events that close what ran here (fork.Close), recorded first.
	Closing []session.Event
}

// Reattachable are the subagents of st that run on a runner and have not stopped, with the
// runner and job each runs as ("sa-1 on gpu-1 as job JOB").
func Reattachable(st *session.State) []string {
	var out []string
	for _, sa := range st.Subagents {
		if reattachable(sa) {
			out = append(out, fmt.Sprintf("%s on %s as job %s", sa.ID, sa.Runner, sa.RunnerJob))
		}
	}
	return out
}

func reattachable(sa *session.Subagent) bool {
	return !sa.Terminal() && sa.Runner != "" && sa.RunnerJob != ""
}

// emitFromRunner records d, an event folded from a runner's job stream, and cur after it with
// one write call, then shows both: a kill leaves both on disk or neither. A delta that stream
// redaction holds back records nothing now, and no cursor: the event that releases it (the
// runner's next, or a note of this session about the subagent) records it and this cursor.
func (x *Orchestrator) emitFromRunner(subagentID string, d session.Data, cur session.RunnerCursor) error {
	x.emitMu.Lock()
	defer x.emitMu.Unlock()
	_, err := x.emitWithCursor(subagentID, d, cur)
	return err
}

// emitWithCursor is emitFromRunner with x.emitMu held; it returns d's event (zero when held).
func (x *Orchestrator) emitWithCursor(subagentID string, d session.Data, cur session.RunnerCursor) (session.Event, error) {
	rec := x.o.Recorder
	if rec != nil {
		if err := rec.Hold(); err != nil {
			return session.Event{}, err
		}
	}
	x.batching = true
	ev, err := x.emitHeld(subagentID, d)
	if err == nil && len(x.batch) > 0 {
		delete(x.heldCursors, subagentID)
		_, err = x.emitOne(subagentID, cur)
	} else if err == nil {
		if x.heldCursors == nil {
			x.heldCursors = map[string]session.RunnerCursor{}
		}
		x.heldCursors[subagentID] = cur
	}
	x.batching = false
	evs := x.batch
	x.batch = nil
	if rec != nil {
		if rerr := rec.Release(); rerr != nil {
			x.mu.Lock()
			if x.err == nil {
				x.err = fmt.Errorf("recording: %w", rerr)
			}
			x.mu.Unlock()
			return ev, rerr
		}
	}
	if err != nil {
		return ev, err
	}
	for _, e := range evs {
		if x.o.OnEvent != nil {
			x.o.OnEvent(e)
		}
		if x.o.Hooks != nil {
			x.afterEvent(e)
		}
	}
	return ev, nil
}

// startResume takes the recording's state over, closes what ran here and reattaches the
// placed subagents (x.mu is not held; nothing else runs yet).
func (x *Orchestrator) startResume() error {
	r := x.o.Resume
	st := r.State
	if st.SessionID != x.o.SessionID {
		return fmt.Errorf("resume: the recording is session %s, not %s", st.SessionID, x.o.SessionID)
	}
	if st.Ended {
		return errors.New("resume: the session has ended; summit fork continues an ended session")
	}
	var placed []*session.Subagent
	for _, sa := range st.Subagents {
		if reattachable(sa) {
			placed = append(placed, sa)
		}
	}
	if len(placed) > 0 && x.o.Runners == nil {
		// Stopping them here would lose them for good (a stop is final): refuse instead.
		return fmt.Errorf("resume: %s still run on runners; reattaching needs NATS: resume with --nats URL (or runners: {nats: URL} in the user config)", strings.Join(Reattachable(st), ", "))
	}
	if ts := x.state.TextStore(); ts != nil {
		st.SetTextStore(ts)
	}
	x.mu.Lock()
	x.state = st
	x.nextPR = len(st.Permissions)
	// A grant for the whole subagent (/approve --scope subagent) answers its later requests of
	// that tool: the recording holds it, and the reattached subagent keeps it.
	for _, p := range st.Permissions {
		if sa := st.Subagent(p.SubagentID); sa != nil && reattachable(sa) &&
			p.Decision == session.DecisionGranted && p.Scope == commands.ScopeSubagent {
			if x.grants[p.SubagentID] == nil {
				x.grants[p.SubagentID] = map[string]bool{}
			}
			x.grants[p.SubagentID][p.Tool] = true
		}
	}
	x.mu.Unlock()
	for _, e := range r.Closing {
		d := e.Data
		if stop, ok := d.(session.SubagentStop); ok && stop.Outcome == session.OutcomeInterrupted {
			// "interrupted" is a fork's word (only a fork records it): here the summit that ran
			// it died under it, which is a failure, as a killed runner's subagent's is.
			why := fmt.Sprintf("the summit that ran %s stopped before it ended (the session was resumed on its recording); /retry %s runs its task again", e.SubagentID, e.SubagentID)
			if _, err := x.emit(e.SubagentID, session.SubagentError{Error: why, Attempt: 1, Context: "resume"}); err != nil {
				return err
			}
			stop.Outcome = session.OutcomeFailure
			d = stop
		}
		if _, err := x.emit(e.SubagentID, d); err != nil {
			return err
		}
	}
	x.mu.Lock()
	for _, sa := range st.Subagents {
		n, _ := strconv.Atoi(strings.TrimPrefix(sa.ID, "sa-"))
		s := &sub{id: sa.ID, n: n, ctx: x.ctx, stopCtx: func() {}, slot: x.clock.NewEvent(), stopped: x.clock.NewEvent(),
			arrived: x.clock.NewEvent(), clock: x.clock, outcome: sa.Outcome, runner: sa.Runner}
		s.slot.Fire()
		if !slices.Contains(placed, sa) {
			s.stopped.Fire()
		}
		x.subs[sa.ID] = s
	}
	x.mu.Unlock()
	for _, sa := range placed {
		x.reattach(sa)
	}
	return nil
}

// reattach follows a placed subagent's job again from its recorded cursor, to its end.
func (x *Orchestrator) reattach(sa *session.Subagent) {
	x.mu.Lock()
	s := x.subs[sa.ID]
	s.ctx, s.stopCtx = context.WithCancel(x.ctx)
	s.cmd = commands.Delegate{Task: sa.Task, AgentType: sa.AgentType, Timeout: sa.TimeoutS, On: sa.RunnerOn,
		Retry: sa.RunnerRetry, PermissionMode: sa.PermissionMode, Tools: sa.Tools, InheritContext: sa.InheritContext}
	if s.cmd.On == "" { // a recording from before runner_on: where it runs
		s.cmd.On = sa.Runner
	}
	s.def, _ = x.agentDef(sa.AgentType)
	// The policy as recorded (after the ceiling, and a bypass approved since): a --retry's
	// next job carries it.
	s.policy = agents.Policy{Mode: agents.PermissionMode(sa.PermissionMode), Tools: slices.Clone(sa.Tools)}
	x.running++
	var pending []*session.Permission
	for _, p := range x.state.Permissions {
		if p.SubagentID == sa.ID && p.Decision == session.DecisionPending {
			pending = append(pending, p)
		}
	}
	job, after, name := sa.RunnerJob, sa.RunnerSeq, sa.Runner
	start := sa.ActiveAt
	if start.IsZero() {
		start = sa.SpawnedAt
	}
	iso := sa.Isolation
	x.mu.Unlock()
	x.clock.Go(func() {
		defer s.stopped.Fire()
		if iso != nil {
			// The change set comes home into a worktree of the recorded base (a new one:
			// the killed session's is not this session's to reuse).
			if err := x.reisolate(s, iso); err != nil {
				msg := "no isolated worktree for the runner's change set: " + err.Error()
				_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: msg})
			}
		}
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
			Text: fmt.Sprintf("reattached to job %s on runner %s after the session restarted (from stream sequence %d)", job, name, after+1)})
		// Its timeout counts from when it became active, as before the restart: the time the
		// session was down is spent (the follow then cancels the job, and finish records it).
		if s.cmd.Timeout > 0 {
			AfterFunc(x.clock, s.ctx, max(0, start.Add(time.Duration(s.cmd.Timeout)*time.Second).Sub(x.clock.Now())), func() {
				s.mu.Lock()
				if s.why == "" {
					s.timedOut = true
				}
				s.mu.Unlock()
				s.stopCtx()
			})
		}
		// The runner's model calls come to this session again (a job whose models were the
		// killed session's: the runner's calls failed with no responders while it was down).
		// serveModels records no second ModelRouted: the recording has the first.
		spec := runners.Job{ID: job}
		stopModels, err := x.serveModels(s, &spec)
		if err != nil {
			_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError,
				Text: fmt.Sprintf("runner %s: serving job %s's model calls again: %v", name, job, err)})
		}
		defer stopModels()
		ctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		res, gone := x.followJob(ctx, s, x.o.Runners, name, job, spec.Models, after, pending)
		if gone != nil && s.cmd.Retry {
			// As runOnRunner does: placed again on another runner, from its base.
			_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: gone.Error() + "; --retry places it again from its base"})
			cancel()
			stopModels()
			timeout := time.Duration(s.cmd.Timeout) * time.Second
			if timeout <= 0 {
				timeout = commands.DefaultDelegateTimeout * time.Second
			}
			res = x.placeOnRunners(s, start.Add(timeout), "", []string{name})
		} else if gone != nil {
			_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: gone.Error()})
			_, _ = x.emit(s.id, session.SubagentError{Error: gone.Error(), Attempt: 1, Context: "runner"})
			res = runtime.Result{Outcome: session.OutcomeFailure, Err: gone, Tokens: res.Tokens, ToolCalls: res.ToolCalls}
		}
		x.finish(s, res, start)
	})
}

// reisolate gives a reattached subagent a worktree of its recorded base, for its result.
func (x *Orchestrator) reisolate(s *sub, iso *session.SubagentIsolated) error {
	r, err := x.repo()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	wt, err := r.AddWorktree(ctx, gitws.Base{ID: iso.Base, Commit: iso.BaseCommit}, s.id)
	if err != nil {
		return err
	}
	s.wt = wt
	return nil
}

// rewire makes a resumed session's undecided request that matches the runner's request d (the
// first undecided one of the same tool and reason, in order) answer the runner again.
func (m *runnerMirror) rewire(d session.PermissionRequested) {
	for i, p := range m.pending {
		if p.Tool != d.Tool || p.Reason != d.Reason {
			continue
		}
		m.pending = slices.Delete(m.pending, i, i+1)
		x := m.x
		r := &request{id: p.ID, s: m.s, tool: p.Tool, ev: x.clock.NewEvent()}
		x.mu.Lock()
		x.requests[r.id] = r
		x.mu.Unlock()
		go m.answer(d.RequestID, r)
		return
	}
}
