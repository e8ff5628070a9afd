package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// Bounds on what a hook's output costs. Variables, so tests can shorten them.
var (
	maxOutput = 64 << 10               // bytes of stdout and of stderr kept from one run
	drainWait = 300 * time.Millisecond // output still open after the hook's group is gone
)

// Limits of what a HookRan carries.
const (
	maxReason = 4 << 10 // a block's reason, as the subagent gets it
	maxStderr = 2 << 10 // the stderr excerpt recorded
)

// Options configure a Runner.
type Options struct {
	// Hooks are the configured hooks (provider.Config.Hooks).
	Hooks provider.Hooks
	// WorkspaceTrusted lets the workspace file's hooks run; the user's always do.
	WorkspaceTrusted bool
	// Environ is the environment hooks start from (default os.Environ()); it is reduced to an
	// allow-list (tools.AllowEnv with PassEnv) before any hook sees it.
	Environ []string
	// PassEnv names variables passed besides the allow-list (the config's env_passthrough).
	PassEnv []string
	// Redactor redacts the stdin payload and the recorded output (default: one built from
	// Environ, as the recorder's).
	Redactor *record.Redactor
}

// Runner decides which hooks run for an event and runs them. It is safe for concurrent use.
type Runner struct {
	events    map[string][]entry
	maxBlocks int
	env       []string
	red       *record.Redactor
	skipped   int // workspace hooks left out because they are not trusted
}

type entry struct {
	provider.Hook
	re *regexp.Regexp
}

// New builds a Runner. Entries were checked by provider.LoadConfig; one whose matcher does not
// compile here is left out (it cannot match anything safely).
func New(o Options) *Runner {
	env := o.Environ
	if env == nil {
		env = os.Environ()
	}
	r := &Runner{events: map[string][]entry{}, maxBlocks: o.Hooks.MaxBlocks, env: tools.AllowEnv(env, o.PassEnv), red: o.Redactor}
	if r.maxBlocks <= 0 {
		r.maxBlocks = provider.DefaultHookMaxBlocks
	}
	if r.red == nil {
		r.red = record.NewRedactor(env)
	}
	for ev, list := range o.Hooks.Events {
		for _, h := range list {
			if h.Workspace && !o.WorkspaceTrusted {
				r.skipped++
				continue
			}
			re, err := provider.CompileMatcher(h.Matcher)
			if err != nil {
				continue
			}
			r.events[ev] = append(r.events[ev], entry{h, re})
		}
	}
	return r
}

// MaxBlocks is how many times SubagentStop hooks may block one subagent's stop.
func (r *Runner) MaxBlocks() int { return r.maxBlocks }

// Skipped is how many workspace hooks are left out because the workspace is not trusted.
func (r *Runner) Skipped() int { return r.skipped }

// Any reports whether some hook is configured for event (a nil Runner has none).
func (r *Runner) Any(event string) bool { return r != nil && len(r.events[event]) > 0 }

// Matching are the hooks of event whose matcher matches the agent type or the agent name, in
// configuration order (the user's first). An event about no agent (agentType and agentName
// empty) runs only the hooks without a matcher.
func (r *Runner) Matching(event, agentType, agentName string) []provider.Hook {
	if r == nil {
		return nil
	}
	var out []provider.Hook
	for _, e := range r.events[event] {
		if e.re == nil || agentType != "" && e.re.MatchString(agentType) || agentName != "" && e.re.MatchString(agentName) {
			out = append(out, e.Hook)
		}
	}
	return out
}

// MatchingTool are the hooks of a tool event (PreToolUse, PostToolUse, PostToolUseFailure)
// whose matcher matches the call's tool, with Claude Code's semantics: the whole name, "|"
// alternatives, a regular expression, "" or "*" for every tool. A tool answers to summit's
// canonical name and to Claude Code's names for it (Bash is run_shell_command, Edit and
// MultiEdit are replace, Write, Read, Glob, Grep, WebFetch...); an MCP tool to its
// mcp__server__tool name, as in Claude Code.
func (r *Runner) MatchingTool(event, tool string) []provider.Hook {
	if r == nil {
		return nil
	}
	names := append([]string{tool}, claudeNames[tool]...)
	var out []provider.Hook
	for _, e := range r.events[event] {
		if e.re == nil || slices.ContainsFunc(names, e.re.MatchString) {
			out = append(out, e.Hook)
		}
	}
	return out
}

// MatchingValue are the hooks of event whose matcher matches v (Notification: its
// notification_type), or that have none.
func (r *Runner) MatchingValue(event, v string) []provider.Hook {
	if r == nil {
		return nil
	}
	var out []provider.Hook
	for _, e := range r.events[event] {
		if e.re == nil || e.re.MatchString(v) {
			out = append(out, e.Hook)
		}
	}
	return out
}

// Result is how one run of a hook ended.
type Result struct {
	ExitCode int    // -1 when it did not exit by itself
	Outcome  string // session.HookOK, HookBlocked, HookFailed, HookTimeout, HookError
	Duration time.Duration
	Reason   string // a block's or a decision's reason, or why it failed
	Stderr   string // the end of its stderr, redacted
	// Decision is a PreToolUse hook's allow, deny or ask ("" = none).
	Decision string
	// Context is a note for the model: PostToolUse's or UserPromptSubmit's additionalContext.
	Context string
}

// Event is the HookRan that records r for hook h of hookEvent, triggered by the event of seq
// trigger (0: none recorded yet).
func (r Result) Event(h provider.Hook, hookEvent string, trigger uint64) session.HookRan {
	src := "user"
	if h.Workspace {
		src = "workspace"
	}
	ev := session.HookRan{HookEvent: hookEvent, Command: h.Command, Source: src, TriggerSeq: trigger,
		ExitCode: r.ExitCode, Outcome: r.Outcome, DurationMS: r.Duration.Milliseconds(), Reason: r.Reason, Stderr: r.Stderr, Decision: r.Decision}
	if r.Context != "" && r.Outcome == session.HookOK {
		ev.Decision, ev.Reason = "context", r.Context
	}
	return ev
}

// Kind is what a hook's exit code 2 and its stdout decision may do: it follows the event.
type Kind int

const (
	// Observe: the hook cannot change anything; exit code 2 and a block are failures.
	Observe Kind = iota
	// BlockStop: a SubagentStop or Stop hook run before the stop; a block sends the subagent
	// back to work with the reason.
	BlockStop
	// PreTool: a PreToolUse hook; exit code 2 or deny (permissionDecision, or the older
	// decision: block) refuses the call with the reason; allow (or approve) and ask are
	// Result.Decision for the caller to combine with the policy (never widening it).
	PreTool
	// PostTool: a PostToolUse hook; exit code 2 or decision: block feeds the reason to the
	// model (the call already ran), additionalContext adds a note for the model.
	PostTool
	// Prompt: a UserPromptSubmit hook; exit code 2 or decision: block withholds the message
	// (the reason goes to the user, not the model); additionalContext, or plain stdout with
	// exit code 0, is added to the message.
	Prompt
)

// Run runs one hook: bash -c command in dir, payload on stdin, the scrubbed environment, in a
// process group of its own. It returns when the command has exited or was killed at its
// timeout (or when ctx ends); either way the whole group is then sent SIGKILL, so nothing it
// started outlives it (what a hook wants to keep must leave the group with setsid), and a
// child still holding its stdout or stderr delays the return by at most drainWait. Only a
// SubagentStop hook run with blockable can block: otherwise exit code 2 and
// {"decision":"block"} are failures (recorded, with no effect).
func (r *Runner) Run(ctx context.Context, h provider.Hook, dir string, payload []byte, blockable bool) Result {
	if blockable {
		return r.RunAs(ctx, h, BlockStop, dir, payload)
	}
	return r.RunAs(ctx, h, Observe, dir, payload)
}

// RunAs is Run for a hook of kind k (what its decision may do).
func (r *Runner) RunAs(ctx context.Context, h provider.Hook, k Kind, dir string, payload []byte) Result {
	start := time.Now()
	res := r.run(ctx, h, dir, r.red.Redact(payload), k)
	res.Duration = time.Since(start)
	res.Reason = clipText(r.red.RedactText(res.Reason), maxReason, false)
	res.Context = clipText(r.red.RedactText(res.Context), maxReason, false)
	res.Stderr = clipText(r.red.RedactText(res.Stderr), maxStderr, true)
	return res
}

func (r *Runner) run(ctx context.Context, h provider.Hook, dir string, payload []byte, k Kind) Result {
	fail := func(err error) Result { return Result{ExitCode: -1, Outcome: session.HookError, Reason: err.Error()} }
	// Our own pipes, not exec's copying goroutines: Wait then returns when bash exits even if
	// a background child still holds a pipe, and the ends can be closed to stop the copies.
	inR, inW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return fail(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return fail(err)
	}
	defer outR.Close()
	defer errR.Close()
	// A session of its own (no controlling terminal), no terminal device and no TIOCSTI
	// (tools.GuardedCommand): a hook is the user's own command, so nothing else is fenced.
	// CLAUDE_PROJECT_DIR is the workspace, as Claude Code sets it for its hooks (its settings
	// name scripts "$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh); session/trust covers those.
	cmd, err := tools.GuardedCommand(append(slices.Clip(r.env), "CLAUDE_PROJECT_DIR="+dir), "bash", "-c", h.Command)
	if err == nil {
		cmd.Dir = dir
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		err = cmd.Start()
	}
	inR.Close() // only the hook holds these ends now
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		return fail(fmt.Errorf("could not start: %v", err))
	}
	pgid := cmd.Process.Pid // Setsid: the group is named after its leader's pid

	// The payload is written while the hook runs; a hook that never reads it leaves the
	// writer blocked until the pipe is closed below.
	var inOnce sync.Once
	closeIn := func() { inOnce.Do(func() { inW.Close() }) }
	go func() {
		_, _ = inW.Write(payload)
		closeIn()
	}()
	stdout, stderr := &headBuf{max: maxOutput}, &tailBuf{max: maxOutput}
	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); io.Copy(stdout, outR) }()
	go func() { defer copies.Done(); io.Copy(stderr, errR) }()
	copied := make(chan struct{})
	go func() { copies.Wait(); close(copied) }()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timeout := time.Duration(h.TimeoutOr()) * time.Second
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	stopped := ""
	select {
	case err = <-waited:
	case <-ctx.Done():
		stopped = "cancelled: its subagent or the session stopped"
	case <-timer.C:
		stopped = fmt.Sprintf("timed out after %s", timeout)
	}
	// The whole group goes now: after a timeout everything; after a normal exit, whatever the
	// hook left running (bash is reaped only after a stop, below, so its pid cannot have been
	// reused yet in that case).
	syscall.Kill(-pgid, syscall.SIGKILL)
	if stopped != "" {
		err = <-waited
	}
	closeIn()
	drain := time.NewTimer(drainWait)
	select {
	case <-copied:
	case <-drain.C:
		outR.Close() // unblocks the copies: the pipes are pollable
		errR.Close()
		<-copied
	}
	drain.Stop()

	res := Result{ExitCode: -1, Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case stopped != "":
		res.Outcome, res.Reason = session.HookTimeout, stopped+"; the hook and its process group were killed"
		if ctx.Err() != nil {
			res.Outcome = session.HookError
		}
		return res
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Outcome, res.Reason = session.HookFailed, "killed by signal "+ws.Signal().String()
			return res
		}
	case err != nil:
		res.Outcome, res.Reason = session.HookError, err.Error()
		return res
	default:
		res.ExitCode = 0
	}
	if res.ExitCode != 0 && res.ExitCode != 2 {
		res.Outcome, res.Reason = session.HookFailed, fmt.Sprintf("exit code %d", res.ExitCode)
		if l := lastLine(res.Stderr); l != "" {
			res.Reason += ": " + l
		}
		return res
	}
	out := stdout.Bytes()
	d := parseDecision(out)
	if res.ExitCode == 0 && d.Continue != nil && !*d.Continue {
		// Claude Code's "continue": false stops its whole agent; summit has none, and a
		// hook does not end a subagent: it is read as a block of what the hook decides on.
		d.Decision = "block"
		if d.Reason == "" {
			d.Reason = d.StopReason
		}
	}
	blocked := res.ExitCode == 2 || d.Decision == "block" ||
		k == PreTool && (d.Specific.PermissionDecision == "deny" || d.Decision == "deny")
	reason := strings.TrimSpace(d.Reason)
	if d.Specific.PermissionDecisionReason != "" {
		reason = strings.TrimSpace(d.Specific.PermissionDecisionReason)
	}
	if res.ExitCode == 2 {
		// Claude Code's rule: with exit code 2 stdout is not read, stderr is the reason.
		reason = strings.TrimSpace(res.Stderr)
	}
	switch k {
	case PreTool:
		switch {
		case blocked:
			res.Decision = "deny"
		case d.Specific.PermissionDecision == "allow" || d.Decision == "approve" || d.Decision == "allow":
			res.Decision = "allow"
		case d.Specific.PermissionDecision == "ask" || d.Decision == "ask":
			res.Decision = "ask"
		}
		if res.Decision != "" {
			res.Reason = reason
		}
		if res.Decision == "deny" && res.Reason == "" {
			res.Reason = "a PreToolUse hook denied the call without giving a reason"
		}
	case PostTool, Prompt:
		res.Context = strings.TrimSpace(d.Specific.AdditionalContext)
		if k == Prompt && res.ExitCode == 0 && res.Context == "" && len(bytes.TrimSpace(out)) > 0 && !d.json {
			res.Context = strings.TrimSpace(string(out)) // Claude Code: plain stdout is context
		}
		if blocked {
			res.Reason = reason
			if res.Reason == "" {
				res.Reason = "a hook blocked without giving a reason"
			}
		}
	default:
		if blocked {
			res.Reason = reason
			if res.Reason == "" {
				res.Reason = "a SubagentStop hook blocked the stop without giving a reason"
			}
		}
	}
	switch {
	case !blocked:
		res.Outcome = session.HookOK
	case k == Observe:
		res.Outcome, res.Reason = session.HookFailed, "asked to block (exit code 2 or decision block), which only a SubagentStop hook (or Stop, PreToolUse, PostToolUse, UserPromptSubmit) of a subagent summit runs can: "+res.Reason
	default:
		res.Outcome = session.HookBlocked
	}
	return res
}

// decision is what a hook may print on stdout (Claude Code's shapes: the top-level decision
// and reason, and hookSpecificOutput).
type decision struct {
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Continue   *bool  `json:"continue"`
	StopReason string `json:"stopReason"`
	Specific   struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
	json bool // stdout was a JSON object
}

// parseDecision reads stdout as a decision object; anything else is no decision.
func parseDecision(b []byte) decision {
	var d decision
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &d) != nil {
		return decision{}
	}
	d.json = true
	return d
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return clipText(s, 200, false)
}

// clipText bounds s to n bytes at a rune boundary: its start, or with tail its end.
func clipText(s string, n int, tail bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	if tail {
		i := len(s) - n
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		return "…" + s[i:]
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// headBuf keeps the first max bytes written to it and discards the rest.
type headBuf struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (h *headBuf) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuf) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.b
}

// tailBuf keeps the last max bytes written to it (a reason or an error is at the end).
type tailBuf struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuf) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuf) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) > t.max {
		return string(t.b[len(t.b)-t.max:])
	}
	return string(t.b)
}
