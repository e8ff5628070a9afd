package live

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// External ACP agents (agents/acp). `/delegate TASK --agent-type gemini-cli` resolves the type
// against, in order: the config's acp_agents, the catalogue (where an agent file of kind acp
// lives), then the built-in ACP agents whose command is on PATH (gemini-cli, claude-code,
// codex). Such a subagent is spawned like any other (policy, ceiling, queue, worktree), then
// runACP replaces the native loop: the agent process starts in the subagent's worktree, gets
// the delegation prompt as its session/prompt, and what it does is recorded with the events
// native subagents use, so a recording replays with no agent process. Its permission requests
// go through the same approve path (the prompt, the inbox, --approve), its file reads and
// writes and its terminals through a sandbox on its worktree, and its real changes are the
// worktree's at its stop. It always works in a worktree (unless NoIsolation): an agent like
// Claude Code writes files itself, whatever tools summit grants.

// acpCancelGrace is how long a cancelled turn may take to end before the agent's process
// group is killed (a variable for tests).
var acpCancelGrace = 5 * time.Second

// acpMaxFile bounds what fs/read_text_file returns whole (and a terminal's output): the ACP
// sandbox's MaxRead and MaxResult, equal, so a read is never cut into something an agent
// could write back.
const acpMaxFile = 8 << 20

// acpUserConfigDir is the user's summit config dir (its config.yaml may hold acp_agents).
var acpUserConfigDir = func() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "summit")
}

// acpLookPath finds a built-in ACP agent's command (a variable for tests).
var acpLookPath = exec.LookPath

// acpRegistry is a session's ACP agents, read once, at the first /delegate.
type acpRegistry struct {
	configured map[string]*agents.Definition // acp_agents: they win over the catalogue
	builtin    map[string]*agents.Definition // built-ins on PATH: the catalogue wins over them
	agents     map[*agents.Definition]acp.Agent
}

// acpAgents is the session's registry, built at the first use from Options.ACPAgents (or,
// when the caller gave none, the workspace's and user's config).
func (x *Orchestrator) acpAgents() *acpRegistry {
	x.acpOnce.Do(func() {
		r := &acpRegistry{configured: map[string]*agents.Definition{}, builtin: map[string]*agents.Definition{},
			agents: map[*agents.Definition]acp.Agent{}}
		// Only what the caller passed: it gated the workspace's config (session/trust). A
		// session that read the files again here would run an untrusted workspace's agents.
		configured := x.o.ACPAgents
		for _, a := range acp.NewSet(configured, acpLookPath).List() {
			d := a.Definition()
			r.agents[d] = a
			if a.Source == "builtin:acp" {
				r.builtin[a.Name] = d
			} else {
				r.configured[a.Name] = d
			}
		}
		x.acpReg = r
	})
	return x.acpReg
}

// agentDef resolves a --agent-type: acp_agents, then the catalogue, then the built-in ACP
// agents on PATH.
func (x *Orchestrator) agentDef(name string) (*agents.Definition, bool) {
	reg := x.acpAgents()
	if d, ok := reg.configured[name]; ok {
		return d, true
	}
	if d, ok := x.remotes().defs[name]; ok { // remote ABI agents (remote.go)
		return d, true
	}
	if d, ok := x.o.Catalogue.Get(name); ok {
		return d, true
	}
	d, ok := reg.builtin[name]
	return d, ok
}

// isACP reports whether a definition is an external ACP agent.
func (x *Orchestrator) isACP(def *agents.Definition) bool { return def != nil && def.Kind == acp.Kind }

// acpAgentOf is how to start the agent a definition names.
func (x *Orchestrator) acpAgentOf(def *agents.Definition) (acp.Agent, error) {
	if a, ok := x.acpAgents().agents[def]; ok {
		return a, nil
	}
	a, _, err := acp.FromDefinition(def)
	return a, err
}

// mcpConfig is the session's mcp_servers: its MCP manager's (none without one; the caller
// gated them, and the session never reads the config files itself).
func (x *Orchestrator) mcpConfig() map[string]provider.MCPServer {
	out := map[string]provider.MCPServer{}
	if x.o.MCP != nil {
		for _, n := range x.o.MCP.Servers() {
			out[n], _ = x.o.MCP.Configured(n)
		}
		return out
	}
	return out
}

// acpSandbox is where the agent's file reads, writes and terminals work: its worktree (or the
// workspace), confined as isolate.go confines a subagent's tools, with reads never cut.
func (x *Orchestrator) acpSandbox(s *sub) (*tools.Sandbox, error) {
	opts := x.o.Tools
	opts.MaxRead, opts.MaxResult = acpMaxFile, acpMaxFile
	opts.ShellTimeout = 10 * time.Minute
	if s.wt != nil {
		opts.ConfineWrites = true
		opts.Hidden = append(summitDirs(), filepath.Join(x.sandbox.Root(), tools.PrivateDir))
		opts.Network = true // the agent process talks to its own model API itself (its terminals too: one jail)
		opts.Hidden = append(opts.Hidden, x.otherSummitPaths(s.wt.Root())...)
	}
	return tools.New(x.sandboxOf(s).Root(), opts)
}

// runACP is an external agent's run in place of the native loop: start, prompt, more prompts
// while a transfer-control handoff feeds it, then the process group killed and the result
// built from the last turn. Its stop reason decides the outcome: end_turn is success (unless
// its capsule says failure), refusal and max_tokens fail, cancelled cancels. A start that
// fails, an agent that exits, writes garbage or too long a line fails with its stderr tail; a
// hang ends at the subagent's timeout.
func (x *Orchestrator) runACP(s *sub, deadline time.Time) (res runtime.Result) {
	var notes []string
	fail := func(context string, err error, stderr string) runtime.Result {
		msg := err.Error()
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: msg})
		_, _ = x.emit(s.id, session.SubagentError{Error: msg, Attempt: 1, Context: context, Stderr: stderr})
		return runtime.Result{Outcome: session.OutcomeFailure, Err: err}
	}
	a, err := x.acpAgentOf(s.def)
	if err != nil {
		return fail("acp agent", err, "")
	}
	if s.wt == nil && !x.o.NoIsolation {
		if err := x.isolate(s); err != nil {
			return fail("isolation", fmt.Errorf("no isolated worktree: %w", err), "")
		}
	}
	sb, err := x.acpSandbox(s)
	if err != nil {
		return fail("acp agent", err, "")
	}
	defer sb.Close() // its private caches
	ctx := s.ctx
	if x.clock.Simulated() {
		// The participant holds the simulated clock while the agent runs on the wall clock
		// (as a native tool does): the time left is a wall-clock budget.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(s.ctx, deadline.Sub(x.clock.Now()))
		defer cancel()
		defer x.acpElapse(time.Now(), x.clock.Now(), deadline)
	}
	environ := x.o.Tools.Environ
	if environ == nil {
		environ = os.Environ()
	}
	post := x.acpPostTool(s)
	cfg := acp.Config{
		Agent: a, Sandbox: sb, Environ: environ, Mode: s.policy.Mode, Decide: s.policy.Decide,
		Version: x.o.ProgramVersion, CancelGrace: acpCancelGrace,
		Relay: x.o.ACPRelay, // a runner's job whose models come from the session (runnermodels.go)
		Emit: func(d session.Data) error {
			if te, ok := d.(session.TranscriptEvent); ok && te.EventType == session.TranscriptPolicyDenied {
				notes = append(notes, fmt.Sprintf("%s refused: %s", te.Tool, te.Reason))
			}
			ev, err := x.emit(s.id, d)
			if err == nil {
				post.see(ev) // its PostToolUse hooks (hooks.go), off the agent's path
			}
			return err
		},
		Approve: func(_ context.Context, tool string, args map[string]any, reason string) (acp.Grant, error) {
			return x.acpApprove(s, tool, args, reason)
		},
		Child: func(ci acp.ChildInfo) (acp.ChildSink, error) { return x.acpChild(s, ci) },
	}
	if len(a.MCPServers) > 0 {
		// Servers go to the agent only as the config defines them: an agent file names them.
		cfg.MCP = map[string]provider.MCPServer{}
		servers := x.mcpConfig()
		for _, n := range a.MCPServers {
			sc, ok := servers[n]
			if !ok {
				return fail("acp agent", fmt.Errorf("%s names MCP server %s, which no mcp_servers of the config defines (servers: %s)",
					a.Name, n, orNone(strings.Join(slices.Sorted(maps.Keys(servers)), ", "))), "")
			}
			cfg.MCP[n] = sc
		}
	}
	_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
		Text: fmt.Sprintf("starting %s (external ACP agent %s) in %s", a.CommandLine(), a.Name, sb.Root())})
	run, err := acp.Start(ctx, cfg)
	if run != nil {
		defer func() {
			// Pending permission requests end (denied: the subagent stopped), then the group
			// is killed and every handler has returned: nothing of the agent outlives the run,
			// and its writes are done before captureChanges reads the worktree.
			s.stopCtx()
			run.Close()
		}()
	}
	stderr := func() string {
		if run == nil {
			return ""
		}
		return run.Stderr()
	}
	stopped := func() runtime.Result { // the context ended: a cancellation or the timeout
		x.acpTimeout(s, deadline, stderr())
		return runtime.Result{Outcome: session.OutcomeCancelled, Err: context.Canceled}
	}
	if err != nil {
		if ctx.Err() != nil {
			return stopped()
		}
		return fail("acp agent "+a.Name, fmt.Errorf("%s: %w", a.Name, err), stderr())
	}
	if ai := run.Info().AgentInfo; ai != nil {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
			Text: fmt.Sprintf("the agent is %s %s", ai.Name, ai.Version)})
	}

	text := x.prompt(s)
	var last string
	var turnErr error
	var stop sdk.StopReason
	for {
		turn, err := run.Prompt(ctx, text)
		if turn.Usage != nil {
			res.Tokens.Input += int64(turn.Usage.InputTokens)
			res.Tokens.Output += int64(turn.Usage.OutputTokens)
			x.reportUsage(s, res.Tokens)
		}
		last, stop, turnErr = turn.Text, turn.StopReason, err
		if err != nil || stop != sdk.StopReasonEndTurn {
			break
		}
		more, ok, err := x.acpNextInput(ctx, s, last)
		if err != nil {
			turnErr = acp.ErrCancelled
			break
		}
		if !ok && x.o.Hooks.Any("SubagentStop") {
			// Its SubagentStop hooks may send it back to work, as for a native subagent: the
			// reason goes to the agent as its next prompt (hooks.go, bounded by max_blocks).
			reason, err := x.stopHooks(ctx, s, last)
			if err != nil {
				turnErr = acp.ErrCancelled
				break
			}
			more, ok = reason, reason != ""
		}
		if !ok {
			break
		}
		text = more
	}
	res.ToolCalls, res.Artifacts = run.ToolCalls(), run.Written()
	res.Capsule = acpCapsule(last, s.def.Name, notes)
	switch {
	case errors.Is(turnErr, acp.ErrCancelled) || ctx.Err() != nil:
		r := stopped()
		r.Capsule, r.ToolCalls, r.Artifacts, r.Tokens = res.Capsule, res.ToolCalls, res.Artifacts, res.Tokens
		return r
	case turnErr != nil:
		r := fail("acp agent "+a.Name, turnErr, stderr())
		r.Capsule, r.ToolCalls, r.Artifacts, r.Tokens = res.Capsule, res.ToolCalls, res.Artifacts, res.Tokens
		return r
	case run.EmitErr() != nil:
		res.Outcome, res.Err = session.OutcomeFailure, run.EmitErr()
		return res
	}
	switch stop {
	case sdk.StopReasonEndTurn:
		res.Outcome = session.OutcomeSuccess
		if res.Capsule.Status == "failure" {
			res.Outcome = session.OutcomeFailure
		}
		return res
	case sdk.StopReasonCancelled:
		s.cancel("the agent cancelled its turn")
		res.Outcome = session.OutcomeCancelled
		return res
	}
	why := map[sdk.StopReason]string{
		sdk.StopReasonRefusal:         "the agent refused to go on (stop reason refusal)",
		sdk.StopReasonMaxTokens:       "the agent's reply was cut off at its token limit (stop reason max_tokens)",
		sdk.StopReasonMaxTurnRequests: "the agent reached its limit of model requests in one turn (stop reason max_turn_requests)",
	}[stop]
	if why == "" {
		why = fmt.Sprintf("the agent ended its turn with stop reason %q", stop)
	}
	r := fail("acp agent "+a.Name, errors.New(why), "")
	r.Capsule, r.ToolCalls, r.Artifacts, r.Tokens = res.Capsule, res.ToolCalls, res.Artifacts, res.Tokens
	return r
}

// acpElapse brings a simulated clock forward by the wall-clock time the agent took since
// wallStart (when simStart was the simulated time), so the recorded duration of the run is
// the real one rather than zero: the agent ran on the wall clock while simulated time stood
// still. It stays short of the deadline (the timeout's own timer fires there, and a run that
// returned did not time out) and never goes back (acpTimeout may have reached the deadline).
func (x *Orchestrator) acpElapse(wallStart, simStart, deadline time.Time) {
	now := x.clock.Now()
	d := time.Since(wallStart) - now.Sub(simStart)
	d = min(d, deadline.Sub(now)-time.Millisecond).Truncate(time.Millisecond)
	if d > 0 {
		_ = x.clock.Sleep(context.Background(), d)
	}
}

// acpTimeout records, when the subagent's time ran out, that the agent did not finish, with
// its stderr tail. Under a simulated clock the wall-clock budget ended first: the clock is
// brought to the deadline so the timeout fires where the wall clock says it did.
func (x *Orchestrator) acpTimeout(s *sub, deadline time.Time, stderr string) {
	if x.clock.Simulated() && s.ctx.Err() == nil {
		// Then once more at that time: the timer armed at the start of the run may have begun
		// its wait after this one, and waiters of one time wake in the order they began.
		if x.clock.Sleep(s.ctx, deadline.Sub(x.clock.Now())) == nil {
			_ = x.clock.Sleep(s.ctx, 0)
		}
	}
	s.mu.Lock()
	timedOut := s.timedOut
	s.mu.Unlock()
	if !timedOut {
		return
	}
	msg := fmt.Sprintf("the agent did not finish within the subagent's timeout (%ds): its session was cancelled and its processes killed", s.cmd.Timeout)
	_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: msg})
	_, _ = x.emit(s.id, session.SubagentError{Error: msg, Attempt: 1, Context: "acp agent", Stderr: stderr})
}

// acpCapsule is the result capsule from the agent's last message, with summit's refusals as
// policy notes.
func acpCapsule(text, agentName string, notes []string) *protocols.Capsule {
	var c protocols.Capsule
	if strings.TrimSpace(text) != "" {
		c = protocols.ParseCapsule(text, agentName)
	} else {
		c = protocols.Capsule{AgentName: agentName, Summary: "(no output)"}
	}
	c.PolicyNotes = append(c.PolicyNotes, notes...)
	return &c
}

// acpNextInput is what goes to the agent after a turn that ended well: what the user typed to
// it meanwhile, else, while it holds control (a --transfer-control handoff) and its turn ended
// without a result capsule or with a question, the user's next message. ok is false when the
// run is over.
func (x *Orchestrator) acpNextInput(ctx context.Context, s *sub, text string) (string, bool, error) {
	if m := s.pending(); len(m) > 0 {
		return strings.Join(m, "\n\n"), true, nil
	}
	x.mu.Lock()
	control := x.state.Control == s.id
	x.mu.Unlock()
	if !control {
		return "", false, nil
	}
	c := protocols.ParseCapsule(text, s.def.Name)
	noCapsule := slices.ContainsFunc(c.ParseWarnings, func(w string) bool { return strings.HasPrefix(w, "no fenced JSON capsule") })
	if !noCapsule && !strings.HasSuffix(strings.TrimSpace(text), "?") {
		return "", false, nil
	}
	if _, err := x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "waiting for a user message"}); err != nil {
		return "", false, err
	}
	m, err := s.next(ctx)
	return m, err == nil, err
}

// acpApprove asks about what an external agent wants through the orchestrator's approve path;
// Always reports a grant for the whole subagent (summit's "allow for sa-N").
func (x *Orchestrator) acpApprove(s *sub, tool string, args map[string]any, reason string) (acp.Grant, error) {
	// PreToolUse hooks (hooks.go) see the request first: a deny refuses it with the hook's
	// reason; allow and ask leave it to the decision below (a hook never widens it).
	if canon, _ := agents.CanonicalTool(tool); x.o.Hooks.Any("PreToolUse") {
		if d, why, err := x.preToolUse(s.ctx, s, "", canon, args); err != nil || d == "deny" {
			return acp.Grant{Reason: why}, err
		}
	}
	if x.clock.Simulated() && x.o.Approve == "" {
		// Nobody can answer: the agent runs while the simulated clock stands still.
		return acp.Grant{Reason: x.refuseUnanswerable(s, tool, args, reason)}, nil
	}
	ok, why, err := x.approve(s, tool, args, reason)
	if err != nil {
		return acp.Grant{}, err
	}
	x.mu.Lock()
	always := x.grants[s.id][tool]
	x.mu.Unlock()
	return acp.Grant{Allowed: ok, Always: ok && always, Reason: why}, nil
}

// refuseUnanswerable records a permission request that nobody can answer, and its denial.
func (x *Orchestrator) refuseUnanswerable(s *sub, tool string, args map[string]any, reason string) string {
	why := "an external agent runs on the wall clock while this headless session's clock is simulated: nobody can answer; use --approve"
	x.mu.Lock()
	x.nextPR++
	r := &request{id: fmt.Sprintf("pr-%d", x.nextPR), s: s, tool: tool, ev: x.clock.NewEvent(), settled: true}
	x.requests[r.id] = r
	x.mu.Unlock()
	if _, err := x.emit(s.id, session.PermissionRequested{RequestID: r.id, Tool: tool, Args: args, Reason: reason}); err == nil {
		_, _ = x.emit(s.id, session.PermissionDenied{RequestID: r.id, Reason: why, By: "summit"})
	}
	return why
}
