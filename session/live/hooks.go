package live

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/commands"
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
	x.notify(ev)
	name := hooks.EventName(ev.Type)
	if name == "" || name == "SessionEnded" {
		return
	}
	in, dir, s := x.hookInput(name, ev.SubagentID)
	if ev.Type == session.TypeSubagentStop && s != nil {
		s.mu.Lock()
		ran := s.stopHooksRan
		s.mu.Unlock()
		if ran {
			return // its SubagentStop (and Stop) hooks ran before the stop and let it stop
		}
	}
	if ev.Type == session.TypeSubagentStop && x.topLevel(ev.SubagentID) {
		// Stop is Claude Code's main agent ending its turn: summit's user talks to the
		// subagents they delegate to, so those stops run it. Here after the fact (an ACP
		// agent's child, a remote run): it cannot block.
		if list := r.Matching("Stop", in.AgentType, in.AgentName); len(list) > 0 {
			sin := in
			sin.HookEvent = "Stop"
			x.runObserved(list, "Stop", ev, sin, dir)
		}
	}
	if !r.Any(name) {
		return
	}
	if list := r.Matching(name, in.AgentType, in.AgentName); len(list) > 0 {
		x.runObserved(list, name, ev, in, dir)
	}
}

// topLevel reports whether subagent id is one the user delegated to (no parent subagent):
// the counterpart of Claude Code's main agent for the Stop event.
func (x *Orchestrator) topLevel(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	sa := x.state.Subagent(id)
	return sa != nil && sa.Parent == ""
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
	in, dir, _ := x.hookInput("SubagentStop", s.id)
	type named struct {
		h    provider.Hook
		name string
	}
	var list []named
	for _, h := range r.Matching("SubagentStop", in.AgentType, in.AgentName) {
		list = append(list, named{h, "SubagentStop"})
	}
	if x.topLevel(s.id) { // Stop: a subagent the user delegated to ends its turn (afterEvent)
		for _, h := range r.Matching("Stop", in.AgentType, in.AgentName) {
			list = append(list, named{h, "Stop"})
		}
	}
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
	var reasons []string
	for _, n := range list {
		h, name := n.h, n.name
		in.HookEvent = name
		payload, err := in.Marshal(ev)
		if err != nil {
			return "", err
		}
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
	// SessionEnd is Claude Code's name for the same moment; its hooks run after summit's.
	ended, end2 := r.Matching("SessionEnded", "", ""), r.Matching("SessionEnd", "", "")
	n := len(ended) + len(end2)
	if n == 0 {
		return
	}
	x.mu.Lock()
	ev := session.New("", end)
	ev.Seq, ev.SessionID = x.state.LastSeq+uint64(n)+1, x.o.SessionID
	x.mu.Unlock()
	ev.TS = x.clock.Now().UTC().Truncate(time.Microsecond)
	ctx := context.Background()
	if kill {
		ctx = x.hookCtx
	}
	for _, group := range []struct {
		name string
		list []provider.Hook
	}{{"SessionEnded", ended}, {"SessionEnd", end2}} {
		in, dir, _ := x.hookInput(group.name, "")
		in.Reason = end.Reason
		payload, err := in.Marshal(ev)
		if err != nil {
			return
		}
		for _, h := range group.list {
			res := r.Run(ctx, h, dir, payload, false)
			if _, err := x.emit("", res.Event(h, group.name, 0)); err != nil {
				return
			}
		}
	}
}

// Tool hooks (PreToolUse, PostToolUse, PostToolUseFailure) run on the subagent's own
// goroutine, in the call's path: a PreToolUse decision must be known before the policy's
// verdict is acted on, and a PostToolUse note must reach the model with the result. Each
// HookRan (with its tool) is recorded as the hook ends.

// toolHookInput is a tool event's stdin payload for subagent s's call.
func (x *Orchestrator) toolHookInput(name string, s *sub, callID, tool string, args map[string]any) (hooks.Input, string) {
	in, dir, _ := x.hookInput(name, s.id)
	in.ToolName, in.ToolAlias, in.ToolUseID = tool, hooks.ClaudeName(tool), callID
	in.ToolInput = hooks.ToolInput(args, x.sandboxOf(s).Root())
	in.PermissionMode = string(s.policy.Mode)
	if in.PermissionMode == "" {
		in.PermissionMode = "default"
	}
	return in, dir
}

// preToolUse runs the PreToolUse hooks that match tool before subagent s's call, one after
// another, each recorded; the first deny ends the run. It returns "deny" with the hook's
// reason (recorded as a permission request the hook denied), "ask", "allow" or "" (no hook
// decided). The caller combines it with the policy: never wider.
func (x *Orchestrator) preToolUse(ctx context.Context, s *sub, callID, tool string, args map[string]any) (string, string, error) {
	r := x.o.Hooks
	list := r.MatchingTool("PreToolUse", tool)
	if len(list) == 0 {
		return "", "", nil
	}
	in, dir := x.toolHookInput("PreToolUse", s, callID, tool, args)
	payload, err := in.Marshal(session.Event{})
	if err != nil {
		return "", "", err
	}
	decision, reason := "", ""
	for _, h := range list {
		res := r.RunAs(ctx, h, hooks.PreTool, dir, payload)
		ev := res.Event(h, "PreToolUse", 0)
		ev.Tool = tool
		if _, err := x.emit(s.id, ev); err != nil {
			return "", "", err
		}
		switch {
		case res.Decision == "deny":
			return "deny", res.Reason, x.hookDenied(s, tool, args, h, res.Reason)
		case res.Decision == "ask" || res.Decision == "allow" && decision == "":
			decision, reason = res.Decision, res.Reason
		}
	}
	return decision, reason, ctx.Err()
}

// hookDenied records a call a PreToolUse hook denied as a permission request decided at
// once (as refuseUnanswerable does): the permission record shows every refused call.
func (x *Orchestrator) hookDenied(s *sub, tool string, args map[string]any, h provider.Hook, reason string) error {
	x.mu.Lock()
	x.nextPR++
	r := &request{id: fmt.Sprintf("pr-%d", x.nextPR), s: s, tool: tool, ev: x.clock.NewEvent(), settled: true, reason: reason}
	x.requests[r.id] = r
	x.mu.Unlock()
	if _, err := x.emit(s.id, session.PermissionRequested{RequestID: r.id, Tool: tool, Args: args, Reason: "a PreToolUse hook decides"}); err != nil {
		return err
	}
	_, err := x.emit(s.id, session.PermissionDenied{RequestID: r.id, Reason: reason, By: "PreToolUse hook `" + oneLine(h.Command, 80) + "`"})
	return err
}

// postToolUse runs the PostToolUse hooks that match tool after subagent s's call ran (and
// PostToolUseFailure's when it failed). It returns the note for the model: the hooks'
// additionalContext and the reasons of those that blocked (the call already ran, so a block
// is feedback, as in Claude Code).
func (x *Orchestrator) postToolUse(ctx context.Context, s *sub, callID, tool string, args map[string]any, output string, isErr bool) (string, error) {
	r := x.o.Hooks
	var notes []string
	for _, name := range []string{"PostToolUse", "PostToolUseFailure"} {
		if name == "PostToolUseFailure" && !isErr {
			continue
		}
		list := r.MatchingTool(name, tool)
		if len(list) == 0 {
			continue
		}
		in, dir := x.toolHookInput(name, s, callID, tool, args)
		in.ToolResponse = &hooks.ToolResponse{Output: output, IsError: isErr}
		if isErr && name == "PostToolUseFailure" {
			in.Error = output
		}
		payload, err := in.Marshal(session.Event{})
		if err != nil {
			return "", err
		}
		for _, h := range list {
			res := r.RunAs(ctx, h, hooks.PostTool, dir, payload)
			ev := res.Event(h, name, 0)
			ev.Tool = tool
			if _, err := x.emit(s.id, ev); err != nil {
				return "", err
			}
			switch {
			case res.Outcome == session.HookBlocked:
				notes = append(notes, name+" hook: "+res.Reason)
			case res.Context != "":
				notes = append(notes, name+" hook: "+res.Context)
			}
		}
	}
	return strings.Join(notes, "\n"), ctx.Err()
}

// acpPostTools runs an external (ACP) agent's PostToolUse (and PostToolUseFailure) hooks
// when one of its tool calls ends: the agent's tool_call_update with status completed or
// failed, recorded as the call's tool_result. They observe: the agent ran the call itself
// and ACP has no way to add a note to its turn, so a block or additionalContext changes
// nothing (exit code 2 is recorded as a failure saying so). They run off the agent's path,
// after the result is recorded (trigger_seq is its seq).
type acpPostTools struct {
	x    *Orchestrator
	s    *sub
	mu   sync.Mutex
	args map[string]map[string]any // each open call's arguments as its tool_call recorded them
}

// acpPostTool is subagent s's (nil when no PostToolUse hook is configured).
func (x *Orchestrator) acpPostTool(s *sub) *acpPostTools {
	if r := x.o.Hooks; !r.Any("PostToolUse") && !r.Any("PostToolUseFailure") {
		return nil
	}
	return &acpPostTools{x: x, s: s, args: map[string]map[string]any{}}
}

// see takes each event recorded about the agent's subagent; a tool_result runs the hooks.
func (p *acpPostTools) see(ev session.Event) {
	te, ok := ev.Data.(session.TranscriptEvent)
	if p == nil || !ok || te.CallID == "" {
		return
	}
	p.mu.Lock()
	args := p.args[te.CallID]
	switch te.EventType {
	case session.TranscriptToolCall:
		p.args[te.CallID] = te.Args
	case session.TranscriptToolResult:
		delete(p.args, te.CallID)
	}
	p.mu.Unlock()
	if te.EventType != session.TranscriptToolResult {
		return
	}
	if te.Args != nil { // the call as it ran, when the agent said more after announcing it
		args = te.Args
	}
	x, s, r := p.x, p.s, p.x.o.Hooks
	for _, name := range []string{"PostToolUse", "PostToolUseFailure"} {
		if name == "PostToolUseFailure" && !te.IsError {
			continue
		}
		list := r.MatchingTool(name, te.Tool)
		if len(list) == 0 {
			continue
		}
		in, dir := x.toolHookInput(name, s, te.CallID, te.Tool, acpToolInput(args))
		in.ToolResponse = &hooks.ToolResponse{Output: te.Result, IsError: te.IsError}
		if te.IsError && name == "PostToolUseFailure" {
			in.Error = te.Result
		}
		payload, err := in.Marshal(ev)
		if err != nil {
			return
		}
		x.goHooks(func() {
			for _, h := range list {
				res := r.Run(x.hookCtx, h, dir, payload, false)
				hr := res.Event(h, name, ev.Seq)
				hr.Tool = te.Tool
				if _, err := x.emit(s.id, hr); err != nil {
					return
				}
			}
		})
	}
}

// acpToolInput is an ACP tool call's tool_input: the agent's raw input (Claude Code's
// tool_input for the same call) with the call's title, kind and locations beside it, or the
// recorded arguments when the input is not an object.
func acpToolInput(args map[string]any) map[string]any {
	raw, ok := args["input"].(map[string]any)
	if !ok {
		return args
	}
	out := make(map[string]any, len(raw)+3)
	for k, v := range args {
		if k != "input" {
			out[k] = v
		}
	}
	for k, v := range raw {
		out[k] = v
	}
	return out
}

// toolHooks are the runtime's PreTool and PostTool for subagent s (nil when no hook of
// theirs is configured).
func (x *Orchestrator) toolHooks(s *sub) (pre func(context.Context, string, string, map[string]any) (string, string, error),
	post func(context.Context, string, string, map[string]any, string, bool) (string, error)) {
	r := x.o.Hooks
	if r.Any("PreToolUse") {
		pre = func(ctx context.Context, id, tool string, args map[string]any) (string, string, error) {
			return x.preToolUse(ctx, s, id, tool, args)
		}
	}
	if r.Any("PostToolUse") || r.Any("PostToolUseFailure") {
		post = func(ctx context.Context, id, tool string, args map[string]any, out string, isErr bool) (string, error) {
			return x.postToolUse(ctx, s, id, tool, args, out, isErr)
		}
	}
	return pre, post
}

// promptHooks runs the UserPromptSubmit hooks on text, the user's message to subagent s,
// off the command path (as afterEvent's): a block withholds the message (the reason is a
// session note for the user, as Claude Code shows it to the user, not the model); each
// additionalContext (or plain stdout) is added to the message the subagent gets. The
// UserNote is recorded, and the message delivered, once they ran.
func (x *Orchestrator) promptHooks(s *sub, text string, deliver func(string) error) {
	r := x.o.Hooks
	in, dir, _ := x.hookInput("UserPromptSubmit", s.id)
	list := r.Matching("UserPromptSubmit", in.AgentType, in.AgentName)
	if len(list) == 0 {
		_ = deliver(text)
		return
	}
	in.Prompt = text
	in.PermissionMode = string(s.policy.Mode)
	payload, err := in.Marshal(session.Event{})
	if err != nil {
		return
	}
	x.goHooks(func() {
		text, blocked, err := x.userPrompt(x.hookCtx, list, dir, payload, s.id, text)
		switch {
		case err != nil:
		case blocked != "":
			_, _ = x.emit("", session.UserNote{Text: fmt.Sprintf("your message to %s was not sent: a UserPromptSubmit hook blocked it: %s", s.id, blocked)})
		default:
			_ = deliver(text)
		}
	})
}

// userPrompt runs the UserPromptSubmit hooks in list on payload (the prompt text), one after
// another, each HookRan recorded about subagent id ("" for a task not yet delegated). It
// returns text with each hook's context added, or the reason of the first hook that blocked
// (the run ends there).
func (x *Orchestrator) userPrompt(ctx context.Context, list []provider.Hook, dir string, payload []byte, id, text string) (string, string, error) {
	r := x.o.Hooks
	var extra []string
	for _, h := range list {
		res := r.RunAs(ctx, h, hooks.Prompt, dir, payload)
		if _, err := x.emit(id, res.Event(h, "UserPromptSubmit", 0)); err != nil {
			return "", "", err
		}
		if res.Outcome == session.HookBlocked {
			return "", res.Reason, nil
		}
		if res.Context != "" {
			extra = append(extra, res.Context)
		}
	}
	if len(extra) > 0 {
		text += "\n\n" + strings.Join(extra, "\n")
	}
	return text, "", nil
}

// delegatePrompt runs the UserPromptSubmit hooks on a /delegate's task, the user's first
// prompt to the subagent it starts (as Claude Code's hooks see the prompt that starts a
// session), on the command path before anything is issued: it returns the task with the
// hooks' context added, or the reason a hook blocked it (the delegation is then rejected).
// The HookRan events are about no subagent: none exists yet.
func (x *Orchestrator) delegatePrompt(def *agents.Definition, c commands.Delegate) (string, string, error) {
	r := x.o.Hooks
	list := r.Matching("UserPromptSubmit", c.AgentType, def.Name)
	if len(list) == 0 {
		return c.Task, "", nil
	}
	in, dir, _ := x.hookInput("UserPromptSubmit", "")
	in.AgentType, in.AgentName, in.Prompt = c.AgentType, def.Name, c.Task
	in.PermissionMode = string(requestedMode(def, c))
	if in.PermissionMode == "" {
		in.PermissionMode = "default"
	}
	payload, err := in.Marshal(session.Event{})
	if err != nil {
		return "", "", err
	}
	return x.userPrompt(x.hookCtx, list, dir, payload, "", c.Task)
}

// notify runs the Notification hooks when ev leaves something waiting for the user: a
// permission request nobody has decided yet (permission_prompt), a subagent waiting for a
// message (idle_prompt), a conflict to review (review). The matcher is on the type, as in
// Claude Code. Called by afterEvent.
func (x *Orchestrator) notify(ev session.Event) {
	r := x.o.Hooks
	if !r.Any("Notification") {
		return
	}
	kind, msg := "", ""
	switch d := ev.Data.(type) {
	case session.PermissionRequested:
		x.mu.Lock()
		req := x.requests[d.RequestID]
		settled := req != nil && req.settled
		x.mu.Unlock()
		if settled || x.o.Approve != "" {
			return // decided at once (a hook, --approve): nobody waits
		}
		kind, msg = "permission_prompt", fmt.Sprintf("%s needs your permission to use %s (%s)", ev.SubagentID, d.Tool, d.RequestID)
	case session.TranscriptEvent:
		if d.EventType != session.TranscriptMessage || d.Text != "waiting for a user message" {
			return
		}
		kind, msg = "idle_prompt", ev.SubagentID+" is waiting for your message"
	case session.ConflictDetected:
		kind, msg = "review", "a conflict waits for your review"
	default:
		return
	}
	list := r.MatchingValue("Notification", kind)
	if len(list) == 0 {
		return
	}
	in, dir, _ := x.hookInput("Notification", ev.SubagentID)
	in.Message, in.NotificationType = msg, kind
	x.runObserved(list, "Notification", ev, in, dir)
}

// runObserved runs hooks that observe ev (they cannot change anything) off the serialising
// path, recording each HookRan as it ends.
func (x *Orchestrator) runObserved(list []provider.Hook, name string, ev session.Event, in hooks.Input, dir string) {
	payload, err := in.Marshal(ev)
	if err != nil {
		return
	}
	r := x.o.Hooks
	x.goHooks(func() {
		for _, h := range list {
			res := r.Run(x.hookCtx, h, dir, payload, false)
			if _, err := x.emit(ev.SubagentID, res.Event(h, name, ev.Seq)); err != nil {
				return
			}
		}
	})
}

// goHooks runs f off the serialising path as a clock participant that waitHooks waits for.
func (x *Orchestrator) goHooks(f func()) {
	done := x.clock.NewEvent()
	x.hookMu.Lock()
	x.hookRuns = append(x.hookRuns, done)
	x.hookMu.Unlock()
	x.clock.Go(func() {
		defer done.Fire()
		f()
	})
}
