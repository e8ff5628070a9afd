package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/session"
)

// client is summit's side of the connection (sdk.Client): it records the agent's session
// updates as transcript events, answers its permission requests through the subagent's policy
// and the user, and serves its file reads and writes and its terminals from the sandbox.
//
// Ordering: updates arrive on one goroutine in the agent's order; requests arrive on goroutines
// of their own. A request first waits until the updates the agent sent before it are recorded
// (barrier), so a permission request follows the tool call it is about in the recording.
type client struct {
	r *Run

	mu        sync.Mutex // guards everything below; held while emitting, never while waiting
	sid       sdk.SessionId
	pendKind  string // the kind of the gathered deltas: token or thinking
	pend      strings.Builder
	timer     *time.Timer
	calls     map[sdk.ToolCallId]*toolCall
	open      []*toolCall // calls without a result, in order
	text      strings.Builder
	toolCalls int
	written   []string
	shellOK   []string // shell commands the user approved in a permission request
	mode      string   // the agent mode summit set (setMode); "" when it has none
	done      uint64   // session/update notifications handled
	emitErr   error
	terms     map[string]*terminal
	nextTerm  int
	closed    bool
	inflight  sync.WaitGroup

	// emit and approve record and ask for this client's subagent: the run's (Config.Emit,
	// Config.Approve), or a child's (its ChildSink).
	emit    func(session.Data) error
	approve func(ctx context.Context, tool string, args map[string]any, reason string) (Grant, error)
	// top is the run's own client, for a child's; nil for the run's. Only top has children,
	// and only top's SessionUpdate is called: it hands a child's updates to the child's client,
	// whose mu it takes while holding its own (lock order: top, then child).
	top      *client
	children map[sdk.SessionId]*childLane

	// What the agent said about its own failures (run-level, on the run's client): its last
	// error, when it came, whether the agent said it gives up (no retry follows), when it
	// last did anything else, and the requests it has in flight. The watchdog (stall) fails a
	// run that reported an error and then went quiet.
	lastErr string
	// turnErr is the error an agent gave as its turn's message (codexTurnError); a turn that
	// ends with it left failed, though its stop reason is end_turn.
	turnErr   string
	lastErrAt time.Time
	gaveUp    bool
	activity  time.Time
	requests  int
}

func newClient(r *Run) *client {
	return &client{r: r, calls: map[sdk.ToolCallId]*toolCall{}, terms: map[string]*terminal{},
		emit: r.c.Emit, approve: r.c.Approve}
}

// root is the run's own client.
func (c *client) root() *client {
	if c.top != nil {
		return c.top
	}
	return c
}

var _ sdk.Client = (*client)(nil)

// enter registers a request handler; false once the run is closing.
func (c *client) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.inflight.Add(1)
	c.requests++
	c.activity = time.Now()
	return true
}

func (c *client) leave() {
	c.mu.Lock()
	c.requests--
	c.activity = time.Now()
	c.mu.Unlock()
	c.inflight.Done()
}

// sawError records an error the agent reported (a Codex error notice, an error line on its
// stderr); final says it will not retry. c.mu is held.
func (c *client) sawErrorLocked(msg string, final bool) {
	c.lastErr, c.lastErrAt, c.gaveUp = msg, time.Now(), final
}

// stall is why the run should be failed: the agent's last word was an error, nothing else
// happened for quiet (short when it said it gives up) and it has no call or request open;
// "" otherwise.
func (c *client) stall(quiet, final time.Duration) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastErr == "" || c.activity.After(c.lastErrAt) || len(c.open) > 0 || c.requests > 0 {
		return ""
	}
	wait := quiet
	if c.gaveUp {
		wait = final
	}
	if time.Since(c.lastErrAt) < wait {
		return ""
	}
	return fmt.Sprintf("the agent reported an error and then made no progress for %s: %s", wait.Round(time.Second), c.lastErr)
}

// barrier waits until the updates the agent wrote before now are recorded (at most 2 s: an
// update the SDK could not decode is never handled, and must not stall the request).
func (c *client) barrier(ctx context.Context) {
	target := c.r.guard.Updates()
	deadline := time.Now().Add(2 * time.Second)
	top := c.root()
	for {
		top.mu.Lock()
		done := top.done
		top.mu.Unlock()
		if done >= target || time.Now().After(deadline) || ctx.Err() != nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// emitLocked records d after the gathered deltas. c.mu is held.
func (c *client) emitLocked(d session.Data) {
	c.flushLocked()
	c.send(d)
}

func (c *client) send(d session.Data) {
	if err := c.emit(d); err != nil && c.emitErr == nil {
		c.emitErr = err
	}
}

// delta gathers message or thought text: one event per Coalesce, or sooner when anything
// else is recorded.
func (c *client) deltaLocked(kind, text string) {
	if text == "" {
		return
	}
	if c.pend.Len() > 0 && c.pendKind != kind {
		c.flushLocked()
	}
	c.pendKind = kind
	c.pend.WriteString(text)
	if c.timer == nil {
		c.timer = time.AfterFunc(c.r.c.Coalesce, func() {
			c.mu.Lock()
			c.timer = nil
			c.flushLocked()
			c.mu.Unlock()
		})
	}
}

func (c *client) flushLocked() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if c.pend.Len() == 0 {
		return
	}
	text := c.pend.String()
	c.pend.Reset()
	c.send(session.TranscriptEvent{EventType: c.pendKind, Text: text})
}

// note records a line about the run in the transcript.
func (c *client) note(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptMessage, Text: text})
}

// stderrNote shows a line of the agent's stderr; isErr marks it as the run's last error.
func (c *client) stderrNote(text string, isErr bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptMessage, Text: text})
	if isErr {
		c.sawErrorLocked(strings.TrimPrefix(text, "stderr: "), false)
	}
}

func (c *client) setMode(mode string) {
	c.mu.Lock()
	c.mode = mode
	c.mu.Unlock()
}

func (c *client) setSession(id sdk.SessionId) {
	c.mu.Lock()
	c.sid = id
	c.mu.Unlock()
}

func (c *client) startTurn() {
	c.mu.Lock()
	c.text.Reset()
	c.turnErr = ""
	c.mu.Unlock()
}

// endTurn records what the turn left: the gathered deltas, and a result for every call the
// agent never reported the end of.
func (c *client) endTurn(failed bool) Turn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.top == nil {
		// The children's work ends with the turn that started them (ACP ties a child's
		// updates to its parent's prompt turn): what they never reported is disconnected.
		c.endChildrenLocked()
	}
	c.flushLocked()
	for _, tc := range append([]*toolCall(nil), c.open...) {
		why := "the turn ended before the agent reported how this call ended"
		if failed {
			why = "the agent stopped before it reported how this call ended"
		}
		c.endLocked(tc, why, true)
	}
	return Turn{Text: c.text.String()}
}

// SessionUpdate records one update of the agent's session.
func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() { c.done++ }()
	if c.closed {
		return nil
	}
	u := n.Update
	if si := u.SessionInfoUpdate; si != nil && si.Meta[childMetaKey] != nil {
		c.childUpdateLocked(n.SessionId, si.Meta[childMetaKey])
		return nil
	}
	if msg, final, ok := agentError(u); ok {
		// Its own report of a failure (Codex: a model request that failed, and whether it
		// retries): shown as it comes, and remembered for the watchdog.
		c.flushLocked()
		text := "the agent reports an error: " + msg
		if !final {
			text += " (it retries)"
		}
		c.send(session.TranscriptEvent{EventType: session.TranscriptError, Text: text})
		c.sawErrorLocked(msg, final)
		return nil
	}
	c.activity = time.Now()
	l := c
	if c.sid != "" && n.SessionId != c.sid {
		// A child's update goes to its client; one of a session nobody announced is dropped
		// (the agent must announce a child before its first update).
		ch := c.children[n.SessionId]
		if ch == nil || ch.ended {
			return nil
		}
		l = ch.cl
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	l.updateLocked(u)
	return nil
}

// agentError reads an error an agent reports outside a message: codex-acp's session_info_update
// _meta.codex.error {message, willRetry, codexErrorInfo} (to a client without typed session
// failures, as summit is), sent for each failed model request ("Reconnecting… n/5" in its own
// UI) and, without willRetry, when it gives up.
func agentError(u sdk.SessionUpdate) (msg string, final, ok bool) {
	si := u.SessionInfoUpdate
	if si == nil {
		return "", false, false
	}
	cx, _ := si.Meta["codex"].(map[string]any)
	e, _ := cx["error"].(map[string]any)
	if e == nil {
		return "", false, false
	}
	msg, _ = e["message"].(string)
	if info, ok := e["codexErrorInfo"]; ok && info != nil {
		if b, err := json.Marshal(info); err == nil && string(b) != "null" {
			msg += " (" + string(b) + ")"
		}
	}
	retry, _ := e["willRetry"].(bool)
	return strings.TrimSpace(session.Sanitize(msg)), !retry, true
}

// updateLocked records one update of c's session. c.mu is held.
func (c *client) updateLocked(u sdk.SessionUpdate) {
	switch {
	case u.AgentMessageChunk != nil:
		t := blockText(u.AgentMessageChunk.Content)
		if msg, ok := codexTurnError(c.r.info.AgentInfo, t); ok {
			// Codex ends a turn whose model request failed for good (a 400) by sending the
			// provider's error body as its message, then end_turn: an error, not its answer.
			c.flushLocked()
			c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptError, Text: "the agent reports an error: " + msg})
			c.turnErr = msg
			break
		}
		if modeNotice().MatchString(t) || codexNotice(c.r.info.AgentInfo, u.AgentMessageChunk) {
			// Gemini CLI's answer to session/set_mode, or a Codex warning, sent as a message
			// chunk: a notice, not part of the turn's text.
			c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptMessage, Text: strings.TrimSpace(t)})
			break
		}
		c.text.WriteString(t)
		c.deltaLocked(session.TranscriptToken, t)
	case u.AgentThoughtChunk != nil:
		c.deltaLocked(session.TranscriptThinking, blockText(u.AgentThoughtChunk.Content))
	case u.ToolCall != nil:
		t := u.ToolCall
		c.seeLocked(t.ToolCallId, fields{title: &t.Title, kind: &t.Kind, status: &t.Status, content: t.Content,
			locs: t.Locations, input: t.RawInput, output: t.RawOutput, meta: t.Meta})
	case u.ToolCallUpdate != nil:
		t := u.ToolCallUpdate
		c.seeLocked(t.ToolCallId, fields{title: t.Title, kind: t.Kind, status: t.Status, content: t.Content,
			locs: t.Locations, input: t.RawInput, output: t.RawOutput, meta: t.Meta})
	case u.Plan != nil:
		c.emitLocked(planEvent(u.Plan.Entries))
	case u.CurrentModeUpdate != nil:
		id := string(u.CurrentModeUpdate.CurrentModeId)
		c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptMessage,
			Text: fmt.Sprintf("the agent switched to its %s mode", id)})
		if c.top == nil && c.mode != "" && id != c.mode && !restrictive(id) {
			// A mode in which the agent decides for itself (it approved its own plan, say):
			// summit sets it back, and goes on answering its requests.
			c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptMessage,
				Text: fmt.Sprintf("summit sets the agent back to its %s mode: summit's %s decides what it may do", c.mode, c.r.c.Mode)})
			go c.r.restoreMode(c.mode)
		}
	}
	// user_message_chunk echoes our prompt; commands, config options, session info and usage
	// updates change nothing summit shows.
}

// blockText is a content block as transcript text.
func blockText(b sdk.ContentBlock) string {
	switch {
	case b.Text != nil:
		return b.Text.Text
	case b.ResourceLink != nil:
		return fmt.Sprintf("[%s](%s)", b.ResourceLink.Name, b.ResourceLink.Uri)
	case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
		return b.Resource.Resource.TextResourceContents.Text
	case b.Resource != nil && b.Resource.Resource.BlobResourceContents != nil:
		return "[binary resource]"
	case b.Image != nil:
		return "[image]"
	case b.Audio != nil:
		return "[audio]"
	}
	return ""
}

// planEvent is a plan update as a transcript message of tool "plan": the entries one per line
// (✓ done, ▸ in progress, · pending) and, in args, the step in progress (else the first
// pending one) that the tree shows.
func planEvent(entries []sdk.PlanEntry) session.TranscriptEvent {
	var b strings.Builder
	b.WriteString("plan:")
	step, next, done := "", "", 0
	for _, e := range entries {
		mark := "·"
		switch e.Status {
		case sdk.PlanEntryStatusCompleted:
			mark = "✓"
			done++
		case sdk.PlanEntryStatusInProgress:
			mark = "▸"
			if step == "" {
				step = e.Content
			}
		default:
			if next == "" {
				next = e.Content
			}
		}
		fmt.Fprintf(&b, "\n%s %s", mark, strings.Join(strings.Fields(e.Content), " "))
	}
	if step == "" {
		step = next
	}
	return session.TranscriptEvent{EventType: session.TranscriptMessage, Tool: session.PlanTool, Text: b.String(),
		Args: map[string]any{"step": step, "done": done, "total": len(entries)}}
}

// RequestPermission answers through the subagent's policy: denied outright (plan mode and an
// edit, say), allowed outright (an edit in acceptEdits), or asked of the user as a summit
// permission request. The agent's options are mapped: an allow becomes its allow_once (its
// allow_always when the user allowed it for the whole subagent and the agent accepts that), a
// denial its reject_once.
func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}
	if !c.enter() {
		return cancelled, nil
	}
	defer c.leave()
	c.barrier(ctx)
	c = c.route(p.SessionId) // a child's request is recorded on, and asked for, the child
	tu := p.ToolCall
	c.mu.Lock()
	tc := c.seeLocked(tu.ToolCallId, fields{title: tu.Title, kind: tu.Kind, status: tu.Status, content: tu.Content,
		locs: tu.Locations, input: tu.RawInput, output: tu.RawOutput, meta: tu.Meta})
	tool, args, title := tc.tool(), tc.args(), tc.title
	c.flushLocked()
	c.mu.Unlock()
	var offered []string
	for _, o := range p.Options {
		offered = append(offered, fmt.Sprintf("%s (%s)", o.Name, o.Kind))
	}
	args["options"] = offered

	dec := c.decide(tool)
	if out := c.outside(tc); out != "" && dec.Verdict != agents.Deny {
		// Summit's own tools never reach past the worktree: a change there is refused, a read
		// asks.
		switch agents.ClassOf(tool) {
		case agents.ClassWrite:
			dec = agents.Decision{Verdict: agents.Deny, Reason: fmt.Sprintf("%s is outside the subagent's worktree", out)}
		case agents.ClassRead:
			dec = agents.Decision{Verdict: agents.Ask, Reason: fmt.Sprintf("%s reads %s, outside the subagent's worktree", tool, out)}
		}
	}
	switch dec.Verdict {
	case agents.Deny:
		c.deny(tc, tool, dec.Reason)
		return pick(p.Options, sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways), nil
	case agents.Allow:
		c.allowShell(tool, tc)
		return pick(p.Options, sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways), nil
	}
	reason := dec.Reason
	if title != "" {
		reason += "; the agent asks: " + title
	}
	g, err := c.approve(ctx, tool, args, reason)
	if err != nil {
		return cancelled, nil
	}
	if !g.Allowed {
		c.deny(tc, tool, g.Reason)
		return pick(p.Options, sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways), nil
	}
	c.allowShell(tool, tc)
	if g.Always && !c.refusesAlways() {
		return pick(p.Options, sdk.PermissionOptionKindAllowAlways, sdk.PermissionOptionKindAllowOnce), nil
	}
	return pick(p.Options, sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways), nil
}

// outside is the first location of the call that is not in the sandbox's root ("" when all
// are, or it names none).
func (c *client) outside(tc *toolCall) string {
	root := c.r.c.Sandbox.Root()
	for _, l := range tc.locs {
		p := l.Path
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
			return l.Path
		}
	}
	return ""
}

// refusesAlways reports agents that refuse allow_always here: Gemini CLI does in a folder it
// does not trust, and a subagent's worktree is a folder it has never seen. Summit's own grant
// still answers the agent's later requests without asking the user again.
func (c *client) refusesAlways() bool {
	ai := c.r.info.AgentInfo
	return ai != nil && ai.Name == "gemini-cli"
}

// modeNotice is a mode change an agent reports as message text ("[MODE_UPDATE] autoEdit").
var modeNotice = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[MODE_UPDATE\] \S+$`) })

// pick answers with the first option of the first kind offered; cancelled when none is.
func pick(options []sdk.PermissionOption, kinds ...sdk.PermissionOptionKind) sdk.RequestPermissionResponse {
	for _, k := range kinds {
		for _, o := range options {
			if o.Kind == k {
				return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(o.OptionId)}
			}
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}
}

// decide applies the subagent's policy to a canonical tool; kinds summit has no tool for ask
// like an MCP tool (their effects are unknown), and leaving the agent's plan mode is a write.
func (c *client) decide(tool string) agents.Decision {
	mode := c.r.c.Mode
	if mode == agents.ModePlan && agents.ClassOf(tool) == agents.ClassShell {
		// An external agent's command can change files like an edit (it runs in the
		// worktree, or in the agent's own process): in plan it is refused, not asked.
		return agents.Decision{Verdict: agents.Deny, Reason: tool + " could change files; plan mode is read-only for an external agent"}
	}
	if agents.ClassOf(tool) == agents.ClassMCP {
		// One of the agent's own MCP tools (its configured servers, or those summit passed
		// it): not among summit's tool set, and with effects summit cannot tell, so decided
		// like the shell: asked, unasked in bypassPermissions.
		return agents.Decide(mode, tool)
	}
	if _, ok := agents.CanonicalTool(tool); ok {
		return c.r.c.Decide(tool)
	}
	switch tool {
	case string(sdk.ToolKindThink):
		return agents.Decision{Verdict: agents.Allow, Reason: "thinking changes nothing"}
	case string(sdk.ToolKindSwitchMode):
		if mode == agents.ModePlan {
			return agents.Decision{Verdict: agents.Deny, Reason: "the agent asks to leave its plan mode; plan mode is read-only"}
		}
	}
	if mode == agents.ModeBypass {
		return agents.Decision{Verdict: agents.Allow, Reason: "allowed in bypassPermissions"}
	}
	return agents.Decision{Verdict: agents.Ask, Reason: fmt.Sprintf("the agent's %s tool has effects summit cannot tell; it asks each time in %s", tool, mode)}
}

// gate applies the policy to something the agent asks summit itself to do (read, write, run):
// nil when it may.
func (c *client) gate(ctx context.Context, tool string, args map[string]any, what string) error {
	dec := c.decide(tool)
	switch dec.Verdict {
	case agents.Allow:
		return nil
	case agents.Deny:
		c.deny(nil, tool, dec.Reason)
		return &sdk.RequestError{Code: -32603, Message: tool + " refused: " + dec.Reason}
	}
	c.mu.Lock()
	c.flushLocked()
	c.mu.Unlock()
	g, err := c.approve(ctx, tool, args, dec.Reason+"; the agent asks summit to "+what)
	switch {
	case err != nil:
		return &sdk.RequestError{Code: -32800, Message: "Request cancelled"}
	case !g.Allowed:
		c.deny(nil, tool, g.Reason)
		return &sdk.RequestError{Code: -32603, Message: tool + " denied: " + g.Reason}
	}
	return nil
}

// deny records a refusal (policy_denied) and ends the call it was about, if any.
func (c *client) deny(tc *toolCall, tool, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptPolicyDenied, Tool: tool, Reason: reason})
	if tc != nil && !tc.ended {
		c.endLocked(tc, "denied: "+reason, true)
	}
}

// allowShell remembers the commands of an allowed shell call, so the terminal the agent then
// asks for to run one of them does not ask the user a second time.
func (c *client) allowShell(tool string, tc *toolCall) {
	if tool != agents.ToolShell {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := tc.input.(map[string]any); ok {
		switch v := m["command"].(type) {
		case string:
			c.shellOK = append(c.shellOK, normSpace(v))
		case []any:
			var parts []string
			for _, x := range v {
				parts = append(parts, fmt.Sprint(x))
			}
			c.shellOK = append(c.shellOK, normSpace(strings.Join(parts, " ")))
		}
	}
	if tc.title != "" {
		c.shellOK = append(c.shellOK, normSpace(tc.title))
	}
}

// takeShellOK consumes an approval of one of the candidate command lines.
func (c *client) takeShellOK(candidates ...string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ok := range c.shellOK {
		for _, cand := range candidates {
			if cand != "" && normSpace(cand) == ok {
				c.shellOK = append(c.shellOK[:i], c.shellOK[i+1:]...)
				return true
			}
		}
	}
	return false
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// close ends the terminals and waits (a bounded time) for the requests in flight.
func (c *client) close() {
	c.mu.Lock()
	c.endChildrenLocked() // before closed: their last words are recorded
	c.closed = true
	c.flushLocked()
	terms := make([]*terminal, 0, len(c.terms))
	for _, t := range c.terms {
		terms = append(terms, t)
	}
	c.mu.Unlock()
	for _, t := range terms {
		t.stop()
	}
	waited := make(chan struct{})
	go func() { c.inflight.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
	}
}

// ToolCalls counts the tool calls the agent reported.
func (r *Run) ToolCalls() int {
	r.cl.mu.Lock()
	defer r.cl.mu.Unlock()
	return r.cl.toolCalls
}

// Written lists the workspace-relative paths the agent wrote through fs/write_text_file.
func (r *Run) Written() []string {
	r.cl.mu.Lock()
	defer r.cl.mu.Unlock()
	return append([]string(nil), r.cl.written...)
}

// EmitErr is the first recording failure, or nil.
func (r *Run) EmitErr() error {
	r.cl.mu.Lock()
	defer r.cl.mu.Unlock()
	return r.cl.emitErr
}

// compact renders a JSON value on one line, at most n bytes.
func compact(v any, n int) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// turnError is the error the agent gave as its message in the turn that just ended, or "".
func (c *client) turnError() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turnErr
}
