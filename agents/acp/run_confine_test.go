package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// The agent process itself is confined, not only what it asks summit for over fs/* and
// terminal/*: Claude Code and Codex write files and run commands on their own. The agent
// here is this test binary, run by Start as any agent is (see probeAgent): in its turn it
// tries, with plain system calls, what an agent might, and says what happened.

// probeEnv makes this test binary an ACP agent instead of running tests.
const probeEnv = "SUMMIT_ACP_PROBE_AGENT"

// The agent runs before any test: summit's own image (tools' init) has confined the process
// and become this binary, whose init then serves ACP on stdin/stdout until it is closed.
func init() {
	if os.Getenv(probeEnv) != "1" {
		return
	}
	a := &probeAgent{ready: make(chan struct{})}
	a.conn = sdk.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	close(a.ready)
	<-a.conn.Done()
	os.Exit(0)
}

type probeAgent struct {
	conn  *sdk.AgentSideConnection
	ready chan struct{} // closed once conn is set
}

func (a *probeAgent) Initialize(context.Context, sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber, AgentInfo: &sdk.Implementation{Name: "probe", Version: "1"},
		AuthMethods: []sdk.AuthMethod{}}, nil
}

func (a *probeAgent) NewSession(context.Context, sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	return sdk.NewSessionResponse{SessionId: "probe"}, nil
}

// Prompt runs the probes (the environment names the paths) and answers one line each:
// "NAME ok" or "NAME error: …".
func (a *probeAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	<-a.ready
	ws, hidden, shared := os.Getenv("PROBE_WS"), os.Getenv("PROBE_HIDDEN"), os.Getenv("PROBE_SHARED")
	write := func(path string) error { return os.WriteFile(path, []byte("written by the agent\n"), 0o644) }
	read := func(path string) error {
		b, err := os.ReadFile(path)
		if err == nil && len(b) == 0 {
			err = errors.New("empty")
		}
		return err
	}
	var out strings.Builder
	probe := func(name string, err error) {
		if err != nil {
			fmt.Fprintf(&out, "%s error: %v\n", name, err)
		} else {
			fmt.Fprintf(&out, "%s ok\n", name)
		}
	}
	probe("write-workspace", write(filepath.Join(ws, "escape.txt")))
	probe("write-summit", write(filepath.Join(ws, ".summit", "escape.txt")))
	probe("mkdir-summit", os.Mkdir(filepath.Join(ws, ".summit", "escape"), 0o755))
	probe("write-through-symlink", write(filepath.Join("link-to-ws", "via-link.txt")))
	probe("write-shared-tmp", write(shared))
	probe("read-summit", read(filepath.Join(ws, ".summit", "history")))
	probe("list-summit", func() error { _, err := os.ReadDir(filepath.Join(ws, ".summit")); return err }())
	probe("read-hidden", read(hidden))
	probe("child-write-workspace", exec.Command("sh", "-c", "echo pwned > "+filepath.Join(ws, "child.txt")).Run())
	probe("read-workspace", read(filepath.Join(ws, "main.go")))
	probe("write-worktree", write("inside.txt"))
	probe("rename-worktree", func() error {
		if err := os.MkdirAll(filepath.Join("a", "b"), 0o755); err != nil {
			return err
		}
		if err := write(filepath.Join("a", "moved.txt")); err != nil {
			return err
		}
		return os.Rename(filepath.Join("a", "moved.txt"), filepath.Join("a", "b", "moved.txt"))
	}())
	probe("write-tmpdir", write(filepath.Join(os.Getenv("TMPDIR"), "scratch.txt")))
	probe("write-state", write(filepath.Join(os.Getenv("HOME"), ".probe", "state.json")))
	probe("write-extra", write(filepath.Join(os.Getenv("PROBE_EXTRA"), "extra.txt")))
	fmt.Fprintf(&out, "tmpdir %s\n", os.Getenv("TMPDIR"))
	// A child left running: it must go with the process group when the run is closed.
	child := exec.Command("sleep", "300")
	if err := child.Start(); err == nil {
		fmt.Fprintf(&out, "child %d\n", child.Process.Pid)
	}
	fmt.Fprintf(&out, "pid %d pgid %d\n", os.Getpid(), syscall.Getpgrp())
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		fmt.Fprintf(&out, "tty_nr %s\n", f[4])
	}
	fmt.Fprintf(&out, "env passed=%q pat=%q\n", os.Getenv("MY_PASSED"), os.Getenv("GITHUB_PAT"))
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		f.Close()
		fmt.Fprintf(&out, "devtty opened\n")
	} else {
		fmt.Fprintf(&out, "devtty error: %v\n", err)
	}
	err := a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId, Update: sdk.UpdateAgentMessageText(out.String())})
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, err
}

func (a *probeAgent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}
func (a *probeAgent) Cancel(context.Context, sdk.CancelNotification) error { return nil }
func (a *probeAgent) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, nil
}
func (a *probeAgent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}
func (a *probeAgent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}
func (a *probeAgent) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}
func (a *probeAgent) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, nil
}

// probeCase is a main workspace (with its .summit/), a worktree of a subagent beside it, a
// summit config dir that is hidden, and the probe agent configured to run there.
type probeCase struct {
	ws, wt, hidden, home, extra, shared string
	agent                               Agent
}

func newProbeCase(t *testing.T) *probeCase {
	t.Helper()
	base := t.TempDir()
	c := &probeCase{ws: filepath.Join(base, "ws"), wt: filepath.Join(base, "worktree"), hidden: filepath.Join(base, "config", "summit", "config.yaml"),
		home: filepath.Join(base, "home"), extra: filepath.Join(base, "extra")}
	// A file of the shared temp dir, where the workspace itself may be (it is here).
	c.shared = filepath.Join(os.TempDir(), fmt.Sprintf("summit-probe-%d-%d.txt", os.Getpid(), time.Now().UnixNano()))
	t.Cleanup(func() { os.Remove(c.shared) })
	for _, f := range []struct{ path, text string }{
		{filepath.Join(c.ws, "main.go"), "package main\n"},
		{filepath.Join(c.ws, ".summit", "history"), "secret history\n"},
		{c.hidden, "secret config\n"},
		{filepath.Join(c.wt, "main.go"), "package main\n"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{c.home, c.extra} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink in the worktree to the workspace: writing through it is writing the workspace.
	if err := os.Symlink(c.ws, filepath.Join(c.wt, "link-to-ws")); err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c.agent = Agent{Name: "probe", Command: bin, Args: []string{"-test.run=^$"},
		Env: map[string]string{probeEnv: "1", "HOME": c.home, "PROBE_WS": c.ws, "PROBE_HIDDEN": c.hidden,
			"PROBE_SHARED": c.shared, "PROBE_EXTRA": c.extra},
		// State under the agent's HOME, created when missing (~/.probe does not exist yet), and
		// a directory named as acp_agents' writable would.
		Writable: []string{"${PROBE_STATE:-~/.probe}/", "$PROBE_EXTRA"}}
	return c
}

// run starts the agent on a sandbox rooted in the worktree, confined or not, runs one turn
// and closes it; it returns the probes' lines and the run (closed).
func (c *probeCase) run(t *testing.T, confine bool) (map[string]string, *Run) {
	t.Helper()
	sb, err := tools.New(c.wt, tools.Options{ConfineWrites: confine, Hidden: []string{filepath.Join(c.ws, ".summit"), filepath.Dir(c.hidden)},
		PassEnv: []string{"MY_PASSED"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []session.Data
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Start(ctx, Config{Agent: c.agent, Sandbox: sb, Environ: []string{"PATH=" + os.Getenv("PATH"), "MY_PASSED=yes", "GITHUB_PAT=ghp-acp-secret"}, Mode: agents.ModeAcceptEdits,
		Decide: func(string) agents.Decision { return agents.Decision{Verdict: agents.Allow} },
		Emit: func(d session.Data) error {
			mu.Lock()
			events = append(events, d)
			mu.Unlock()
			return nil
		}})
	if r == nil {
		t.Fatalf("start: %v", err)
	}
	defer r.Close()
	if err != nil {
		t.Fatalf("start: %v\n%s", err, r.Stderr())
	}
	turn, err := r.Prompt(ctx, "probe")
	if err != nil {
		t.Fatalf("prompt: %v\n%s", err, r.Stderr())
	}
	r.Close()
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(turn.Text), "\n") {
		name, rest, _ := strings.Cut(l, " ")
		got[name] = rest
	}
	return got, r
}

// What the agent process writes by itself stays in its worktree, its temp dir and its
// declared state (symlinks and children included), .summit/ and summit's config are out of
// its reach even to read, the rest of the disk is readable, and the process group still goes
// whole when the run is closed.
func TestAgentProcessConfined(t *testing.T) {
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: the agent process cannot be confined here")
	}
	c := newProbeCase(t)
	got, r := c.run(t, true)
	for _, name := range []string{"write-workspace", "write-summit", "mkdir-summit", "write-through-symlink", "write-shared-tmp",
		"read-summit", "list-summit", "read-hidden", "child-write-workspace"} {
		if v, ok := got[name]; !ok || !strings.HasPrefix(v, "error:") {
			t.Errorf("%s was not refused: %q", name, v)
		}
	}
	for _, name := range []string{"write-workspace", "write-summit", "write-through-symlink", "write-shared-tmp", "read-summit", "read-hidden"} {
		if !strings.Contains(got[name], "permission denied") {
			t.Errorf("%s: %q, want permission denied (Landlock)", name, got[name])
		}
	}
	for _, name := range []string{"read-workspace", "write-worktree", "rename-worktree", "write-tmpdir", "write-state", "write-extra"} {
		if got[name] != "ok" {
			t.Errorf("%s: %q, want ok", name, got[name])
		}
	}
	// Nothing appeared outside, and what is inside is there.
	for _, p := range []string{filepath.Join(c.ws, "escape.txt"), filepath.Join(c.ws, ".summit", "escape.txt"), filepath.Join(c.ws, ".summit", "escape"),
		filepath.Join(c.ws, "via-link.txt"), filepath.Join(c.ws, "child.txt"), c.shared} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
			os.RemoveAll(p)
		}
	}
	for _, p := range []string{filepath.Join(c.wt, "inside.txt"), filepath.Join(c.wt, "a", "b", "moved.txt"),
		filepath.Join(c.home, ".probe", "state.json"), filepath.Join(c.extra, "extra.txt")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	// Its temp dir was its own, and went with it.
	tmp := got["tmpdir"]
	if tmp == "" || filepath.Dir(tmp) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(tmp), "summit-acp-") {
		t.Errorf("TMPDIR %q", tmp)
	} else if _, err := os.Stat(tmp); err == nil {
		t.Errorf("the temp dir %s outlived the run", tmp)
	}
	checkGroupGone(t, got, r)
}

// checkGroupGone checks that the agent was its own process group's leader, as Start made it
// (the confinement runs summit's image first, which becomes the agent in place), and that
// the child it left running is gone now that the run is closed.
func checkGroupGone(t *testing.T, got map[string]string, r *Run) {
	t.Helper()
	var pid, pgid int
	fmt.Sscanf(got["pid"], "%d pgid %d", &pid, &pgid)
	if pid != 0 && pid != r.Pid() && pgid == 0 {
		// The jail's PID namespace: the agent sees its own pids, and its group (led, outside,
		// by Run.Pid) is not visible from inside. The namespace ends with the run: nothing is
		// left in that group, the child included.
		deadline := time.Now().Add(5 * time.Second)
		for groupAlive(r.Pid()) {
			if time.Now().After(deadline) {
				t.Fatalf("a process of the agent's group %d outlived the run", r.Pid())
			}
			time.Sleep(10 * time.Millisecond)
		}
		return
	}
	if pid == 0 || pid != r.Pid() || pgid != pid {
		t.Errorf("pid %q, Run.Pid %d: not its own group's leader", got["pid"], r.Pid())
	}
	child, _ := strconv.Atoi(got["child"])
	if child == 0 {
		t.Fatalf("no child: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil && !zombie(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's child %d outlived the run", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupAlive reports whether a live (not zombie) process is in process group pgid.
func groupAlive(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		_, after, _ := strings.Cut(string(b), ") ")
		f := strings.Fields(after)
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// zombie reports whether pid has exited and waits to be reaped (by init, its parent gone).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(after, "Z")
}

// Without confinement (a sandbox that does not confine writes: no isolation) the same probes
// do reach the workspace: the refusals above are the confinement's. The process group is
// handled the same way.
func TestAgentProcessUnconfinedWithoutIsolation(t *testing.T) {
	c := newProbeCase(t)
	got, r := c.run(t, false)
	for _, name := range []string{"write-workspace", "write-summit", "write-shared-tmp", "read-summit", "read-hidden", "write-worktree"} {
		if got[name] != "ok" {
			t.Errorf("%s: %q, want ok unconfined", name, got[name])
		}
	}
	if got["tmpdir"] != "" {
		t.Errorf("an unconfined agent got a temp dir of summit's: %q", got["tmpdir"])
	}
	checkGroupGone(t, got, r)
}

// Writable entries resolve in the agent's environment: variables, defaults, ~ as its HOME;
// a trailing / marks a directory to create; what does not resolve to an absolute path is
// dropped.
func TestWritablePaths(t *testing.T) {
	a := Agent{Writable: []string{"${CLAUDE_CONFIG_DIR:-~/.claude}/", "${CODEX_HOME:-~/.codex}/", "$STATE/file.json", "~",
		"${UNSET}/x", "$UNSET", "~/.config/agent/"}}
	dirs, other := a.WritablePaths([]string{"HOME=/h", "CODEX_HOME=/c/codex", "STATE=/s", "CLAUDE_CONFIG_DIR="})
	if !slices.Equal(dirs, []string{"/h/.claude", "/c/codex", "/h/.config/agent"}) || !slices.Equal(other, []string{"/s/file.json", "/h"}) {
		t.Errorf("dirs %q other %q", dirs, other)
	}
	if dirs, other := a.WritablePaths(nil); len(dirs)+len(other) != 0 {
		t.Errorf("without HOME: %q %q", dirs, other)
	}
	// Each built-in resolves to its state directory, under HOME or where its variable says.
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"claude-code", []string{"HOME=/h"}, "/h/.claude"},
		{"claude-code", []string{"HOME=/h", "CLAUDE_CONFIG_DIR=/cfg"}, "/cfg"},
		{"codex", []string{"HOME=/h"}, "/h/.codex"},
		{"codex", []string{"HOME=/h", "CODEX_HOME=/ch"}, "/ch"},
		{"gemini-cli", []string{"HOME=/h"}, "/h/.gemini"},
		{"gemini-cli", []string{"HOME=/h", "GEMINI_CLI_HOME=/g"}, "/g/.gemini"},
	} {
		for _, b := range Builtins() {
			if b.Name != tc.name {
				continue
			}
			if dirs, other := b.WritablePaths(b.Environ(tc.env)); !slices.Equal(dirs, []string{tc.want}) || len(other) != 0 {
				t.Errorf("%s %v: %q %q", tc.name, tc.env, dirs, other)
			}
		}
	}
}

// A config entry running a built-in's program gets its state and confined modes, plus its
// own writable; an agent file gets them only for the bare program name (found on PATH, not
// a file of its repository) and cannot add any.
func TestWritableFromConfigAndFiles(t *testing.T) {
	look := func(string) (string, error) { return "", errors.New("not found") }
	s := NewSet(map[string]provider.ACPAgent{
		"claude-real": {Command: "/opt/npm/node_modules/.bin/claude-agent-acp", Writable: []string{"/data/mine/"}},
		"codex-real":  {Command: "codex-acp"},
		"other":       {Command: "/bin/my-agent", Writable: []string{"~/.my-agent/"}},
	}, look)
	for name, want := range map[string][]string{
		"claude-real": {"${CLAUDE_CONFIG_DIR:-~/.claude}/", "/data/mine/"},
		"codex-real":  {"${CODEX_HOME:-~/.codex}/"},
		"other":       {"~/.my-agent/"},
	} {
		a, _ := s.Get(name)
		if !slices.Equal(a.Writable, want) {
			t.Errorf("%s: %q", name, a.Writable)
		}
	}
	if a, _ := s.Get("codex-real"); a.ConfinedModes[agents.ModeAcceptEdits] != "agent-full-access" || !slices.Equal(a.Unasked, []string{"agent-full-access"}) {
		t.Errorf("codex-real modes: %v, unasked %v", a.ConfinedModes, a.Unasked)
	}
	if a, _ := s.Get("other"); a.ConfinedModes != nil {
		t.Errorf("other modes: %v", a.ConfinedModes)
	}
	file := func(cmd string, extra map[string]any) *agents.Definition {
		u := map[string]any{"command": cmd}
		for k, v := range extra {
			u[k] = v
		}
		return &agents.Definition{Name: "f", Kind: Kind, Unknown: u}
	}
	if a, _, err := FromDefinition(file("gemini", nil)); err != nil || !slices.Equal(a.Writable, []string{"${GEMINI_CLI_HOME:-~}/.gemini/"}) {
		t.Errorf("bare gemini: %q %v", a.Writable, err)
	}
	if a, _, err := FromDefinition(file("./tools/gemini", nil)); err != nil || a.Writable != nil {
		t.Errorf("a repository's gemini: %q %v", a.Writable, err)
	}
	if _, _, err := FromDefinition(file("gemini", map[string]any{"writable": []any{"~"}})); err == nil || !strings.Contains(err.Error(), "acp_agents") {
		t.Errorf("an agent file widened its confinement: %v", err)
	}
}

// Confined, an agent whose only working mode runs commands unasked (Codex's agent-full-access)
// is not started where summit asks before commands (acceptEdits): the error says why and what
// works, and no process runs. Where summit runs the shell unasked too (bypassPermissions), or
// the agent keeps an asking mode (plan), it starts.
func TestStartRefusesUnaskedConfinedMode(t *testing.T) {
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: the agent runs unconfined, in its own sandboxed modes")
	}
	wt := t.TempDir()
	sb, err := tools.New(wt, tools.Options{ConfineWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	codex := Builtins()[1]
	if codex.Name != "codex" {
		t.Fatalf("built-ins: %+v", codex)
	}
	for _, tc := range []struct {
		mode    agents.PermissionMode
		refused bool
	}{{agents.ModeAcceptEdits, true}, {agents.ModeBypass, false}, {agents.ModePlan, false}} {
		ran := filepath.Join(wt, "ran-"+string(tc.mode))
		a := codex
		a.Name, a.Command, a.Args = "codex-test", "/bin/sh", []string{"-c", "touch " + ran}
		r, err := Start(context.Background(), Config{Agent: a, Sandbox: sb, Mode: tc.mode,
			Decide: func(tool string) agents.Decision { return agents.Decide(tc.mode, tool) }})
		if r != nil {
			<-r.exited // the stand-in ran and exited; Close reaps it
			r.Close()
		}
		_, statErr := os.Stat(ran)
		if !tc.refused {
			if statErr != nil || err == nil || strings.Contains(err.Error(), "cannot run in") {
				t.Errorf("%s: not started (%v, %v)", tc.mode, statErr, err)
			}
			continue
		}
		if r != nil || statErr == nil {
			t.Errorf("%s: the agent process ran", tc.mode)
		}
		want := "codex-test cannot run in acceptEdits confined to its worktree: its own sandbox cannot start inside summit's (Landlock), " +
			"and its only mode that runs commands here (agent-full-access) runs them without asking summit, which acceptEdits asks about; " +
			"delegate with --permission-mode bypassPermissions to let it run commands unasked (still confined to its worktree), " +
			"--permission-mode plan to let it only read and propose edits, or use an agent that asks for each command (claude-code, gemini-cli)"
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.mode, err, want)
		}
	}
}
