package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/tools"
)

// Terminals run through the sandbox's run_shell_command: in the worktree, in a process group
// of their own that is killed when the command ends, is killed or the run ends, confined to
// writing the worktree (Landlock, where the kernel has it), with secrets left out of the
// environment. That shell returns its output when the command ends, so terminal/output shows
// nothing while the command runs and everything (up to outputByteLimit, the end kept) after.

// terminal is one terminal/create.
type terminal struct {
	id     string
	line   string // the shell line it runs
	limit  int    // outputByteLimit; 0 = none
	cancel context.CancelFunc
	done   chan struct{}
	res    tools.Result // set before done closes
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// shQuote quotes s for bash.
func shQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellLine is a terminal/create request as one bash line: cd to its cwd (which must be in
// the root), its env exported, its command (a shell line when it has no args; a program and
// quoted args otherwise).
func shellLine(root string, p sdk.CreateTerminalRequest) (string, error) {
	var b strings.Builder
	if p.Cwd != nil && *p.Cwd != "" && filepath.Clean(*p.Cwd) != root {
		cwd := filepath.Clean(*p.Cwd)
		if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(root, cwd)
		}
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real
		}
		if rel, err := filepath.Rel(root, cwd); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("cwd %s is outside the workspace %s", *p.Cwd, root)
		}
		b.WriteString("cd " + shQuote(cwd) + " && ")
	}
	for _, e := range p.Env {
		if !envName().MatchString(e.Name) {
			return "", fmt.Errorf("env %q is not a variable name", e.Name)
		}
		b.WriteString("export " + e.Name + "=" + shQuote(e.Value) + "; ")
	}
	if strings.TrimSpace(p.Command) == "" {
		return "", fmt.Errorf("command is empty")
	}
	if len(p.Args) == 0 {
		b.WriteString(p.Command)
	} else {
		b.WriteString(shQuote(p.Command))
		for _, a := range p.Args {
			b.WriteString(" " + shQuote(a))
		}
	}
	return b.String(), nil
}

// commandCandidates are the ways an approved command may have been written: the whole line,
// and for `bash -c SCRIPT` the script.
func commandCandidates(p sdk.CreateTerminalRequest) []string {
	out := []string{strings.Join(append([]string{p.Command}, p.Args...), " ")}
	if n := len(p.Args); n >= 2 && (p.Args[n-2] == "-c" || p.Args[n-2] == "-lc") {
		out = append(out, p.Args[n-1])
	}
	return out
}

// CreateTerminal serves terminal/create: the policy decides (plan refuses, the shell asks in
// acceptEdits, unless the user just allowed this very command in a permission request), then
// the command starts.
func (c *client) CreateTerminal(ctx context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	if !c.enter() {
		return sdk.CreateTerminalResponse{}, &sdk.RequestError{Code: -32800, Message: "Request cancelled"}
	}
	defer c.leave()
	c.barrier(ctx)
	root := c.r.c.Sandbox.Root()
	line, err := shellLine(root, p)
	if err != nil {
		return sdk.CreateTerminalResponse{}, &sdk.RequestError{Code: -32602, Message: "terminal/create: " + err.Error()}
	}
	l := c.route(p.SessionId) // a child's command is asked for on the child; terminals are the run's
	if !l.takeShellOK(commandCandidates(p)...) {
		if err := l.gate(ctx, agents.ToolShell, map[string]any{"command": line}, "run "+line); err != nil {
			return sdk.CreateTerminalResponse{}, err
		}
	}
	tctx, cancel := context.WithCancel(context.Background())
	t := &terminal{line: line, cancel: cancel, done: make(chan struct{})}
	if p.OutputByteLimit != nil && *p.OutputByteLimit > 0 {
		t.limit = *p.OutputByteLimit
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return sdk.CreateTerminalResponse{}, &sdk.RequestError{Code: -32800, Message: "Request cancelled"}
	}
	c.nextTerm++
	t.id = "term-" + strconv.Itoa(c.nextTerm)
	c.terms[t.id] = t
	c.mu.Unlock()
	args, _ := json.Marshal(map[string]any{"command": line})
	go func() {
		t.res = c.r.c.Sandbox.Call(tctx, agents.ToolShell, string(args))
		close(t.done)
	}()
	return sdk.CreateTerminalResponse{TerminalId: t.id}, nil
}

func (c *client) terminal(id string) (*terminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.terms[id]
	if t == nil {
		return nil, &sdk.RequestError{Code: -32002, Message: "Resource not found: no terminal " + id, Data: map[string]any{"uri": id}}
	}
	return t, nil
}

// TerminalOutput serves terminal/output: nothing while the command runs; its output (the last
// outputByteLimit bytes) and exit status once it has ended.
func (c *client) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	select {
	case <-t.done:
	default:
		return sdk.TerminalOutputResponse{Output: ""}, nil
	}
	out, code, sig := t.result()
	out, cut := tailBytes(out, t.limit)
	return sdk.TerminalOutputResponse{Output: out, Truncated: cut, ExitStatus: &sdk.TerminalExitStatus{ExitCode: code, Signal: sig}}, nil
}

// WaitForTerminalExit serves terminal/wait_for_exit.
func (c *client) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	if !c.enter() {
		return sdk.WaitForTerminalExitResponse{}, &sdk.RequestError{Code: -32800, Message: "Request cancelled"}
	}
	defer c.leave()
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, &sdk.RequestError{Code: -32800, Message: "Request cancelled"}
	}
	_, code, sig := t.result()
	return sdk.WaitForTerminalExitResponse{ExitCode: code, Signal: sig}, nil
}

// KillTerminal serves terminal/kill: the command's process group is killed (SIGTERM, then
// SIGKILL after the shell's grace period); the terminal stays until released.
func (c *client) KillTerminal(_ context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	t.stop()
	return sdk.KillTerminalResponse{}, nil
}

// ReleaseTerminal serves terminal/release: killed if still running, then forgotten.
func (c *client) ReleaseTerminal(_ context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	t.stop()
	c.mu.Lock()
	delete(c.terms, p.TerminalId)
	c.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

// stop kills the command and waits for the shell to have reaped it (bounded).
func (t *terminal) stop() {
	t.cancel()
	select {
	case <-t.done:
	case <-time.After(10 * time.Second):
	}
}

var (
	exitCodeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n?\[exit code (-?\d+)\]$`) })
	signalRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n?\[killed by signal ([^\]]+)\]$`) })
	stoppedRE  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\n?\[([^\]]*); the command and its process group were killed\]$`)
	})
)

// result is the output without the shell's closing note, and the exit code or signal that
// note gives. t.done is closed.
func (t *terminal) result() (string, *int, *string) {
	out := t.res.Output
	if !t.res.IsError {
		zero := 0
		return out, &zero, nil
	}
	if m := exitCodeRE().FindStringSubmatchIndex(out); m != nil {
		n, _ := strconv.Atoi(out[m[2]:m[3]])
		return out[:m[0]], &n, nil
	}
	if m := signalRE().FindStringSubmatchIndex(out); m != nil {
		sig := signalName(out[m[2]:m[3]])
		return out[:m[0]], nil, &sig
	}
	if m := stoppedRE().FindStringSubmatchIndex(out); m != nil {
		sig := "SIGKILL"
		return out[:m[0]] + "\n[" + out[m[2]:m[3]] + "]", nil, &sig
	}
	one := 1 // the shell could not run it at all
	return out, &one, nil
}

// signalName turns Go's signal text ("killed", "terminated") into a signal name.
func signalName(s string) string {
	switch s {
	case "killed":
		return "SIGKILL"
	case "terminated":
		return "SIGTERM"
	case "interrupt":
		return "SIGINT"
	case "hangup":
		return "SIGHUP"
	}
	return s
}

// tailBytes keeps the last limit bytes of s (0: all), starting on a character.
func tailBytes(s string, limit int) (string, bool) {
	if limit <= 0 || len(s) <= limit {
		return s, false
	}
	cut := len(s) - limit
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:], true
}

// transcript is the terminal as a tool result shows it: the command, then its output and how
// it ended (nothing yet while it runs).
func (t *terminal) transcript() string {
	select {
	case <-t.done:
	default:
		return "$ " + t.line + "\n[running]"
	}
	out, code, sig := t.result()
	end := ""
	switch {
	case sig != nil:
		end = "\n[signal " + *sig + "]"
	case code != nil && *code != 0:
		end = fmt.Sprintf("\n[exit code %d]", *code)
	}
	return "$ " + t.line + "\n" + strings.TrimRight(out, "\n") + end
}
