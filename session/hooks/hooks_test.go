package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
)

func runner(t *testing.T, env ...string) *Runner {
	t.Helper()
	return New(Options{Environ: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)})
}

func TestRunOutcomes(t *testing.T) {
	r := runner(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name, cmd string
		blockable bool
		outcome   string
		code      int
		reason    string
	}{
		{"ok", "cat >/dev/null; echo fine", true, session.HookOK, 0, ""},
		{"exit 2 blocks with stderr", "echo 'add tests first' >&2; exit 2", true, session.HookBlocked, 2, "add tests first"},
		{"decision block on stdout", `echo '{"decision":"block","reason":"run go vet"}'`, true, session.HookBlocked, 0, "run go vet"},
		{"exit 2 without a reason", "exit 2", true, session.HookBlocked, 2, "without giving a reason"},
		{"exit 2 cannot block elsewhere", "echo no >&2; exit 2", false, session.HookFailed, 2, "only a SubagentStop hook"},
		{"other exit code fails", "echo broken >&2; exit 7", true, session.HookFailed, 7, "exit code 7: broken"},
		{"bad shell", "exit-not-a-command-xyz", true, session.HookFailed, 127, "exit code 127"},
	} {
		res := r.Run(context.Background(), provider.Hook{Command: c.cmd}, dir, []byte(`{"x":1}`), c.blockable)
		if res.Outcome != c.outcome || res.ExitCode != c.code || !strings.Contains(res.Reason, c.reason) {
			t.Errorf("%s: %+v, want %s exit %d reason containing %q", c.name, res, c.outcome, c.code, c.reason)
		}
	}
	res := r.Run(context.Background(), provider.Hook{Command: "true"}, filepath.Join(dir, "missing"), nil, true)
	if res.Outcome != session.HookError || res.ExitCode != -1 {
		t.Errorf("missing dir: %+v, want error", res)
	}
}

// A hook reads the payload on stdin and runs in the directory it is given.
func TestRunStdinAndDir(t *testing.T) {
	r := runner(t)
	dir := t.TempDir()
	in := Input{HookEvent: "SubagentStop", SessionID: "s-1", Workspace: dir, Cwd: dir, SubagentID: "sa-1", AgentType: "explore"}
	active, n := true, 1
	in.StopHookActive, in.BlockCount = &active, &n
	ev := session.New("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess})
	ev.Seq, ev.SessionID, ev.TS = 7, "s-1", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	payload, err := in.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), provider.Hook{Command: "cat > got.json; pwd > where"}, dir, payload, true)
	if res.Outcome != session.HookOK {
		t.Fatalf("%+v", res)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "got.json"))
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatalf("stdin %q: %v", got, err)
	}
	evm, _ := m["event"].(map[string]any)
	if m["hook_event_name"] != "SubagentStop" || m["stop_hook_active"] != true || m["block_count"] != 1.0 ||
		evm["seq"] != 7.0 || evm["type"] != "SubagentStop" || evm["subagent_id"] != "sa-1" {
		t.Errorf("stdin payload: %s", got)
	}
	where, _ := os.ReadFile(filepath.Join(dir, "where"))
	if real, _ := filepath.EvalSymlinks(dir); strings.TrimSpace(string(where)) != real && strings.TrimSpace(string(where)) != dir {
		t.Errorf("ran in %q, want %q", where, dir)
	}
}

// A hook that hangs is killed at its timeout, with a child it forked that holds its stdout;
// the call returns soon after the timeout.
func TestRunTimeoutKillsGroup(t *testing.T) {
	r := runner(t)
	dir := t.TempDir()
	for _, cmd := range []string{"sleep 1000", "(sleep 1000; echo late > late) & sleep 1000", "sleep 1000 & echo started; wait"} {
		start := time.Now()
		res := r.Run(context.Background(), provider.Hook{Command: cmd, Timeout: 1}, dir, nil, true)
		took := time.Since(start)
		if res.Outcome != session.HookTimeout || res.ExitCode != -1 || !strings.Contains(res.Reason, "timed out after 1s") {
			t.Errorf("%q: %+v, want timeout", cmd, res)
		}
		if took < time.Second || took > 3*time.Second {
			t.Errorf("%q took %s, want just over the 1s timeout", cmd, took)
		}
	}
	// The group is killed, not only bash: a child it forked is gone too.
	res := r.Run(context.Background(), provider.Hook{Command: "sleep 1000 & echo $! > child.pid; sleep 1000", Timeout: 1}, dir, nil, true)
	if res.Outcome != session.HookTimeout {
		t.Errorf("child pid hook: %+v", res)
	}
	assertGone(t, dir)
	// A hook that exits at once but leaves a child holding stdout does not hold the session.
	start := time.Now()
	res = r.Run(context.Background(), provider.Hook{Command: "sleep 1000 & echo $! > child.pid; echo done"}, dir, nil, true)
	if took := time.Since(start); res.Outcome != session.HookOK || took > 2*time.Second {
		t.Errorf("background child: %+v after %s, want ok at once", res, took)
	}
	assertGone(t, dir)
}

// assertGone checks that the process whose pid the hook wrote to dir/child.pid has ended
// (gone, or a zombie nobody reaped yet).
func assertGone(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	for i := 0; i < 50; i++ {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the hook's child %s outlived it", pid)
}

// The hook's environment is an allow-list: no secret-named variable, nor one whose name does
// not look secret (GITHUB_PAT, PLAIN); HOME and PATH stay.
func TestRunEnvScrubbed(t *testing.T) {
	r := runner(t, "SUMMIT_TEST_API_KEY=sk-verysecretvalue1234", "GITHUB_TOKEN=ghp_abcdefabcdef", "PLAIN=visible", "GITHUB_PAT=ghp_patpatpatpat")
	dir := t.TempDir()
	res := r.Run(context.Background(), provider.Hook{Command: "env > env.txt; echo sk-verysecretvalue1234 >&2; exit 3"}, dir, nil, true)
	env, _ := os.ReadFile(filepath.Join(dir, "env.txt"))
	if bytes.Contains(env, []byte("verysecret")) || bytes.Contains(env, []byte("GITHUB_TOKEN")) || bytes.Contains(env, []byte("PLAIN=")) ||
		bytes.Contains(env, []byte("GITHUB_PAT")) || !bytes.Contains(env, []byte("HOME=")) || !bytes.Contains(env, []byte("PATH=")) {
		t.Errorf("hook env:\n%s", env)
	}
	if strings.Contains(res.Stderr+res.Reason, "verysecret") || !strings.Contains(res.Stderr, "[REDACTED") {
		t.Errorf("stderr not redacted: %+v", res)
	}
}

func TestMatching(t *testing.T) {
	h := provider.Hooks{Events: map[string][]provider.Hook{
		"SubagentStop": {{Command: "all"}, {Command: "rev", Matcher: "code-reviewer"}, {Command: "re", Matcher: "explore|plan"}, {Command: "ws", Workspace: true}},
	}}
	names := func(hs []provider.Hook) string {
		var out []string
		for _, x := range hs {
			out = append(out, x.Command)
		}
		return strings.Join(out, ",")
	}
	r := New(Options{Hooks: h, Environ: []string{}})
	for _, c := range []struct{ typ, name, want string }{
		{"code-reviewer", "code-reviewer", "all,rev"}, {"explore", "explorer-x", "all,re"}, {"x", "plan", "all,re"},
		{"", "", "all"}, {"code-reviewer-2", "", "all"},
	} {
		if got := names(r.Matching("SubagentStop", c.typ, c.name)); got != c.want {
			t.Errorf("Matching(%q, %q) = %s, want %s", c.typ, c.name, got, c.want)
		}
	}
	if r.Skipped() != 1 || r.Any("SessionEnded") {
		t.Errorf("skipped %d (want the untrusted workspace hook), Any(SessionEnded) %v", r.Skipped(), r.Any("SessionEnded"))
	}
	if got := names(New(Options{Hooks: h, WorkspaceTrusted: true, Environ: []string{}}).Matching("SubagentStop", "", "")); got != "all,ws" {
		t.Errorf("trusted: %s", got)
	}
}

// Claude Code's decisions, by kind: a PreToolUse hook denies (exit 2 with stderr, JSON
// permissionDecision, the older decision block), allows or asks; a PostToolUse hook adds
// context; a UserPromptSubmit hook's plain stdout is context; a hook that hangs is killed at
// its timeout.
func TestRunAsDecisions(t *testing.T) {
	r := runner(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name, cmd          string
		k                  Kind
		outcome, decision  string
		reason, contextHas string
	}{
		{"deny rm -rf", `if grep -q 'rm -rf'; then echo 'no rm -rf' >&2; exit 2; fi`, PreTool, session.HookBlocked, "deny", "no rm -rf", ""},
		{"json deny", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"protected path"}}'`, PreTool, session.HookBlocked, "deny", "protected path", ""},
		{"json allow", `echo '{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"fine"}}'`, PreTool, session.HookOK, "allow", "fine", ""},
		{"json ask", `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`, PreTool, session.HookOK, "ask", "", ""},
		{"old approve", `echo '{"decision":"approve"}'`, PreTool, session.HookOK, "allow", "", ""},
		{"old block", `echo '{"decision":"block","reason":"nope"}'`, PreTool, session.HookBlocked, "deny", "nope", ""},
		{"no decision", `cat >/dev/null`, PreTool, session.HookOK, "", "", ""},
		{"post context", `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"gofmt ran"}}'`, PostTool, session.HookOK, "", "", "gofmt ran"},
		{"post block", `echo 'lint failed' >&2; exit 2`, PostTool, session.HookBlocked, "", "lint failed", ""},
		{"prompt stdout", `echo 'ticket ABC-1'`, Prompt, session.HookOK, "", "", "ticket ABC-1"},
		{"prompt block", `echo '{"decision":"block","reason":"no secrets"}'`, Prompt, session.HookBlocked, "", "no secrets", ""},
	} {
		res := r.RunAs(context.Background(), provider.Hook{Command: c.cmd}, c.k, dir, []byte(`{"tool_input":{"command":"rm -rf build"}}`+"\n"))
		if res.Outcome != c.outcome || res.Decision != c.decision || !strings.Contains(res.Reason, c.reason) || !strings.Contains(res.Context, c.contextHas) {
			t.Errorf("%s: %+v", c.name, res)
		}
	}
	res := r.RunAs(context.Background(), provider.Hook{Command: "sleep 600", Timeout: 1}, PreTool, dir, nil)
	if res.Outcome != session.HookTimeout || res.Decision != "" || !strings.Contains(res.Reason, "killed") || res.Duration > 5*time.Second {
		t.Errorf("hang: %+v", res)
	}
}

// A tool event's matcher matches summit's name or Claude Code's, whole, with alternatives.
func TestMatchingTool(t *testing.T) {
	h := provider.Hooks{Events: map[string][]provider.Hook{"PreToolUse": {
		{Command: "bash", Matcher: "Bash"}, {Command: "edits", Matcher: "Edit|Write"}, {Command: "all", Matcher: "*"},
		{Command: "native", Matcher: "run_shell_command"}, {Command: "mcp", Matcher: "mcp__fs__.*"}, {Command: "part", Matcher: "Bas"}}}}
	r := New(Options{Hooks: h, Environ: []string{}})
	names := func(l []provider.Hook) string {
		var out []string
		for _, x := range l {
			out = append(out, x.Command)
		}
		return strings.Join(out, ",")
	}
	for tool, want := range map[string]string{"run_shell_command": "bash,all,native", "replace": "edits,all", "write_file": "edits,all",
		"read_file": "all", "mcp__fs__read": "all,mcp"} {
		if got := names(r.MatchingTool("PreToolUse", tool)); got != want {
			t.Errorf("%s: %s, want %s", tool, got, want)
		}
	}
}
