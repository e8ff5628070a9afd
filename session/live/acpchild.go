package live

import (
	"context"
	"fmt"

	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// An external agent's own subagents (ACP child sessions, agents/acp/child.go) are summit
// subagents under the subagent the agent runs as: SubagentSpawned with parent_subagent_id,
// never queued (they take no slot: their agent already has one), then SubagentActive, their
// transcript and permission requests like any subagent's, and one SubagentStop when the
// agent says how their work ended or, at the latest, when their parent's run ends. They share
// the parent's worktree and policy, so they have no changes of their own; the user can
// /cancel one when its agent allows it, and cannot hand off to it (it takes no input).

// acpChildRef is what a child's sub knows about its agent.
type acpChildRef struct {
	parent string // summit id of the subagent it runs under
	info   acp.ChildInfo
	// done ends the child's context without asking its agent anything: End runs while the
	// agent's client holds its lock, which ChildInfo.Cancel takes.
	done context.CancelFunc
}

// acpChild records a child the agent of root announced, under root or under one of root's
// children, and returns where its events go.
func (x *Orchestrator) acpChild(root *sub, ci acp.ChildInfo) (acp.ChildSink, error) {
	parent := root
	if ci.Parent != "" {
		x.mu.Lock()
		parent = x.subs[ci.Parent]
		x.mu.Unlock()
		if parent == nil {
			return acp.ChildSink{}, fmt.Errorf("its parent %s is not a subagent", ci.Parent)
		}
	}
	role := oneLine(ci.Role, 60)
	name := oneLine(ci.Name, 60)
	if name == "" {
		name = role
	}
	if name == "" {
		name = "subagent"
	}
	agentType := root.cmd.AgentType + "/" + name
	if role != "" && role != name {
		agentType = root.cmd.AgentType + "/" + role
	}
	def := *root.def
	def.Name = name
	task := ci.Role
	if ci.Name != "" && ci.Role != "" && ci.Name != ci.Role {
		task = ci.Name + ": " + ci.Role
	} else if task == "" {
		task = ci.Name
	}

	x.mu.Lock()
	n := max(len(x.state.Subagents), len(x.subs)) + 1
	id := fmt.Sprintf("sa-%d", n)
	ctx, cancel := context.WithCancel(parent.ctx)
	s := &sub{id: id, n: n, def: &def, policy: parent.policy, ctx: ctx, clock: x.clock,
		cmd:  commands.Delegate{AgentType: agentType, Task: task, Timeout: root.cmd.Timeout},
		slot: x.clock.NewEvent(), stopped: x.clock.NewEvent(), arrived: x.clock.NewEvent(),
		child: &acpChildRef{parent: parent.id, info: ci, done: cancel}}
	// Cancelling a child asks its agent (which reports how it ended) and ends what it waits
	// for from the user (a pending permission request answers cancelled, as ACP asks).
	s.stopCtx = func() {
		if ci.Cancel != nil {
			ci.Cancel()
		}
		cancel()
	}
	s.slot.Fire()
	x.subs[id] = s
	x.mu.Unlock()

	spawned := session.SubagentSpawned{
		AgentType: agentType, AgentName: name, ParentSessionID: x.o.SessionID, ParentSessionRef: x.o.SessionID,
		PermissionMode: string(parent.policy.Mode), Tools: parent.policy.Tools, TaskDescription: task,
		TimeoutS: root.cmd.Timeout, SubagentSessionID: x.o.SessionID + "/" + id,
		ParentSubagentID: parent.id, AgentSessionID: ci.SessionID,
	}
	if _, err := x.emit(id, spawned); err != nil {
		cancel()
		return acp.ChildSink{}, err
	}
	_, _ = x.emit(id, session.TranscriptEvent{EventType: session.TranscriptStart, Text: task})
	_, _ = x.emit(id, session.SubagentActive{InitialState: "running"})
	return acp.ChildSink{
		ID:   id,
		Emit: func(d session.Data) error { _, err := x.emit(id, d); return err },
		Approve: func(_ context.Context, tool string, args map[string]any, reason string) (acp.Grant, error) {
			return x.acpApprove(s, tool, args, reason)
		},
		End: func(outcome, why, text string, toolCalls int) {
			x.endACPChild(s, outcome, why, text, toolCalls)
		},
	}, nil
}

// endACPChild records how a child ended: its cause, then SubagentStop.
func (x *Orchestrator) endACPChild(s *sub, outcome, why, text string, toolCalls int) {
	s.mu.Lock()
	userWhy := s.why
	s.mu.Unlock()
	switch outcome {
	case session.OutcomeFailure:
		_, _ = x.emit(s.id, session.SubagentError{Error: why, Attempt: 1, Context: "its agent's subagent"})
	case session.OutcomeCancelled:
		if userWhy != "" {
			why = userWhy
		}
		_, _ = x.emit(s.id, session.SubagentCancelled{Reason: why})
	case session.OutcomeDisconnected:
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "outcome unknown: " + why})
	}
	capsule := acpCapsule(text, s.def.Name, nil)
	_, _ = x.emit(s.id, session.SubagentStop{Outcome: outcome, Capsule: capsule, ToolInvocationCount: toolCalls,
		ArtifactPaths: []string{}, DurationMS: x.childDuration(s)})
	s.mu.Lock()
	s.outcome = outcome
	s.mu.Unlock()
	x.mu.Lock()
	delete(x.grants, s.id)
	x.mu.Unlock()
	s.child.done()
	s.stopped.Fire()
}

// childDuration is how long a child ran, from its folded start.
func (x *Orchestrator) childDuration(s *sub) int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if sa := x.state.Subagent(s.id); sa != nil && !sa.SpawnedAt.IsZero() {
		return x.clock.Now().Sub(sa.SpawnedAt).Milliseconds()
	}
	return 0
}
