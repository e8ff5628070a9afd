package live

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/hooks"
)

// Hooks (session/hooks): the user's commands on session events.
//
// Every hook but a native subagent's SubagentStop runs off the serialising path: the event is
// recorded and folded first, then its hooks run one after another as a clock participant, and
// each one's HookRan is recorded when it finishes. So a hook never holds up the fold or the
// UI; under a SimClock the participant runs them in a deterministic place.
//
// A subagent summit runs itself (the runtime loop) runs its SubagentStop hooks before the stop,
// when the model ends with a final message (runtime.Config.BeforeStop): a hook that blocks
// sends its reason back as a UserNote to the subagent, which takes another turn. At most
// Runner.MaxBlocks blocks per subagent; past that a block is recorded as failed and the stop
// proceeds. When the hooks let it stop, they are not run again for its SubagentStop. An ACP
// agent's run does the same when its prompt turn ends with nothing more to send (acp.go): a
// block's reason is its next prompt.
//
// SessionEnded hooks run as the session ends, after the hooks in flight, and each HookRan is
// recorded just before SessionEnded (nothing may follow it). Close waits for the hooks in
// flight first, except when the session ends on a signal or an error: then they are killed.

// afterEvent starts the hooks of a recorded event. Called by emitOne with emitMu held.
func (x *Orchestrator) afterEvent(ev session.Event) {
	r := x.o.Hooks
	name := hooks.EventName(ev.Type)
	if !r.Any(name) || name == "SessionEnded" {
		return
	}
	in, dir, s := x.hookInput(name, ev.SubagentID)
	if ev.Type == session.TypeSubagentStop && s != nil {
		s.mu.Lock()
		ran := s.stopHooksRan
		s.mu.Unlock()
		if ran {
			return // its SubagentStop hooks ran before the stop and let it stop
		}
	}
	list := r.Matching(name, in.AgentType, in.AgentName)
	if len(list) == 0 {
		return
	}
	payload, err := in.Marshal(ev)
	if err != nil {
		return
	}
	done := x.clock.NewEvent()
	x.hookMu.Lock()
	x.hookRuns = append(x.hookRuns, done)
	x.hookMu.Unlock()
	x.clock.Go(func() {
		defer done.Fire()
		for _, h := range list {
			res := r.Run(x.hookCtx, h, dir, payload, false)
			if _, err := x.emit(ev.SubagentID, res.Event(h, name, ev.Seq)); err != nil {
				return
			}
		}
	})
}

// hookInput is the stdin payload's context for an event about subagent id ("" = none), the
// directory its hooks run in, and the subagent. Hooks always run in the main workspace, even
// for an isolated subagent (its worktree is in the payload): a relative command such as
// ./scripts/check.sh, or a Makefile it runs, must be the trusted workspace's, never the copy
// the subagent could rewrite in its worktree.
func (x *Orchestrator) hookInput(name, id string) (hooks.Input, string, *sub) {
	root := x.sandbox.Root()
	in := hooks.Input{HookEvent: name, SessionID: x.o.SessionID, Workspace: root, Cwd: root, SubagentID: id}
	if id == "" {
		return in, root, nil
	}
	x.mu.Lock()
	s := x.subs[id]
	if sa := x.state.Subagent(id); sa != nil {
		in.AgentType, in.AgentName = sa.AgentType, sa.AgentName
	}
	x.mu.Unlock()
	if s != nil && s.sandbox != nil && s.sandbox.Root() != root {
		in.Worktree = s.sandbox.Root()
	}
	return in, root, s
}

// stopHooks runs a native subagent's SubagentStop hooks when its model ended with final (the
// runtime's BeforeStop). It returns the text of a new user message when a hook blocked the
// stop, "" to let it stop.
func (x *Orchestrator) stopHooks(ctx context.Context, s *sub, final string) (string, error) {
	r := x.o.Hooks
	const name = "SubagentStop"
	in, dir, _ := x.hookInput(name, s.id)
	list := r.Matching(name, in.AgentType, in.AgentName)
	if len(list) == 0 {
		return "", nil
	}
	capsule := protocols.ParseCapsule(final, s.def.Name)
	outcome := session.OutcomeSuccess
	if capsule.Status == "failure" {
		outcome = session.OutcomeFailure
	}
	s.mu.Lock()
	blocks := s.hookBlocks
	s.mu.Unlock()
	active := blocks > 0
	in.Outcome, in.LastMessage, in.CapsuleSummary = outcome, final, capsule.Summary
	in.StopHookActive, in.BlockCount, in.MaxBlocks = &active, &blocks, r.MaxBlocks()
	// The stop summit is about to record, as the hook would see it once recorded (seq 0).
	ev := session.New(s.id, session.SubagentStop{Outcome: outcome, Capsule: &capsule, ArtifactPaths: []string{}})
	ev.SessionID, ev.TS = x.o.SessionID, x.clock.Now().UTC()
	payload, err := in.Marshal(ev)
	if err != nil {
		return "", err
	}
	var reasons []string
	for _, h := range list {
		res := r.Run(ctx, h, dir, payload, true)
		if res.Outcome == session.HookBlocked && blocks >= r.MaxBlocks() {
			res.Outcome = session.HookFailed
			res.Reason = fmt.Sprintf("asked to block the stop again, but the stop was already blocked %s, the most hooks.max_blocks allows: it stops now. The hook said: %s",
				session.Plural(blocks, "time"), res.Reason)
		}
		if _, err := x.emit(s.id, res.Event(h, name, 0)); err != nil {
			return "", err
		}
		if res.Outcome == session.HookBlocked {
			reasons = append(reasons, res.Reason)
		}
	}
	if len(reasons) == 0 || ctx.Err() != nil {
		s.mu.Lock()
		s.stopHooksRan = ctx.Err() == nil
		s.mu.Unlock()
		return "", ctx.Err()
	}
	text := strings.Join(reasons, "\n\n")
	if _, err := x.emit(s.id, session.UserNote{Text: text}); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.hookBlocks++
	s.mu.Unlock()
	return text, nil
}

// waitHooks waits until no hook runs (kill: their context ends first, which kills them).
func (x *Orchestrator) waitHooks(kill bool) {
	if kill {
		x.hookStop()
	}
	for {
		x.hookMu.Lock()
		runs := x.hookRuns
		x.hookRuns = nil
		x.hookMu.Unlock()
		if len(runs) == 0 {
			return
		}
		for _, ev := range runs {
			_ = ev.Wait(context.Background())
		}
	}
}

// sessionEndedHooks runs the SessionEnded hooks as the session ends, one after another, and
// records each HookRan before the SessionEnded itself (nothing may follow it). Their stdin is
// the SessionEnded about to be recorded, with the seq it will have; their HookRan's
// trigger_seq is 0: the end that follows. On a signal or an error they run killed at once.
func (x *Orchestrator) sessionEndedHooks(end session.SessionEnded, kill bool) {
	r := x.o.Hooks
	if !r.Any("SessionEnded") {
		return
	}
	list := r.Matching("SessionEnded", "", "")
	if len(list) == 0 {
		return
	}
	in, dir, _ := x.hookInput("SessionEnded", "")
	x.mu.Lock()
	ev := session.New("", end)
	ev.Seq, ev.SessionID = x.state.LastSeq+uint64(len(list))+1, x.o.SessionID
	x.mu.Unlock()
	ev.TS = x.clock.Now().UTC().Truncate(time.Microsecond)
	payload, err := in.Marshal(ev)
	if err != nil {
		return
	}
	ctx := context.Background()
	if kill {
		ctx = x.hookCtx
	}
	for _, h := range list {
		res := r.Run(ctx, h, dir, payload, false)
		if _, err := x.emit("", res.Event(h, "SessionEnded", 0)); err != nil {
			return
		}
	}
}
