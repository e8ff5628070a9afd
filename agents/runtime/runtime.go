// Package runtime is the agent loop (DESIGN §1, §5, §6): the delegation prompt goes to a
// provider, the streamed turn becomes transcript events, each tool call is checked against the
// subagent's policy (deny, ask the user, or allow), run in the workspace sandbox, and its result
// goes back to the model; this repeats until the model ends with a final message or max_turns
// is reached. The final message is parsed into a result capsule.
//
// The runtime emits only events about its own subagent, through Config.Emit, in the order they
// happen: TranscriptEvent (token, thinking, tool_call, policy_denied, tool_result, message,
// error), PermissionRequested/Granted/Denied (via Config.Approve, which the orchestrator owns),
// and SubagentError. The orchestrator emits the lifecycle events around it (spawn, active,
// timeout, cancel, stop).
//
// Token and thinking deltas are coalesced: one event per Coalesce interval (30 ms) of clock
// time, flushed early before any other event, so recordings stay small and still stream.
package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// Clock is the part of the session clock the loop needs (live.Clock satisfies it).
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
	Simulated() bool
}

// Approver asks for a decision on a tool call that needs approval; it records the
// PermissionRequested and the decision. It returns whether the call may run and, if not, why.
type Approver func(ctx context.Context, tool string, args map[string]any, reason string) (bool, string, error)

// Config is one subagent run.
type Config struct {
	Agent     *agents.Definition
	AgentType string // as the user typed it (--agent-type)
	Policy    agents.Policy
	Provider  provider.Provider
	Model     string
	Sandbox   *tools.Sandbox
	System    string // the delegation prompt (protocols.BuildPrompt)
	Task      string
	MaxTurns  int       // default 25
	Deadline  time.Time // clock time by which the run must end; tools get what is left
	Clock     Clock
	Emit      func(session.Data) error
	Approve   Approver
	// Inbox waits for the next user message to this subagent (a transfer-control handoff);
	// Pending drains the ones already queued. Either may be nil.
	Inbox    func(ctx context.Context) (string, error)
	Pending  func() []string
	Retries  int                             // transient provider failures retried per turn; default 2
	Backoff  func(attempt int) time.Duration // default 500ms·2^(attempt-1)
	Coalesce time.Duration                   // default 30ms
	// MCP are the MCP tools of the grant (agents/mcp.Toolset), offered besides the sandbox's
	// and called through their servers; nil = none.
	MCP MCPTools
	// Usage, when set, is told the run's tokens so far after each model attempt (a budget
	// watches it; it may cancel the run's context).
	Usage func(session.Tokens)
	// BeforeStop, when set, is called when the model ends with a final message (not one that
	// waits for the user), with that message's text. A non-empty reply goes to the model as a
	// new user message and the run takes another turn (a SubagentStop hook that blocked the
	// stop; the caller records it and bounds how often); "" lets the run end.
	BeforeStop func(ctx context.Context, final string) (string, error)
	// PreTool, when set, runs the user's PreToolUse hooks before each call (after its
	// arguments decode, before the policy decides): decision "deny" refuses the call with
	// reason as its error; "ask" makes a call the policy allows ask the user; "allow" and ""
	// leave the policy's verdict as it is, so a hook never widens what the policy allows.
	PreTool func(ctx context.Context, callID, tool string, args map[string]any) (decision, reason string, err error)
	// PostTool, when set, runs the user's PostToolUse hooks after a call ran, with its result;
	// a non-empty note is added to the result the model reads.
	PostTool func(ctx context.Context, callID, tool string, args map[string]any, output string, isErr bool) (note string, err error)
}

// MCPTools are the tools of MCP servers a subagent may call, by qualified name
// (mcp__<server>__<tool>); Policy.Tools lists them too, so the policy decides as for any tool.
type MCPTools interface {
	Specs() []provider.ToolSpec
	Has(tool string) bool
	// Allowed reports whether the tool runs without asking in mode (the server's allow list).
	Allowed(tool string, mode agents.PermissionMode) bool
	// Call runs the tool with the model's argument text; failures are error results.
	Call(ctx context.Context, tool, args string) tools.Result
	// Notes are policy notes on the grant (entries dropped or matching nothing).
	Notes() []string
}

// Result is what a run produced. On failure, timeout or cancellation it still carries what the
// subagent had: a capsule from the text so far, tool counts and artifacts.
type Result struct {
	Outcome   string // session.Outcome*; the orchestrator maps ctx errors to timeout/cancelled
	Capsule   *protocols.Capsule
	ToolCalls int
	Artifacts []string
	Tokens    session.Tokens
	Err       error
}

// DefaultMaxTurns bounds a run whose definition sets no max_turns.
const DefaultMaxTurns = 25

type loop struct {
	c       Config
	ctx     context.Context
	msgs    []provider.Message
	notes   []string
	res     Result
	text    strings.Builder // the current turn's assistant text
	last    string          // the last finished assistant text
	pend    strings.Builder // coalesced token text not yet emitted
	pendK   string          // its event type (token or thinking)
	pendAt  time.Time
	written map[string]bool
	// lastUsage is the tokens the last model attempt reported (its ModelTurn's).
	lastUsage session.Tokens
}

// Run runs the loop until a final message, an error, or ctx ends.
func Run(ctx context.Context, c Config) Result {
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.Retries == 0 {
		c.Retries = 2
	}
	if c.Backoff == nil {
		c.Backoff = func(a int) time.Duration { return 500 * time.Millisecond << (a - 1) }
	}
	if c.Coalesce == 0 {
		c.Coalesce = 30 * time.Millisecond
	}
	l := &loop{c: c, ctx: ctx, written: map[string]bool{}}
	if c.MCP != nil { // MCP hook
		l.notes = append(l.notes, c.MCP.Notes()...)
	}
	l.msgs = []provider.Message{{Role: provider.RoleUser, Text: c.Task}}
	err := l.run()
	l.flush()
	l.finish(err)
	return l.res
}

// emit records one event; buffered tokens go first so the record keeps stream order.
func (l *loop) emit(d session.Data) error {
	if err := l.flushErr(); err != nil {
		return err
	}
	return l.c.Emit(d)
}

func (l *loop) run() error {
	// paused is the text of the turns the server paused (Anthropic's pause_turn) since the
	// last tool call: the answer they continue starts with it.
	var paused string
	for turn := 0; ; turn++ {
		if turn >= l.c.MaxTurns {
			return fmt.Errorf("reached max_turns (%d) without a final message", l.c.MaxTurns)
		}
		if l.c.Pending != nil && turn > 0 && len(l.msgs) > 0 && l.msgs[len(l.msgs)-1].Role == provider.RoleTool {
			// Messages the user sent during tool calls join the conversation with the results.
			for _, m := range l.c.Pending() {
				l.msgs = append(l.msgs, provider.Message{Role: provider.RoleUser, Text: m})
			}
		}
		msg, stop, err := l.turnWithRetry(turn)
		if err != nil {
			return err
		}
		l.msgs = append(l.msgs, msg)
		if len(msg.ToolCalls) > 0 {
			paused = ""
			for _, call := range msg.ToolCalls {
				if err := l.toolCall(call); err != nil {
					return err
				}
			}
			continue
		}
		if stop == provider.StopPause {
			// Not an answer: the assistant content goes back as it is (now the last message)
			// and the model continues its turn (Anthropic: "provide the response back as-is
			// in a subsequent request to let Claude continue its turn").
			paused += msg.Text
			continue
		}
		l.last = paused + msg.Text
		paused = ""
		if stop == provider.StopAwaitUser {
			if err := l.emit(session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "waiting for a user message"}); err != nil {
				return err
			}
			if l.c.Inbox == nil {
				return errors.New("the agent asked for user input, and nobody can answer here")
			}
			m, err := l.c.Inbox(l.ctx)
			if err != nil {
				return err
			}
			l.msgs = append(l.msgs, provider.Message{Role: provider.RoleUser, Text: m})
			continue
		}
		if l.c.BeforeStop != nil {
			more, err := l.c.BeforeStop(l.ctx, msg.Text)
			if err != nil {
				return err
			}
			if more != "" {
				l.msgs = append(l.msgs, provider.Message{Role: provider.RoleUser, Text: more})
				continue
			}
		}
		return nil
	}
}

// maxRetryWait bounds the wait before a retry when the run has no deadline: a server that asks
// for longer (a daily quota resetting in hours) fails the subagent with its reason instead.
const maxRetryWait = 10 * time.Minute

// turnWithRetry streams one turn, retrying transient failures. Each failed attempt is recorded
// as a SubagentError (will_retry says whether another attempt follows) whose text says how
// long the loop waits: the backoff, or longer when the server asked for it (Retry-After and
// the rate-limit reset headers, in provider.Error.RetryAfter). A wait that would end after the
// run's deadline is not started: the attempt fails at once and says why.
func (l *loop) turnWithRetry(turn int) (provider.Message, string, error) {
	for attempt := 1; ; attempt++ {
		msg, stop, err := l.turn(turn, attempt)
		// Every model call is recorded where it ends, after its text and before its tool
		// calls, with the tokens the provider reported for it (billed even when it failed).
		how := stop
		if err != nil {
			how = "error"
		}
		if eerr := l.emit(session.ModelTurn{Turn: turn + 1, Attempt: attempt, Tokens: l.lastUsage, Stop: how, Model: l.c.Model}); eerr != nil && err == nil {
			return msg, stop, eerr
		}
		if err == nil {
			return msg, stop, nil
		}
		if l.ctx.Err() != nil {
			return msg, stop, l.ctx.Err()
		}
		transient := provider.IsTransient(err)
		retry := transient && attempt <= l.c.Retries
		text := err.Error()
		var wait time.Duration
		var note string
		if retry {
			wait, note = l.retryWait(attempt, err)
			if note != "" {
				retry = false
			}
		}
		// A model out of capacity (overloaded, rate-limited, out of quota) that its retries
		// did not cure hands the rest of the run to the next model of its fallback chain.
		overload := provider.Overload(err)
		var to provider.Link
		fall := false
		if fb, ok := l.c.Provider.(provider.Fallbacker); ok && !retry && overload != "" {
			to, fall = fb.NextFallback()
		}
		switch {
		case fall && note != "":
			text = fmt.Sprintf("%s (attempt %d; not retried: %s; %s takes over, the next model of its fallback chain)", text, attempt, note, to)
		case fall:
			text = fmt.Sprintf("%s (attempt %d; %s takes over, the next model of its fallback chain)", text, attempt, to)
		case note != "":
			text = fmt.Sprintf("%s (attempt %d; not retried: %s)", text, attempt, note)
		case retry:
			text = fmt.Sprintf("%s (attempt %d; retrying in %s)", text, attempt, wait)
			if ra := provider.RetryAfterOf(err); ra > 0 && ra >= wait {
				text = strings.TrimSuffix(text, ")") + ", as the server asked)"
			}
		}
		if eerr := l.emit(session.TranscriptEvent{EventType: session.TranscriptError, Text: text}); eerr != nil {
			return msg, stop, eerr
		}
		will := retry || fall
		if eerr := l.emit(session.SubagentError{Error: text, Retryable: transient, Attempt: attempt, WillRetry: &will,
			Context: fmt.Sprintf("provider %s, turn %d", l.c.Provider.Name(), turn+1)}); eerr != nil {
			return msg, stop, eerr
		}
		if fall {
			// The switch is recorded (a ModelRouted with from, through the provider's switch reporter)
			// with why; the next model starts with a fresh retry budget.
			why := fmt.Sprintf("%s after %s", overload, session.Plural(attempt, "attempt"))
			if note != "" {
				why += " (" + note + ")"
			}
			if next, ok := l.c.Provider.(provider.Fallbacker).Fallback(l.ctx, fmt.Errorf("%s: %w", why, err)); ok {
				l.c.Model = next.Model
				attempt = 0
				continue
			}
		}
		if !retry {
			return msg, stop, &reported{err}
		}
		if serr := l.c.Clock.Sleep(l.ctx, wait); serr != nil {
			return msg, stop, serr
		}
	}
}

// retryWait is how long to wait before the next attempt: the backoff, or the server's
// Retry-After when longer. note is non-empty when the wait is not worth starting: it would
// end after the run's deadline, or exceed maxRetryWait.
func (l *loop) retryWait(attempt int, err error) (time.Duration, string) {
	wait := max(l.c.Backoff(attempt), provider.RetryAfterOf(err))
	asked := "a retry would come in " + wait.String()
	if ra := provider.RetryAfterOf(err); ra > 0 && ra >= wait {
		asked = "the server asks to wait " + wait.String() + " before retrying"
	}
	if !l.c.Deadline.IsZero() {
		if left := l.c.Deadline.Sub(l.c.Clock.Now()); wait >= left {
			return wait, fmt.Sprintf("%s, and the subagent's time runs out in %s", asked, max(left, 0).Round(time.Millisecond))
		}
		return wait, ""
	}
	if wait > maxRetryWait {
		return wait, fmt.Sprintf("%s, longer than summit waits (%s)", asked, maxRetryWait)
	}
	return wait, ""
}

// reported marks an error already recorded as a SubagentError.
type reported struct{ error }

func (r *reported) Unwrap() error { return r.error }

// turn streams one model turn and returns the assistant message it built.
func (l *loop) turn(turn, attempt int) (provider.Message, string, error) {
	req := provider.Request{
		Model: l.c.Model, System: l.c.System, Messages: l.msgs, Tools: l.toolSpecs(),
		Temperature: l.c.Agent.Temperature, Agent: l.c.Agent.Name, AgentType: l.c.AgentType,
		Task: l.c.Task, Turn: turn, Attempt: attempt,
	}
	msg := provider.Message{Role: provider.RoleAssistant}
	st, err := l.c.Provider.Stream(l.ctx, req)
	if err != nil {
		return msg, "", err
	}
	defer st.Close()
	src := newSource(l.ctx, st, l.c.Clock.Simulated())
	defer src.stop()
	l.text.Reset()
	var thinking strings.Builder
	var usage provider.Usage
	// Tokens count whether or not the attempt succeeds: a failed attempt was billed too.
	defer func() {
		l.lastUsage = session.Tokens{Input: usage.Input, Output: usage.Output}
		l.res.Tokens.Input += usage.Input
		l.res.Tokens.Output += usage.Output
		if l.c.Usage != nil && (usage.Input > 0 || usage.Output > 0) {
			l.c.Usage(l.res.Tokens)
		}
	}()
	stop, stopDetail := "", ""
	for {
		d, err := src.next(l.flushDue())
		if err == errFlush {
			l.flush()
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return msg, "", err
		}
		switch d.Kind {
		case provider.DeltaText:
			l.text.WriteString(d.Text)
			if err := l.token(session.TranscriptToken, d.Text); err != nil {
				return msg, "", err
			}
		case provider.DeltaThinking:
			if d.Redacted != "" {
				msg.Thinking = append(msg.Thinking, provider.Thinking{Redacted: d.Redacted})
				continue
			}
			thinking.WriteString(d.Text)
			if d.Signature != "" {
				msg.Thinking = append(msg.Thinking, provider.Thinking{Text: thinking.String(), Signature: d.Signature})
				thinking.Reset()
			}
			if d.Text != "" {
				if err := l.token(session.TranscriptThinking, d.Text); err != nil {
					return msg, "", err
				}
			}
		case provider.DeltaToolCall:
			msg.ToolCalls = append(msg.ToolCalls, d.ToolCall)
		case provider.DeltaUsage:
			usage = d.Usage
		case provider.DeltaStop:
			stop, stopDetail = d.StopReason, d.StopDetail
		}
	}
	if thinking.Len() > 0 {
		msg.Thinking = append(msg.Thinking, provider.Thinking{Text: thinking.String()})
	}
	l.flush()
	msg.Text = l.text.String()
	switch stop {
	case "":
		return msg, "", &provider.Error{Provider: l.c.Provider.Name(), Transient: true, Msg: "stream ended without a stop reason"}
	case provider.StopMaxTokens:
		// A reply cut at the token limit is not an answer, and its tool calls may be cut too;
		// the same request would be cut again, so it is not retried.
		if stopDetail == "" {
			stopDetail = stop
		}
		return msg, "", &provider.Error{Provider: l.c.Provider.Name(),
			Msg: fmt.Sprintf("the reply was cut off at the token limit (the server said %s)", stopDetail)}
	}
	return msg, stop, nil
}

// token adds a delta to the coalescing buffer; a change of kind flushes first.
func (l *loop) token(kind, text string) error {
	if l.pend.Len() > 0 && l.pendK != kind {
		l.flush()
	}
	if l.pend.Len() == 0 {
		l.pendK, l.pendAt = kind, l.c.Clock.Now()
	}
	l.pend.WriteString(text)
	if !l.flushDue().IsZero() && !l.c.Clock.Now().Before(l.flushDue()) {
		return l.flushErr()
	}
	return nil
}

// flushDue is when the buffered tokens must be emitted (zero when none are buffered).
func (l *loop) flushDue() time.Time {
	if l.pend.Len() == 0 {
		return time.Time{}
	}
	return l.pendAt.Add(l.c.Coalesce)
}

func (l *loop) flush() { _ = l.flushErr() }

func (l *loop) flushErr() error {
	if l.pend.Len() == 0 {
		return nil
	}
	text := l.pend.String()
	l.pend.Reset()
	return l.c.Emit(session.TranscriptEvent{EventType: l.pendK, Text: text})
}

// toolCall records, checks and runs one call, and appends its result to the conversation.
func (l *loop) toolCall(call provider.ToolCall) error {
	name := call.Name
	if canon, ok := agents.CanonicalTool(name); ok {
		name = canon
	}
	args, argErr := decodeArgs(call.Args)
	l.res.ToolCalls++
	if err := l.emit(session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: call.ID, Tool: name, Args: args}); err != nil {
		return err
	}
	result := func(out string, isErr bool) error {
		l.msgs = append(l.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: out, IsError: isErr})
		return l.emit(session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: call.ID, Tool: name, Result: out, IsError: isErr})
	}
	deny := func(reason string) error {
		l.notes = append(l.notes, fmt.Sprintf("%s refused: %s", name, reason))
		if err := l.emit(session.TranscriptEvent{EventType: session.TranscriptPolicyDenied, Tool: name, Reason: reason}); err != nil {
			return err
		}
		return result(provider.DeniedPrefix+reason, true)
	}
	if argErr != nil {
		return result(argErr.Error(), true)
	}
	hookDecision, hookReason := "", ""
	if l.c.PreTool != nil {
		var err error
		if hookDecision, hookReason, err = l.c.PreTool(l.ctx, call.ID, name, args); err != nil {
			return err
		}
		if hookDecision == "deny" {
			return deny(hookReason)
		}
	}
	dec := l.c.Policy.Decide(name)
	var fetchHosts []string // plan mode: the hosts this web_fetch may reach
	if dec.Verdict == agents.Allow && name == agents.ToolWebFetch && l.c.Policy.Mode == agents.ModePlan {
		// Plan mode reads without asking, but a fetch also sends the URL to whoever runs the
		// host: only the hosts the config names go without asking.
		host, ok := l.c.Sandbox.FetchHost(call.Args)
		if !ok {
			dec = agents.Decision{Verdict: agents.Ask, Reason: fmt.Sprintf("web_fetch of %s asks in plan: only hosts in web_allow_hosts are fetched without asking", host)}
		}
		fetchHosts = append(l.c.Sandbox.AllowedHosts(), host)
	}
	mcpTool := l.c.MCP != nil && l.c.MCP.Has(name) // MCP hook: the server's allow list
	if mcpTool && dec.Verdict == agents.Ask && l.c.MCP.Allowed(name, l.c.Policy.Mode) {
		dec = agents.Decision{Verdict: agents.Allow, Reason: name + " runs without asking (an MCP allow list)"}
	}
	if hookDecision == "ask" && dec.Verdict == agents.Allow {
		// A hook may narrow (ask about a call the policy allows), never widen.
		dec = agents.Decision{Verdict: agents.Ask, Reason: "a PreToolUse hook asks: " + hookReason}
	}
	switch dec.Verdict {
	case agents.Deny:
		return deny(dec.Reason)
	case agents.Ask:
		if l.c.Approve == nil {
			return deny(dec.Reason + "; nobody can approve here")
		}
		ok, why, err := l.c.Approve(l.ctx, name, args, dec.Reason)
		if err != nil {
			return err
		}
		if !ok {
			return deny(why)
		}
	}
	if !tools.Known(name) && !mcpTool {
		return deny(fmt.Sprintf("%s is not a tool summit can run", name))
	}
	tctx, cancel := l.toolContext()
	if fetchHosts != nil {
		tctx = tools.WithFetchHosts(tctx, fetchHosts...)
	}
	var r tools.Result
	if mcpTool { // MCP hook: the call goes to its server
		r = l.c.MCP.Call(tctx, name, call.Args)
	} else {
		r = l.c.Sandbox.Call(tctx, name, call.Args)
	}
	cancel()
	if err := l.ctx.Err(); err != nil {
		return err
	}
	if tctx.Err() == context.DeadlineExceeded && l.c.Clock.Simulated() {
		// The simulated clock did not move while the tool ran on the wall clock; let it reach
		// the deadline so the timeout fires where the wall clock says it did.
		if err := l.c.Clock.Sleep(l.ctx, l.c.Deadline.Sub(l.c.Clock.Now())); err != nil {
			return err
		}
	}
	for _, p := range r.Written {
		if !l.written[p] {
			l.written[p] = true
			l.res.Artifacts = append(l.res.Artifacts, p)
		}
	}
	if l.c.PostTool != nil {
		note, err := l.c.PostTool(l.ctx, call.ID, name, args, r.Output, r.IsError)
		if err != nil {
			return err
		}
		if note != "" {
			r.Output += "\n\n" + note
		}
	}
	return result(r.Output, r.IsError)
}

// toolContext bounds a tool by the run's remaining time. Under a simulated clock a tool runs
// on the wall clock, so it gets the simulated time left as a wall-clock budget.
func (l *loop) toolContext() (context.Context, context.CancelFunc) {
	if l.c.Deadline.IsZero() || !l.c.Clock.Simulated() {
		return context.WithCancel(l.ctx)
	}
	return context.WithTimeout(l.ctx, l.c.Deadline.Sub(l.c.Clock.Now()))
}

// decodeArgs decodes a call's argument text for the record. Malformed text becomes an error
// the model sees as the tool's result, and the record keeps the raw text under "_raw".
func decodeArgs(text string) (map[string]any, error) {
	if strings.TrimSpace(text) == "" {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil || m == nil {
		return map[string]any{"_raw": text}, fmt.Errorf("tool arguments are not a JSON object: %s", firstLine(errString(err, "null")))
	}
	return m, nil
}

func errString(err error, def string) string {
	if err == nil {
		return def
	}
	return err.Error()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// toolSpecs are the specs of the grant's tools: the sandbox's, then the MCP servers'.
func (l *loop) toolSpecs() []provider.ToolSpec {
	out := toolSpecs(l.c.Policy.Tools)
	if l.c.MCP != nil { // MCP hook
		out = append(out, l.c.MCP.Specs()...)
	}
	return out
}

func toolSpecs(names []string) []provider.ToolSpec {
	var out []provider.ToolSpec
	for _, s := range tools.Specs(names) {
		out = append(out, provider.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	return out
}

// finish sets the outcome and builds the capsule from the last message (or, when the run
// ended early, from whatever text it had).
func (l *loop) finish(err error) {
	text := l.last
	if err != nil && l.text.Len() > 0 {
		text = l.text.String()
	}
	var c protocols.Capsule
	if strings.TrimSpace(text) != "" || err == nil {
		c = protocols.ParseCapsule(text, l.c.Agent.Name)
	} else {
		c = protocols.Capsule{AgentName: l.c.Agent.Name, Summary: "(no output)"}
	}
	c.PolicyNotes = append(c.PolicyNotes, l.notes...)
	l.res.Capsule = &c
	l.res.Err = err
	switch {
	case err == nil && c.Status == "failure":
		l.res.Outcome = session.OutcomeFailure
	case err == nil:
		l.res.Outcome = session.OutcomeSuccess
	default:
		l.res.Outcome = session.OutcomeFailure
		var rep *reported
		if !errors.As(err, &rep) && l.ctx.Err() == nil {
			// Not yet recorded (max_turns, a recording failure, an unanswerable ask).
			_ = l.emit(session.TranscriptEvent{EventType: session.TranscriptError, Text: err.Error()})
			_ = l.emit(session.SubagentError{Error: err.Error(), Attempt: 1, Context: "agent loop"})
		}
	}
}
