package live

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/mcp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/converge"
	"github.com/summit-dev/summit/session/gitws"
)

// sub is a subagent the orchestrator runs.
type sub struct {
	id      string
	n       int
	cmd     commands.Delegate
	def     *agents.Definition
	policy  agents.Policy
	bypass  bool // bypassPermissions was asked for and needs approval before the run
	ctx     context.Context
	stopCtx context.CancelFunc
	slot    *Event // fired when the subagent may run (the parallel cap)
	stopped *Event // fired after its SubagentStop
	// inbox: user messages during a transfer-control handoff.
	mu       sync.Mutex
	inbox    []string
	arrived  *Event
	why      string // cancellation reason, "" when not cancelled
	timedOut bool
	outcome  string
	clock    Clock
	// wt and sandbox are set for an isolated subagent: its worktree and the tools rooted
	// there; isoErr says why isolation failed (the run then fails at once).
	wt      *gitws.Worktree
	sandbox *tools.Sandbox
	// routed is its model provider when it has a resolution (not on script tapes): where its
	// cost comes from. Set by the run's goroutine before the first turn, read after the run.
	routed provider.Routed
	isoErr error
	// child is set for an external agent's own subagent (acpchild.go): it has no run here.
	child *acpChildRef
	// remoteCost is what a remote ABI agent's run reported it cost (remote.go).
	remoteCost *float64
	// relay records an ACP agent's model calls relayed from its runner (relaymeter.go).
	relay *relayMeter
	// hookBlocks counts the SubagentStop hooks' blocks of its stop; stopHooksRan is set when
	// they ran before the stop and let it stop (hooks.go). Guarded by mu.
	hookBlocks   int
	stopHooksRan bool
	// runner is the remote runner it was placed on (/delegate --on; runner.go), "" = here.
	runner string
	// unhold releases its placement's hold on runner (runners.Client.Hold) once its job is
	// submitted or given up (nil: none).
	unhold func()
}

func (s *sub) cancel(reason string) {
	s.mu.Lock()
	if s.why == "" && !s.timedOut {
		s.why = reason
	}
	s.mu.Unlock()
	s.stopCtx()
}

func (s *sub) deliver(text string) {
	s.mu.Lock()
	s.inbox = append(s.inbox, text)
	ev := s.arrived
	s.mu.Unlock()
	ev.Fire()
}

// pending drains queued messages without waiting.
func (s *sub) pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.inbox
	s.inbox = nil
	if len(out) > 0 {
		s.arrived = s.clock.NewEvent()
	}
	return out
}

// next waits for the next message.
func (s *sub) next(ctx context.Context) (string, error) {
	for {
		if m := s.pending(); len(m) > 0 {
			if len(m) > 1 {
				s.mu.Lock()
				s.inbox = append(m[1:], s.inbox...)
				s.arrived.Fire()
				s.mu.Unlock()
			}
			return m[0], nil
		}
		s.mu.Lock()
		ev := s.arrived
		s.mu.Unlock()
		if err := ev.Wait(ctx); err != nil {
			return "", err
		}
	}
}

// delegate checks a /delegate against the session, then spawns the subagent. It returns at
// once: the run goes on as a clock participant.
func (x *Orchestrator) delegate(line string, c commands.Delegate) (Reply, error) {
	return x.delegateAs(line, c, c)
}

// delegateAs delegates c for the command the user typed (a /delegate, or a /retry that stands
// for one): cmd is what is recorded as issued or rejected.
func (x *Orchestrator) delegateAs(line string, cmd commands.Command, c commands.Delegate) (Reply, error) {
	def, ok := x.agentDef(c.AgentType) // ACP hook: external agents resolve too (acp.go)
	if !ok {
		var names []string
		for _, d := range x.o.Catalogue.List() {
			names = append(names, d.Name)
		}
		return x.rejectf(line, cmd, "unknown agent type %q%s", c.AgentType, didYouMean(c.AgentType, names))
	}
	pol, err := mcp.Resolve(x.o.MCP, def, agents.Request{SessionTools: x.o.AllowedTools, Ceiling: x.o.Ceiling,
		Tools: c.Tools, Mode: agents.PermissionMode(c.PermissionMode), BypassApproved: true})
	if err != nil {
		return x.rejectf(line, cmd, "%v", err)
	}
	if len(pol.Tools) == 0 {
		return x.rejectf(line, cmd, "agent %s would have no tools left (%s)", def.Name, strings.Join(pol.Notes, "; "))
	}
	if c.Inputs != "" {
		if !x.isRemote(def) {
			return x.rejectUsage(line, cmd, "--inputs is for a remote agent (remotes: in the config); %s runs here and takes its task as text", def.Name)
		}
		if _, err := parseInputs(c.Inputs); err != nil {
			return x.rejectUsage(line, cmd, "--inputs: %v", err)
		}
	}
	if x.isolated(pol.Tools) && !x.isRemote(def) {
		if _, err := x.repo(); err != nil {
			return x.rejectf(line, cmd, "%v", err)
		}
	}
	if c.On != "" || c.Retry { // runner.go: --on needs a runner that is there now
		if why := x.checkPlacement(def, c); why != "" {
			return x.rejectUsage(line, cmd, "%s", why)
		}
	}
	// The task is the user's first prompt to the subagent: its UserPromptSubmit hooks
	// (hooks.go) may block it (the delegation is rejected) or add context to it.
	task, blocked, err := x.delegatePrompt(def, c)
	if err != nil {
		return Reply{}, err
	}
	if blocked != "" {
		return x.rejectf(line, cmd, "a UserPromptSubmit hook blocked the task: %s", blocked)
	}
	c.Task = task
	if err := x.issue(line, cmd); err != nil {
		return Reply{}, err
	}
	s, err := x.spawn(c)
	if err != nil {
		return Reply{}, err
	}
	out := "delegated to " + s.id
	if !s.slot.Fired() {
		out += fmt.Sprintf(" (queued: %d running, cap %d)", x.o.MaxParallel, x.o.MaxParallel)
	}
	if asked := requestedMode(def, c); asked.Valid() && asked.Rank() > x.o.Ceiling.Rank() {
		why := "asked " + string(asked)
		if c.PermissionMode == "" {
			why = fmt.Sprintf("%s is %s's default", asked, def.Name)
		}
		out += fmt.Sprintf(" · permission mode capped at %s by the session ceiling (%s)", x.o.Ceiling, why)
	}
	return Reply{Output: out}, nil
}

// requestedMode is the permission mode a /delegate asks for: its --permission-mode, else the
// agent's default ("" when neither says).
func requestedMode(def *agents.Definition, c commands.Delegate) agents.PermissionMode {
	if c.PermissionMode != "" {
		return agents.PermissionMode(c.PermissionMode)
	}
	return def.PermissionMode
}

// spawn creates a subagent for a checked /delegate (or a handoff's retry of one) and starts
// its participant: SubagentSpawned, TranscriptEvent{subagent_start}, then, once a slot is free,
// SubagentActive and the run.
func (x *Orchestrator) spawn(c commands.Delegate) (*sub, error) {
	def, _ := x.agentDef(c.AgentType) // ACP hook (acp.go)
	pol, err := mcp.Resolve(x.o.MCP, def, agents.Request{SessionTools: x.o.AllowedTools, Ceiling: x.o.Ceiling,
		Tools: c.Tools, Mode: agents.PermissionMode(c.PermissionMode), BypassApproved: true})
	if err != nil {
		return nil, err
	}
	bypass := pol.Mode == agents.ModeBypass
	if bypass {
		// It runs in acceptEdits until the user approves bypassPermissions (asked once, at the
		// start of the run).
		pol.Mode = agents.ModeAcceptEdits
	}
	x.mu.Lock()
	// An external agent's child takes an id without a command (acpchild.go): count both.
	n := max(len(x.state.Subagents), len(x.subs)) + 1
	id := fmt.Sprintf("sa-%d", n)
	ctx, cancel := context.WithCancel(x.ctx)
	s := &sub{id: id, n: n, cmd: c, def: def, policy: pol, bypass: bypass, ctx: ctx, stopCtx: cancel,
		slot: x.clock.NewEvent(), stopped: x.clock.NewEvent(), arrived: x.clock.NewEvent(), clock: x.clock}
	x.subs[id] = s
	queued := x.running >= x.o.MaxParallel
	if queued {
		x.queue = append(x.queue, s)
	} else {
		x.running++
		s.slot.Fire()
	}
	x.mu.Unlock()

	spawned := session.SubagentSpawned{
		AgentType: c.AgentType, AgentName: def.Name, ParentSessionID: x.o.SessionID,
		ParentSessionRef: x.o.SessionID, PermissionMode: string(pol.Mode), Tools: pol.Tools,
		TaskDescription: c.Task, TimeoutS: c.Timeout, InheritContext: c.InheritContext,
		SubagentSessionID: x.o.SessionID + "/" + id, Queued: queued,
		// Never silently: which file runs when it took a built-in's or the user's name.
		AgentShadows: x.shadowing(def),
	}
	if asked := requestedMode(def, c); asked != "" && asked != pol.Mode {
		spawned.RequestedPermissionMode = string(asked)
	}
	if c.On != "" { // runner.go: where it runs is on the record from its start
		s.runner = x.placeOn(c.On, nil)
		spawned.Runner, spawned.RunnerOn, spawned.RunnerRetry = s.runner, c.On, c.Retry
		if s.runner != "" {
			s.unhold = x.o.Runners.Hold(s.runner)
		}
	}
	if _, err := x.emit(id, spawned); err != nil {
		return nil, err
	}
	if x.isolated(pol.Tools) && !x.isRemote(def) { // a remote agent changes nothing here
		s.isoErr = x.isolate(s)
	}
	if _, err := x.emit(id, session.TranscriptEvent{EventType: session.TranscriptStart, Text: c.Task}); err != nil {
		return nil, err
	}
	x.clock.Go(func() { x.runSub(s) })
	return s, nil
}

// runSub is one subagent's life after spawn: wait for a slot, run, record the end.
func (x *Orchestrator) runSub(s *sub) {
	defer s.stopped.Fire()
	start := x.clock.Now()
	res := runtime.Result{Outcome: session.OutcomeCancelled}
	if s.slot.Wait(s.ctx) == nil {
		res = x.execute(s)
	}
	x.finish(s, res, start)
}

func (x *Orchestrator) execute(s *sub) runtime.Result {
	if _, err := x.emit(s.id, session.SubagentActive{InitialState: "running"}); err != nil {
		return runtime.Result{Outcome: session.OutcomeFailure, Err: err}
	}
	start := x.clock.Now()
	deadline := start.Add(time.Duration(s.cmd.Timeout) * time.Second)
	AfterFunc(x.clock, s.ctx, time.Duration(s.cmd.Timeout)*time.Second, func() {
		s.mu.Lock()
		if s.why == "" {
			s.timedOut = true
		}
		s.mu.Unlock()
		s.stopCtx()
	})
	if s.bypass {
		ok, _, err := x.approve(s, "bypassPermissions", map[string]any{"task": s.cmd.Task},
			"bypassPermissions needs explicit approval at delegation")
		if err != nil {
			return runtime.Result{Outcome: session.OutcomeCancelled, Err: err}
		}
		if ok {
			s.policy.Mode = agents.ModeBypass
		}
	}
	if s.isoErr != nil {
		msg := "no isolated worktree: " + s.isoErr.Error()
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: msg})
		_, _ = x.emit(s.id, session.SubagentError{Error: msg, Attempt: 1, Context: "isolation"})
		return runtime.Result{Outcome: session.OutcomeFailure, Err: s.isoErr}
	}
	if s.runner != "" || s.cmd.On != "" { // placed on a remote runner (runner.go)
		return x.runOnRunner(s, deadline)
	}
	if x.isRemote(s.def) { // a remote ABI agent runs on its server (remote.go)
		return x.runRemote(s, deadline)
	}
	if x.isACP(s.def) { // ACP hook: an external agent runs its own loop (acp.go)
		return x.runACP(s, deadline)
	}
	prov, model, err := x.o.Route(s.def)
	if err != nil {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: err.Error()})
		_, _ = x.emit(s.id, session.SubagentError{Error: err.Error(), Attempt: 1, Context: "provider routing"})
		return runtime.Result{Outcome: session.OutcomeFailure, Err: err}
	}
	def, ctx := s.def, s.ctx
	if rp, ok := prov.(provider.Routed); ok {
		// Where the model requests go, and why, is on the record before the first of them.
		s.routed = rp
		res := rp.Resolution()
		routed := session.ModelRouted{Requested: res.Requested, Provider: res.Provider, Model: res.Model, Why: res.Why}
		for _, f := range res.Fallbacks {
			routed.Fallbacks = append(routed.Fallbacks, f.String())
		}
		if res.DropTemperature != "" && def.Temperature != nil {
			routed.Dropped = append(routed.Dropped, "temperature: "+res.DropTemperature)
			d := *def
			d.Temperature = nil
			def = &d
		}
		if _, err := x.emit(s.id, routed); err != nil {
			return runtime.Result{Outcome: session.OutcomeFailure, Err: err}
		}
		ctx = provider.WithSwitchReporter(ctx, func(from, to provider.Link, cause error) {
			_, _ = x.emit(s.id, SwitchEvent(from, to, cause))
		})
	}
	// MCP hook: the servers the grant names start now, and its MCP entries become their tools;
	// a grant that may write puts the subagent in a worktree first (mcpisolate.go).
	mcpTools, release, failed, err := x.mcpToolset(ctx, s)
	if err != nil {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: err.Error()})
		_, _ = x.emit(s.id, session.SubagentError{Error: err.Error(), Attempt: 1, Context: failed})
		return runtime.Result{Outcome: session.OutcomeFailure, Err: err}
	}
	defer release()
	var beforeStop func(context.Context, string) (string, error)
	if x.o.Hooks.Any("SubagentStop") || x.o.Hooks.Any("Stop") { // hooks.go: they may block the stop
		beforeStop = func(ctx context.Context, final string) (string, error) { return x.stopHooks(ctx, s, final) }
	}
	preTool, postTool := x.toolHooks(s) // hooks.go: PreToolUse and PostToolUse
	return runtime.Run(ctx, runtime.Config{
		PreTool: preTool, PostTool: postTool,
		Agent: def, AgentType: s.cmd.AgentType, Policy: s.policy, Provider: prov, Model: model, MCP: mcpTools,
		Sandbox: x.sandboxOf(s), System: x.prompt(s), Task: s.cmd.Task, MaxTurns: s.def.MaxTurns,
		Deadline: deadline, Clock: x.clock,
		Emit: func(d session.Data) error { _, err := x.emit(s.id, d); return err },
		Approve: func(_ context.Context, tool string, args map[string]any, reason string) (bool, string, error) {
			return x.approve(s, tool, args, reason)
		},
		Inbox: s.next, Pending: s.pending, Backoff: x.o.Backoff,
		Usage:      func(t session.Tokens) { x.reportUsage(s, t) },
		BeforeStop: beforeStop,
	})
}

// sandboxOf is where a subagent's tools work: its worktree when isolated, else the workspace.
func (x *Orchestrator) sandboxOf(s *sub) *tools.Sandbox {
	if s.sandbox != nil {
		return s.sandbox
	}
	return x.sandbox
}

// prompt assembles the delegation prompt; with --inherit-context the playbook and the
// Downstream Context of every finished subagent form the context chain (DESIGN §6).
func (x *Orchestrator) prompt(s *sub) string {
	in := protocols.PromptInput{
		AgentName: s.def.Name, AgentBody: s.def.Body, PermissionMode: string(s.policy.Mode),
		Workspace: x.sandboxOf(s).Root(), Tools: s.policy.Tools, InheritContext: s.cmd.InheritContext,
		Task: s.cmd.Task,
	}
	for _, t := range agents.CanonicalTools() {
		if !slices.Contains(s.policy.Tools, t) {
			in.Denied = append(in.Denied, t)
		}
	}
	if s.cmd.InheritContext {
		// A runner's job: its session's chain first (runnermodels.go), then this session's.
		in.Playbook, in.Chain = x.o.Inherited.Prompt()
		pb, chain := x.contextChain(s).Prompt()
		in.Playbook, in.Chain = append(in.Playbook, pb...), append(in.Chain, chain...)
	}
	return protocols.BuildPrompt(in)
}

// finish records the end: the cause (timeout or cancellation) and then SubagentStop with what
// the subagent had; then it frees the slot for the next queued subagent.
func (x *Orchestrator) finish(s *sub, res runtime.Result, start time.Time) {
	s.mu.Lock()
	why, timedOut := s.why, s.timedOut
	s.mu.Unlock()
	outcome := res.Outcome
	switch {
	case timedOut:
		outcome = session.OutcomeTimeout
		_, _ = x.emit(s.id, session.SubagentTimeout{TimeoutS: s.cmd.Timeout})
	case why != "":
		outcome = session.OutcomeCancelled
		_, _ = x.emit(s.id, session.SubagentCancelled{Reason: why})
	}
	s.stopCtx()
	if res.Capsule != nil && (timedOut || why != "") {
		res.Capsule.ParseWarnings = append(res.Capsule.ParseWarnings, "partial result: the run was stopped by "+map[bool]string{true: "its timeout", false: "a cancellation"}[timedOut])
	}
	artifacts := res.Artifacts
	if artifacts == nil {
		artifacts = []string{}
	}
	x.captureChanges(s)
	if x.isACP(s.def) {
		// An external agent that writes files itself (Claude Code, a Gemini shell command)
		// never says so over ACP: what it produced is also what its worktree changed.
		x.mu.Lock()
		if sa := x.state.Subagent(s.id); sa != nil && sa.Changes != nil {
			for _, f := range sa.Changes.Files {
				if f.Kind != session.ChangeDeleted && !slices.Contains(artifacts, f.Path) {
					artifacts = append(artifacts, f.Path)
				}
			}
		}
		x.mu.Unlock()
		slices.Sort(artifacts)
	}
	cost := s.remoteCost // what a remote run reported it cost
	if s.relay != nil {
		if t, usd, ok := s.relay.totals(); ok { // its relayed calls, as this session made them
			res.Tokens, cost = t, usd
		}
	}
	if s.routed != nil {
		if usd, known := s.routed.Cost(); known {
			cost = &usd
		}
	}
	_, _ = x.emit(s.id, session.SubagentStop{
		Outcome: outcome, Capsule: res.Capsule, ToolInvocationCount: res.ToolCalls,
		ArtifactPaths: artifacts, DurationMS: x.clock.Now().Sub(start).Milliseconds(),
		Tokens: res.Tokens, CostUSD: cost,
	})
	s.mu.Lock()
	s.outcome = outcome
	s.mu.Unlock()
	x.mu.Lock()
	delete(x.grants, s.id)
	wasRunning := slices.Index(x.queue, s) < 0
	if !wasRunning {
		x.queue = slices.DeleteFunc(x.queue, func(q *sub) bool { return q == s })
	} else {
		x.running--
	}
	for x.running < x.o.MaxParallel && len(x.queue) > 0 {
		next := x.queue[0]
		x.queue = x.queue[1:]
		x.running++
		next.slot.Fire()
	}
	x.mu.Unlock()
}

// subNamed is the running record and a copy of the folded state of a subagent a command
// names, and the subagent ids for a "did you mean" when it names none. The state is copied
// under the lock because the fold keeps writing the live record (an ACP agent's child
// sessions fold from the agent's connection goroutine while a command reads it).
func (x *Orchestrator) subNamed(id string) (*sub, *session.Subagent, []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.subs[id], x.subCopyLocked(id), x.subIDs()
}

// subCopyLocked is a copy of subagent id's folded state (nil when there is none), for reading
// after mu is released: the fold writes the live record under mu. x.mu is held.
func (x *Orchestrator) subCopyLocked(id string) *session.Subagent {
	sa := x.state.Subagent(id)
	if sa == nil {
		return nil
	}
	c := *sa
	return &c
}

// cancelCmd is /cancel: the subagent's context ends, which kills a running tool's process
// group; SubagentCancelled and SubagentStop follow from its participant.
func (x *Orchestrator) cancelCmd(line string, c commands.Cancel) (Reply, error) {
	s, sa, ids := x.subNamed(c.SubagentID)
	switch {
	case s == nil || sa == nil:
		return x.rejectf(line, c, "unknown subagent %s%s", c.SubagentID, didYouMean(c.SubagentID, ids))
	case sa.Terminal():
		return x.rejectf(line, c, "%s has already stopped (%s)", sa.ID, sa.Status)
	case s.child != nil && (s.child.info.Cancellable == nil || !s.child.info.Cancellable()):
		return x.rejectf(line, c, "%s is a subagent its agent started itself, under %s, and that agent does not let summit cancel it; /cancel %s stops both",
			sa.ID, s.child.parent, s.child.parent)
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	s.cancel("cancelled by the user")
	return Reply{Output: "cancelling " + s.id}, nil
}

func (x *Orchestrator) subIDs() []string {
	var ids []string
	for _, sa := range x.state.Subagents {
		ids = append(ids, sa.ID)
	}
	return ids
}

// wait is /wait: until each subagent has stopped and each convergence is complete or waits
// for review. Its reply says how long it waited and how each ended.
func (x *Orchestrator) wait(ctx context.Context, line string, c commands.Wait) (Reply, error) {
	x.mu.Lock()
	var evs []*Event
	var bad string
	for _, id := range c.IDs {
		if s := x.subs[id]; s != nil {
			evs = append(evs, s.stopped)
		} else if cv := x.convs[id]; cv != nil {
			evs = append(evs, cv.settled)
		} else if bad == "" {
			bad = id
		}
	}
	ids := x.knownIDs()
	x.mu.Unlock()
	if bad != "" {
		return x.rejectf(line, c, "unknown id %s%s", bad, didYouMean(bad, ids))
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	start := x.clock.Now()
	head := "waited"
	for _, ev := range evs {
		if err := ev.Wait(ctx); err != nil {
			head = "wait interrupted after"
			break
		}
	}
	return Reply{Output: x.waitSummary(head, c.IDs, x.clock.Now().Sub(start))}, nil
}

// waitSummary is /wait's reply: "waited 4.2s: sa-1 success · cv-1 complete (1 conflict
// resolved)", or "wait interrupted after 0.5s: sa-1 active".
func (x *Orchestrator) waitSummary(head string, ids []string, took time.Duration) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var parts []string
	for _, id := range ids {
		if sa := x.state.Subagent(id); sa != nil {
			end := sa.Status
			if sa.Stopped {
				end = sa.Outcome
			}
			parts = append(parts, id+" "+end)
		} else if cv := x.state.Convergence(id); cv != nil {
			parts = append(parts, id+" "+convergenceEnd(cv))
		}
	}
	return fmt.Sprintf("%s %s: %s", head, seconds(took), strings.Join(parts, " · "))
}

// convergenceEnd says where a convergence stands for /wait.
func convergenceEnd(cv *session.Convergence) string {
	var open []string
	for _, cf := range cv.Conflicts {
		if cf.Resolution == nil {
			open = append(open, cf.ID)
		}
	}
	switch cv.Status {
	case session.ConvergenceDone:
		var notes []string
		end := "complete"
		switch cv.Outcome {
		case converge.OutcomeFailure:
			end = "failed"
		case converge.OutcomePartial:
			notes = append(notes, "partial")
		}
		if cv.ResolutionCount > 0 {
			notes = append(notes, session.Plural(cv.ResolutionCount, "conflict")+" resolved")
		}
		if len(notes) > 0 {
			end += " (" + strings.Join(notes, " · ") + ")"
		}
		return end
	case session.ConvergenceReview:
		return "waits for review (" + strings.Join(open, ", ") + " open)"
	}
	return "pending"
}

// seconds renders a wait: "0.3s", "4.2s", "2m5s".
func seconds(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// WaitAll waits until every subagent has stopped and every convergence has settled.
func (x *Orchestrator) WaitAll(ctx context.Context) error {
	for {
		x.mu.Lock()
		var ev *Event
		for _, sa := range x.state.Subagents {
			if s := x.subs[sa.ID]; s != nil && !s.stopped.Fired() {
				ev = s.stopped
				break
			}
		}
		if ev == nil {
			for _, sa := range x.state.Subagents {
				if h := x.handoffs[sa.ID]; h != nil && !h.settled.Fired() {
					ev = h.settled
					break
				}
			}
		}
		if ev == nil {
			for _, cv := range x.convs {
				if !cv.settled.Fired() {
					ev = cv.settled
					break
				}
			}
		}
		x.mu.Unlock()
		if ev == nil {
			return nil
		}
		if err := ev.Wait(ctx); err != nil {
			return err
		}
	}
}

// reportUsage tells Options.OnUsage a subagent's usage so far, with its cost when priced.
func (x *Orchestrator) reportUsage(s *sub, t session.Tokens) {
	if x.o.OnUsage == nil {
		return
	}
	usd, known := 0.0, false
	if s.routed != nil {
		usd, known = s.routed.Cost()
	}
	x.o.OnUsage(s.id, t, usd, known)
}

// SwitchEvent is how a move to the next model of a subagent's fallback chain is recorded: a
// ModelRouted with From and the reason as Why when the model stayed out of capacity
// (provider.Overload), a ModelSwitched when it was not found or not available.
func SwitchEvent(from, to provider.Link, cause error) session.Data {
	if provider.Overload(cause) != "" {
		return session.ModelRouted{Provider: to.Provider, Model: to.Model, Why: cause.Error(), From: from.String()}
	}
	return session.ModelSwitched{FromProvider: from.Provider, FromModel: from.Model,
		ToProvider: to.Provider, ToModel: to.Model, Reason: cause.Error()}
}
