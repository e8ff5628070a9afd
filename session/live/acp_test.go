package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// External ACP agents, end to end: a fake agent (agents/acp/testdata/fakeagent, built here)
// driven by a script, through a real session, checked on the recording read back and folded
// as a replay folds it.

// buildFakeAgent is the fake agent, built once per test process (main_test.go).
func buildFakeAgent(t *testing.T) string {
	t.Helper()
	bin, err := fakeAgentBin()
	if err != nil {
		t.Fatalf("building the fake agent: %v", err)
	}
	return bin
}

// acpCase is a workspace whose config names the fake agent "fake", running script.
type acpCase struct {
	*harness
	bin, log string
}

func newACPCase(t *testing.T, script string, env map[string]string) *acpCase {
	t.Helper()
	c := &acpCase{harness: newHarness(t), bin: buildFakeAgent(t)}
	dir := t.TempDir()
	c.log = filepath.Join(dir, "agent.log")
	sp := filepath.Join(dir, "script")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"FAKE_ACP_SCRIPT": sp, "FAKE_ACP_LOG": c.log}
	for k, v := range env {
		all[k] = v
	}
	// The agent process is confined to its worktree (Landlock): its log is declared writable.
	c.config(map[string]any{"fake": map[string]any{"command": c.bin, "env": all, "writable": []string{dir}}})
	oldDir, oldGrace := acpUserConfigDir, acpCancelGrace
	acpUserConfigDir = func() string { return "" }
	acpCancelGrace = 300 * time.Millisecond
	t.Cleanup(func() { acpUserConfigDir, acpCancelGrace = oldDir, oldGrace })
	return c
}

// noUserConfig keeps the user's summit config dir (its acp_agents, remotes) out of the test.
func noUserConfig(t *testing.T) {
	t.Helper()
	oldDir := acpUserConfigDir
	acpUserConfigDir = func() string { return "" }
	t.Cleanup(func() { acpUserConfigDir = oldDir })
}

// newRealCase is a case for a real agent: --approve all, no user config.
func newRealCase(t *testing.T) *acpCase {
	t.Helper()
	c := &acpCase{harness: newHarness(t)}
	c.approve = ApproveAll
	noUserConfig(t)
	return c
}

// config writes the workspace's .summit/config.yaml with these acp_agents (JSON is YAML).
func (c *acpCase) config(agents map[string]any) {
	b, _ := json.Marshal(map[string]any{"acp_agents": agents})
	if err := os.MkdirAll(filepath.Join(c.ws, ".summit"), 0o755); err != nil {
		c.t.Fatal(err)
	}
	write(c.t, filepath.Join(c.ws, ".summit"), "config.yaml", string(b))
}

// live runs lines on the real clock; during, when set, runs while the subagents work.
func (c *acpCase) live(during func(x *Orchestrator), lines ...string) outcome {
	c.t.Helper()
	os.Remove(c.rec)
	x := c.start(RealClock{})
	accept(c.t, x, lines...)
	if during != nil {
		during(x)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := x.WaitAll(ctx); err != nil {
		c.t.Fatalf("the subagents did not stop: %v", err)
	}
	if err := x.Close("script_end"); err != nil {
		c.t.Fatal(err)
	}
	return c.read(0, x, "")
}

// agentLog is what the fake agent observed, one line each.
func (c *acpCase) agentLog() []string {
	b, _ := os.ReadFile(c.log)
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func (c *acpCase) logHas(t *testing.T, want ...string) {
	t.Helper()
	lines := c.agentLog()
	for _, w := range want {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, w) }) {
			t.Errorf("the agent's log lacks %q:\n%s", w, strings.Join(lines, "\n"))
		}
	}
}

// waitState polls the session state until cond holds (10 s at most).
func waitState(t *testing.T, x *Orchestrator, what string, cond func(*session.State) bool) {
	t.Helper()
	// Generous: a real agent (node) takes seconds to start, many more on a loaded 2-core
	// machine running other packages' tests beside it; the wait ends as soon as cond holds.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ok := false
		x.View(func(s *session.State) { ok = cond(s) })
		if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// pending is the id of the subagent's pending permission request ("" when none).
func pending(x *Orchestrator, id string) string {
	pr := ""
	x.View(func(s *session.State) {
		if sa := s.Subagent(id); sa != nil {
			pr = sa.PendingRequest
		}
	})
	return pr
}

func (c *acpCase) waitRequest(t *testing.T, x *Orchestrator) string {
	t.Helper()
	waitState(t, x, "a permission request", func(s *session.State) bool { return s.Subagent("sa-1").PendingRequest != "" })
	return pending(x, "sa-1")
}

const capsule = "Done.\\n```json\\n{\"agent_name\": \"fake\", \"summary\": \"wrote pkg/new.go\", \"confidence\": 0.9}\\n```"

// Every kind of update becomes the transcript native subagents have; the agent's file
// writes (through summit and by itself) are its recorded changes; a missing file is ENOENT.
func TestACPTranscriptFilesAndChanges(t *testing.T) {
	c := newACPCase(t, `
think I should look first
say Looking at main.go.
plan in_progress:Read main.go|pending:Write pkg/new.go|pending:Report
tool r1 read Read main.go
done r1 package main
read main.go 3 2
read missing.go
tool e1 edit Write pkg/new.go
ask e1 edit all Write pkg/new.go
write pkg/new.go package pkg\n
diff e1 pkg/new.go - package\npkg
direct direct.txt written by the agent itself
plan completed:Read main.go|completed:Write pkg/new.go|in_progress:Report
tool x1 execute ls -la
failed x1 command not found
say `+capsule+`
`, nil)
	o := c.live(nil, "/delegate write a package --agent-type fake")
	checkSeq(t, o.events)
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "wrote pkg/new.go" ||
		// Its artifacts: what it wrote over fs/write_text_file and what it wrote itself.
		st.ToolInvocationCount != 3 || !slices.Equal(st.ArtifactPaths, []string{"direct.txt", "pkg/new.go"}) || st.Tokens.Input != 100 {
		t.Fatalf("stop: %+v capsule %+v", st, st.Capsule)
	}
	c.logHas(t,
		"initialize fs=true/true terminal=true gateway=false client=summit",
		"session/new cwd=", "mcp=0",
		`read main.go: "func main() {\n\tprintln(\"hello\") // TODO: say more\n"`,
		"read missing.go: error -32002 Resource not found: ENOENT",
		"ask e1: allow", // an edit in acceptEdits needs no one's approval
		"write pkg/new.go: ok",
		"direct direct.txt: err=<nil>",
	)
	// It stays in its default mode (asking for everything): summit's acceptEdits decides.
	if !slices.ContainsFunc(o.transcript("sa-1", session.TranscriptMessage), func(e session.TranscriptEvent) bool {
		return e.Text == "the agent runs in its default mode; summit's acceptEdits decides what it may do"
	}) || slices.ContainsFunc(c.agentLog(), func(l string) bool { return strings.HasPrefix(l, "mode ") }) {
		t.Errorf("the agent's mode was changed: %v", c.agentLog())
	}
	// The session is opened in the worktree, not the workspace.
	for _, l := range c.agentLog() {
		if strings.HasPrefix(l, "session/new") && strings.Contains(l, c.ws+" ") {
			t.Errorf("the agent works in the workspace: %s", l)
		}
	}
	if th := o.transcript("sa-1", session.TranscriptThinking); len(th) != 1 || th[0].Text != "I should look first" {
		t.Errorf("thinking: %+v", th)
	}
	tok := ""
	for _, e := range o.transcript("sa-1", session.TranscriptToken) {
		tok += e.Text
	}
	if !strings.HasPrefix(tok, "Looking at main.go.Done.") {
		t.Errorf("tokens: %q", tok)
	}
	calls := o.transcript("sa-1", session.TranscriptToolCall)
	if len(calls) != 3 || calls[0].Tool != "read_file" || calls[1].Tool != "replace" || calls[2].Tool != "run_shell_command" ||
		calls[0].Args["title"] != "Read main.go" || calls[2].Args["input"].(map[string]any)["command"] != "ls -la" {
		t.Errorf("tool calls: %+v", calls)
	}
	results := o.transcript("sa-1", session.TranscriptToolResult)
	if len(results) != 3 || results[0].Result != "package main" || results[0].IsError ||
		!strings.Contains(results[1].Result, "+++ pkg/new.go\n+package\n+pkg") || !results[2].IsError {
		t.Errorf("tool results: %+v", results)
	}
	if len(o.find(session.TypePermissionRequested, "sa-1")) != 0 {
		t.Error("an edit in acceptEdits asked the user")
	}
	// The plan is a transcript message, and the tree's step is the fold's.
	plans := 0
	for _, m := range o.transcript("sa-1", session.TranscriptMessage) {
		if m.Tool == session.PlanTool {
			plans++
		}
	}
	if sa := o.state.Subagent("sa-1"); plans != 2 || sa.PlanStep != "Report" {
		t.Errorf("plans %d, step %q", plans, sa.PlanStep)
	}
	ch := o.changes(t, "sa-1")
	var paths []string
	for _, f := range ch.Files {
		paths = append(paths, f.Path+" "+f.Kind)
	}
	if !slices.Equal(paths, []string{"direct.txt added", "pkg/new.go added"}) {
		t.Errorf("changes: %v", paths)
	}
	if _, err := os.Stat(filepath.Join(c.ws, "pkg")); err == nil {
		t.Error("the agent wrote the main workspace")
	}
	if out := render.Render(o.state); !strings.Contains(out, "pkg/new.go") || !strings.Contains(out, "plan:\n") {
		t.Errorf("--print of the replay:\n%s", out)
	}
}

// pidGone reports whether no process has the pid (a zombie counts as gone: it runs nothing).
// pidNSAlive reports whether a live (not zombie) process is in the PID namespace ns
// ("pid:[inode]", as /proc/<pid>/ns/pid reads).
func pidNSAlive(ns string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && l == ns && !pidGone(mustAtoi(e.Name())) {
			return true
		}
	}
	return false
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func pidGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

// The agent's permission requests are summit permission requests answered by /approve and
// /deny, each answer mapped to one of the agent's own options: once → allow_once, for the
// subagent → allow_always (and later requests granted without asking), a denial →
// reject_once, or reject_always when that is all it offers.
func TestACPPermissionsAnsweredByTheUser(t *testing.T) {
	c := newACPCase(t, `
ask x1 execute all ls -la
ask x2 execute all make test
ask x3 execute all make lint
ask m1 other allow_once,reject_always mystery tool
ask m2 other all another mystery
say `+capsule+`
`, nil)
	c.approve = ""
	o := c.live(func(x *Orchestrator) {
		answer := func(line string) {
			t.Helper()
			c.waitRequest(t, x)
			accept(t, x, line)
		}
		answer("/approve pr-1")
		answer("/approve pr-2 --scope subagent")
		answer("/deny pr-3")
		answer("/deny pr-4 --reason no")
	}, "/delegate build it --agent-type fake")
	c.logHas(t, "ask x1: allow", "ask x2: always", "ask x3: always", "ask m1: never", "ask m2: reject")
	reqs := o.find(session.TypePermissionRequested, "sa-1")
	if len(reqs) != 4 {
		t.Fatalf("%d permission requests, want 4 (x3 rides on the subagent grant)", len(reqs))
	}
	r1 := reqs[0].Data.(session.PermissionRequested)
	if r1.Tool != "run_shell_command" || !strings.Contains(r1.Reason, "the agent asks: ls -la") || r1.Args["title"] != "ls -la" {
		t.Errorf("request: %+v", r1)
	}
	if r3 := reqs[2].Data.(session.PermissionRequested); r3.Tool != "other" || len(r3.Args["options"].([]any)) != 2 {
		t.Errorf("the mystery tool's request: %+v", r3)
	}
	if g := o.find(session.TypePermissionGranted, "sa-1"); len(g) != 2 || g[1].Data.(session.PermissionGranted).Scope != "subagent" {
		t.Errorf("grants: %+v", g)
	}
	denials := o.transcript("sa-1", session.TranscriptPolicyDenied)
	if len(denials) != 2 || denials[1].Reason != "no" {
		t.Errorf("denials: %+v", denials)
	}
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess || len(st.Capsule.PolicyNotes) != 2 {
		t.Errorf("stop: %+v", st)
	}
	for _, p := range o.state.Permissions {
		if p.SubagentID != "sa-1" || p.Decision == session.DecisionPending {
			t.Errorf("permission %+v", p)
		}
	}
}

// Gemini CLI refuses allow_always in a folder it does not trust (every worktree): a grant for
// the subagent answers it allow_once, and summit's own grant answers its next request.
func TestACPGeminiGetsAllowOnce(t *testing.T) {
	c := newACPCase(t, "ask x1 execute all make\nask x2 execute all make\n", map[string]string{"FAKE_ACP_NAME": "gemini-cli"})
	c.approve = ""
	o := c.live(func(x *Orchestrator) {
		c.waitRequest(t, x)
		accept(t, x, "/approve pr-1 --scope subagent")
	}, "/delegate build it --agent-type fake")
	c.logHas(t, "ask x1: allow", "ask x2: allow")
	if n := len(o.find(session.TypePermissionRequested, "sa-1")); n != 1 {
		t.Errorf("%d requests", n)
	}
}

// The session's ceiling and --approve apply: in plan the agent's edits, writes and commands
// are refused without asking (its mode stays default: summit decides); in acceptEdits
// --approve shell allows the shell.
func TestACPPlanCeilingAndHeadlessApproval(t *testing.T) {
	script := `
ask e1 edit all Edit main.go
write main.go package changed
ask x1 execute all go test ./...
read main.go
`
	c := newACPCase(t, script, nil)
	c.ceiling = "plan"
	o := c.live(nil, "/delegate look --agent-type fake")
	c.logHas(t, "ask e1: reject", "write main.go: error -32603 write_file refused: write_file changes files; plan mode is read-only",
		"ask x1: reject", `read main.go: "package main`)
	if n := len(o.find(session.TypePermissionRequested, "sa-1")); n != 0 {
		t.Errorf("plan: %d permission requests, want none (plan refuses)", n)
	}
	if d := o.transcript("sa-1", session.TranscriptPolicyDenied); len(d) != 3 || d[0].Tool != "replace" || d[1].Tool != "write_file" {
		t.Errorf("plan refusals: %+v", d)
	}
	if ch := o.changes(t, "sa-1"); len(ch.Files) != 0 {
		t.Errorf("plan changed files: %+v", ch.Files)
	}

	// Outside the worktree an edit is refused in every mode and a read asks.
	c2 := newACPCase(t, script+"askpath e9 edit /etc/passwd\naskpath r9 read /etc/hostname\n", nil)
	c2.approve = ApproveShell
	o = c2.live(nil, "/delegate fix --agent-type fake")
	c2.logHas(t, "ask e1: allow", "write main.go: ok", "ask x1: allow", "ask e9: reject", "ask r9: reject")
	if d := o.transcript("sa-1", session.TranscriptPolicyDenied); len(d) != 2 || d[0].Reason != "/etc/passwd is outside the subagent's worktree" {
		t.Errorf("outside: %+v", d)
	}
	if r := o.find(session.TypePermissionRequested, "sa-1"); len(r) != 2 || r[1].Data.(session.PermissionRequested).Tool != "read_file" {
		t.Errorf("requests: %+v", r)
	}
}

// An agent that ignores its mode (it asks nothing, switches itself to a permissive mode, and
// writes and runs what it likes over fs/* and terminal/*) still cannot change anything under
// plan, even with --approve all: summit's handlers refuse its writes and commands by summit's
// mode, without asking, and set its mode back.
func TestACPPlanRefusesAnAgentThatIgnoresItsMode(t *testing.T) {
	c := newACPCase(t, `
switch bypassPermissions
write made.txt written under plan
term sh -c "echo ran > ran.txt"
ask x1 execute all touch asked.txt
say `+capsule+`
`, nil)
	c.ceiling = "plan"
	c.approve = ApproveAll
	o := c.live(nil, "/delegate look around --agent-type fake")
	c.logHas(t, "mode default",
		"write made.txt: error -32603 write_file refused: write_file changes files; plan mode is read-only",
		"term: error", "ask x1: reject")
	if r := o.find(session.TypePermissionRequested, "sa-1"); len(r) != 0 {
		t.Errorf("plan asked: %+v", r)
	}
	if d := o.transcript("sa-1", session.TranscriptPolicyDenied); len(d) != 3 || d[0].Tool != "write_file" ||
		d[1].Tool != "run_shell_command" || d[2].Tool != "run_shell_command" {
		t.Errorf("plan refusals: %+v", d)
	}
	if ch := o.changes(t, "sa-1"); len(ch.Files) != 0 {
		t.Errorf("plan changed files: %+v", ch.Files)
	}
	for _, f := range []string{"made.txt", "ran.txt", "asked.txt"} {
		if _, err := os.Stat(filepath.Join(c.ws, f)); err == nil {
			t.Errorf("%s written in the workspace", f)
		}
	}
}

// Terminals run in the worktree through summit's confined shell: output (the end kept under
// outputByteLimit), exit codes, kill, release; a terminal for a command the user just
// allowed does not ask again.
func TestACPTerminals(t *testing.T) {
	c := newACPCase(t, `
ask x1 execute all echo hi; exit 3
term echo hi; exit 3
term pwd
term seq 1 100
termkill sleep 30
`, nil)
	c.approve = ApproveAll
	o := c.live(nil, "/delegate run --agent-type fake")
	c.logHas(t,
		`term term-1: exit=3 signal= output="hi\n" truncated=false`,
		`term term-2: exit=0 signal= output="`+o.state.Subagent("sa-1").Isolation.Worktree,
		`term term-3: exit=0 signal= output="`,
		"truncated=true",
		"term term-4: killed err=<nil>",
		"term term-4: exit=-1 signal=SIGKILL",
		"term term-4: released",
	)
	// pr-1 is the permission request; term-1 rides on it; pwd, seq and sleep ask (--approve all).
	if n := len(o.find(session.TypePermissionRequested, "sa-1")); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

// An agent that needs authentication gets the method that needs no browser: the API key in
// its environment, else a gateway its environment names; with neither it fails, naming what
// it offers.
func TestACPAuthenticate(t *testing.T) {
	c := newACPCase(t, "say hi\n", map[string]string{"FAKE_ACP_AUTH": "1", "GEMINI_API_KEY": "test-key-not-secret"})
	o := c.live(nil, "/delegate hi --agent-type fake")
	c.logHas(t, "session/new: authentication required", "authenticate gemini-api-key meta=null key=true", "session/new cwd=")
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess {
		t.Errorf("stop: %+v", st)
	}

	c = newACPCase(t, "say hi\n", map[string]string{"FAKE_ACP_AUTH": "1", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"})
	c.live(nil, "/delegate hi --agent-type fake")
	c.logHas(t, "gateway=true", `authenticate gateway meta={"gateway":{"baseUrl":"http://127.0.0.1:9","headers":{}}}`)

	c = newACPCase(t, "say hi\n", map[string]string{"FAKE_ACP_AUTH": "1"})
	o = c.live(nil, "/delegate hi --agent-type fake")
	errs := o.find(session.TypeSubagentError, "sa-1")
	if len(errs) != 1 || !strings.Contains(errs[0].Data.(session.SubagentError).Error, "oauth-personal (Log in with Google") ||
		o.stop(t, "sa-1").Outcome != session.OutcomeFailure {
		t.Errorf("no method: %+v", errs)
	}
}

// An agent that exits mid-turn, writes garbage or too long a line on stdout, dies at
// initialize or is not installed fails the subagent at once, with what it wrote on stderr.
func TestACPFailures(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		env          map[string]string
		want         string
		stderr       string
	}{
		{"exit mid-turn", "say half an answer\nstderr panic: the model went away\nexit 3\n", nil,
			"the agent exited with status 3", "panic: the model went away"},
		{"garbage", "say hi\ngarbage\n", nil, `not JSON-RPC on stdout: "Traceback (most recent call last): oops"`, "fakeagent: started"},
		{"huge line", "huge 9000000\n", nil, "a line of more than 8388608 bytes", "fakeagent: started"},
		{"dies at initialize", "", map[string]string{"FAKE_ACP_ON_INIT": "exit"}, "initialize: the agent exited with status 7", "giving up at initialize"},
		{"garbage at initialize", "", map[string]string{"FAKE_ACP_ON_INIT": "garbage"}, `not JSON-RPC on stdout: "Welcome to fakeagent!"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newACPCase(t, tc.script, tc.env)
			start := time.Now()
			o := c.live(nil, "/delegate go --agent-type fake")
			// A failure is reported at once, not after a timeout (the delegation's is 300 s): 20 s
			// leaves room for -race on a loaded 2-core machine (the 9 MB line took 6.5 s there).
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %s", took)
			}
			errs := o.find(session.TypeSubagentError, "sa-1")
			if len(errs) != 1 {
				t.Fatalf("%d errors", len(errs))
			}
			e := errs[0].Data.(session.SubagentError)
			if !strings.Contains(e.Error, tc.want) || !strings.Contains(e.Stderr, tc.stderr) {
				t.Errorf("error %q, stderr %q", e.Error, e.Stderr)
			}
			if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeFailure {
				t.Errorf("outcome %s", st.Outcome)
			}
			checkPidsGone(t, c)
		})
	}
	t.Run("not installed", func(t *testing.T) {
		c := newACPCase(t, "", nil)
		c.config(map[string]any{"fake": map[string]any{"command": "summit-no-such-agent"}})
		o := c.live(nil, "/delegate go --agent-type fake")
		errs := o.find(session.TypeSubagentError, "sa-1")
		if len(errs) != 1 || !strings.Contains(errs[0].Data.(session.SubagentError).Error, "cannot start summit-no-such-agent") {
			t.Errorf("errors: %+v", errs)
		}
	})
}

// checkPidsGone checks that every process the fake agent logged (itself, its children) is gone.
// An agent jailed in a PID namespace of its own logs the namespace's pids: then no process may
// be left in that namespace.
func checkPidsGone(t *testing.T, c *acpCase) {
	t.Helper()
	own, _ := os.Readlink("/proc/self/ns/pid")
	for _, l := range c.agentLog() {
		if ns, ok := strings.CutPrefix(l, "pidns "); ok && ns != own {
			deadline := time.Now().Add(5 * time.Second)
			for pidNSAlive(ns) {
				if time.Now().After(deadline) {
					t.Errorf("a process of the agent's PID namespace %s outlived the subagent", ns)
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			return
		}
	}
	for _, l := range c.agentLog() {
		var pid int
		for _, p := range []string{"pid ", "child "} {
			if rest, ok := strings.CutPrefix(l, p); ok {
				pid, _ = strconv.Atoi(rest)
			}
		}
		if pid > 0 && !pidGone(pid) {
			t.Errorf("process %d (%q) outlived the subagent", pid, l)
		}
	}
}

// /cancel sends session/cancel; an agent deaf to it is killed after the grace period, its
// children with it; the recording says cancelled.
func TestACPCancelKillsTheGroup(t *testing.T) {
	c := newACPCase(t, "child\nsay working\nhang\n", nil)
	o := c.live(func(x *Orchestrator) {
		waitState(t, x, "the agent's first words", func(s *session.State) bool { return s.Subagent("sa-1").StreamedBytes > 0 })
		accept(t, x, "/cancel sa-1")
	}, "/delegate go --agent-type fake")
	c.logHas(t, "cancel", "child ")
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeCancelled {
		t.Errorf("outcome %s", st.Outcome)
	}
	if len(o.find(session.TypeSubagentCancelled, "sa-1")) != 1 {
		t.Error("no SubagentCancelled")
	}
	checkPidsGone(t, c)

	// An agent that honours session/cancel ends its turn as cancelled on its own.
	c = newACPCase(t, "say working\nsleep 20000\n", nil)
	start := time.Now()
	o = c.live(func(x *Orchestrator) {
		waitState(t, x, "the agent's first words", func(s *session.State) bool { return s.Subagent("sa-1").StreamedBytes > 0 })
		accept(t, x, "/cancel sa-1")
	}, "/delegate go --agent-type fake")
	if took := time.Since(start); took > 5*time.Second || o.stop(t, "sa-1").Outcome != session.OutcomeCancelled {
		t.Errorf("cancel took %s: %+v", took, o.stop(t, "sa-1"))
	}
	checkPidsGone(t, c)
}

// A hang ends at the subagent's timeout, as a timeout with the agent's stderr.
func TestACPTimeout(t *testing.T) {
	c := newACPCase(t, "stderr thinking very hard\nhang\n", nil)
	// 3 s of wall time, not 1: under the race detector on a loaded 2-core machine the fake
	// agent can take over a second to start and write its stderr line (CI saw it miss).
	o := c.live(nil, "/delegate go --agent-type fake --timeout 3")
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeTimeout {
		t.Errorf("outcome %s", st.Outcome)
	}
	errs := o.find(session.TypeSubagentError, "sa-1")
	if len(errs) != 1 || !strings.Contains(errs[0].Data.(session.SubagentError).Stderr, "thinking very hard") {
		t.Errorf("errors: %+v", errs)
	}
	checkPidsGone(t, c)
}

// With control transferred, a turn that ends with a question waits for the user; what the
// user types is the next session/prompt; a turn with a capsule ends the subagent.
func TestACPHandoffTransferControl(t *testing.T) {
	c := newACPCase(t, "sleep 300\nsay Which colour, red or blue?\n---\nsay "+capsule+"\n", nil)
	o := c.live(func(x *Orchestrator) {
		accept(t, x, "/handoff sa-1 --transfer-control")
		waitState(t, x, "the question", func(s *session.State) bool {
			tr := s.Subagent("sa-1").Transcript
			return tr.Len() > 0 && tr.Text(tr.Len()-1) == "waiting for a user message"
		})
		accept(t, x, "blue, please")
	}, "/delegate paint --agent-type fake")
	c.logHas(t, `prompt 2: "blue, please"`)
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess || st.Capsule.Summary != "wrote pkg/new.go" {
		t.Errorf("stop: %+v", st)
	}
	if h := o.state.Handoffs; len(h) != 1 || h[0].Outcome != session.OutcomeSuccess {
		t.Errorf("handoff: %+v", h)
	}
}

// An agent file of kind acp is an ACP agent; a built-in resolves when its command is on PATH.
func TestACPAgentFileAndBuiltin(t *testing.T) {
	c := newACPCase(t, "say from the file\n", nil)
	write(t, filepath.Join(c.ws, ".summit"), "config.yaml", "")
	if err := os.MkdirAll(filepath.Join(c.ws, ".summit", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"FAKE_ACP_LOG": c.log, "FAKE_ACP_SCRIPT": strings.TrimSuffix(c.log, "agent.log") + "script"})
	write(t, filepath.Join(c.ws, ".summit", "agents"), "filed.md", "---\nname: filed\ndescription: an external agent\nkind: acp\ncommand: "+
		c.bin+"\nargs: [--acp]\nenv: "+string(b)+"\n---\n")
	bin := t.TempDir()
	if err := os.Symlink(c.bin, filepath.Join(bin, "gemini")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	// The built-in gets its state directory (~/.gemini) created: in a home of the test's own.
	t.Setenv("HOME", t.TempDir())
	o := c.live(nil, "/delegate one --agent-type filed", "/delegate two --agent-type gemini-cli")
	if tok := o.transcript("sa-1", session.TranscriptToken); len(tok) != 1 || tok[0].Text != "from the file" {
		t.Errorf("the agent file's agent said %+v", tok)
	}
	for _, id := range []string{"sa-1", "sa-2"} {
		if st := o.stop(t, id); st.Outcome != session.OutcomeSuccess {
			t.Errorf("%s: %+v", id, st)
		}
	}
	if sp := o.spawned(t, "sa-2"); sp.AgentName != "gemini-cli" {
		t.Errorf("spawned: %+v", sp)
	}
}

// A headless run on simulated time: the agent runs on the wall clock while the scheduler
// waits; --approve answers; the recording is the same kind.
func TestACPHeadlessSimulated(t *testing.T) {
	c := newACPCase(t, "ask x1 execute all make\nterm echo ok\nsay "+capsule+"\n", nil)
	c.approve = ApproveAll
	o := c.run("/delegate build --agent-type fake\n/wait sa-1\n")
	if o.exit != 0 || o.stop(t, "sa-1").Outcome != session.OutcomeSuccess {
		t.Fatalf("exit %d: %s", o.exit, o.progress)
	}
	c.logHas(t, "ask x1: allow", `output="ok\n"`)

	// Without --approve nobody can answer while the agent runs: the request is denied, said why.
	c = newACPCase(t, "ask x1 execute all make\n", nil)
	c.approve = ""
	o = c.run("/delegate build --agent-type fake\n/wait sa-1\n")
	c.logHas(t, "ask x1: reject")
	if d := o.find(session.TypePermissionDenied, "sa-1"); len(d) != 1 || d[0].Data.(session.PermissionDenied).By != "summit" {
		t.Errorf("denials: %+v", d)
	}

	c = newACPCase(t, "sleep 20000\n", nil)
	c.approve = ApproveAll
	o = c.run("/delegate build --agent-type fake --timeout 1\n/wait sa-1\n")
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeTimeout || st.DurationMS != 1000 {
		t.Errorf("simulated timeout: %+v", st)
	}
}

// --on-failure works as for native subagents: a failed ACP subagent under a handoff is run
// again once.
func TestACPHandoffRetry(t *testing.T) {
	c := newACPCase(t, "sleep 300\nexit 3\n", nil)
	o := c.live(nil, "/delegate flaky --agent-type fake", "/handoff sa-1 --on-failure retry")
	res := o.find(session.TypeHandoffResolved, "sa-1")
	if len(res) != 1 || res[0].Data.(session.HandoffResolved).RetrySubagentID != "sa-2" {
		t.Fatalf("resolved: %+v", res)
	}
	if sp := o.spawned(t, "sa-2"); sp.AgentType != "fake" || o.stop(t, "sa-2").Outcome != session.OutcomeFailure {
		t.Errorf("retry: %+v %+v", sp, o.stop(t, "sa-2"))
	}
	checkPidsGone(t, c)
}

// Under simulated time (summit run on script tapes) an ACP agent still runs on the wall
// clock: its run is recorded with the time it really took, not zero.
func TestACPHeadlessSimulatedDuration(t *testing.T) {
	c := newACPCase(t, "sleep 700\nsay "+capsule+"\n", nil)
	c.approve = ApproveAll
	o := c.run("/delegate build --agent-type fake\n/wait sa-1\n")
	st := o.stop(t, "sa-1")
	if o.exit != 0 || st.Outcome != session.OutcomeSuccess {
		t.Fatalf("exit %d: %s", o.exit, o.progress)
	}
	if st.DurationMS < 700 || st.DurationMS > 60_000 {
		t.Errorf("the run is recorded as %d ms; the agent slept 700 ms", st.DurationMS)
	}
}

// An agent's MCP tool calls are shown and asked under their mcp__server__tool names, as the
// agents report them (Claude Code: title mcp__server__tool, kind other; Codex: title
// mcp.server.tool, kind execute), not as "other" or the shell: a grant for the subagent
// covers that one tool, and another tool of the same server still asks.
func TestACPMCPToolNames(t *testing.T) {
	c := newACPCase(t, `
ask c1 other all mcp__everything__echo
ask c2 other all mcp__everything__echo
ask c3 other all mcp__everything__add
ask x1 execute all mcp.everything.echo
say `+capsule+`
`, nil)
	c.approve = ""
	o := c.live(func(x *Orchestrator) {
		answer := func(line string) {
			t.Helper()
			c.waitRequest(t, x)
			accept(t, x, line)
		}
		answer("/approve pr-1 --scope subagent")
		answer("/deny pr-2")
	}, "/delegate build it --agent-type fake")
	c.logHas(t, "ask c1: always", "ask c2: always", "ask c3: reject", "ask x1: always")
	reqs := o.find(session.TypePermissionRequested, "sa-1")
	var tools []string
	for _, r := range reqs {
		tools = append(tools, r.Data.(session.PermissionRequested).Tool)
	}
	if strings.Join(tools, " ") != "mcp__everything__echo mcp__everything__add" {
		t.Errorf("asked about %v; want echo (then granted for the subagent), then add", tools)
	}
	var called []string
	for _, e := range o.transcript("sa-1", session.TranscriptToolCall) {
		called = append(called, e.Tool)
	}
	if strings.Join(called, " ") != "mcp__everything__echo mcp__everything__echo mcp__everything__add mcp__everything__echo" {
		t.Errorf("tool calls shown as %v", called)
	}
}
