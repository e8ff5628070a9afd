package live

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/provider/tapeserve"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

// A real ACP agent installed from npm drives a whole delegation, offline: Claude Code through
// its ACP adapter (@agentclientprotocol/claude-agent-acp, which runs the Claude Agent SDK's
// bundled claude binary), its model calls answered in-process by tapeserve. Only the install
// needs the network:
//
//	npm install --prefix session/live/testdata/npm --no-save --no-audit --no-fund @agentclientprotocol/claude-agent-acp@0.101.0
//
// The test runs when node and that install are present, and is required when SUMMIT_E2E=1.
// SUMMIT_E2E_DEBUG=DIR writes every request body the server receives there (to write a tape
// for another version of the agent: its tools, side requests and prompt layout).

const (
	realClaudePkg     = "@agentclientprotocol/claude-agent-acp"
	realClaudeVersion = "0.101.0"
	realClaudeBin     = "testdata/npm/node_modules/.bin/claude-agent-acp"
)

// realClaude is the installed adapter's path; the test skips without node or the install,
// and fails instead when SUMMIT_E2E=1.
func realClaude(t *testing.T) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		msg := why + "; install it with: npm install --prefix session/live/testdata/npm --no-save --no-audit --no-fund " +
			realClaudePkg + "@" + realClaudeVersion
		if os.Getenv("SUMMIT_E2E") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH")
	}
	bin, err := filepath.Abs(realClaudeBin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		missing(realClaudePkg + " is not installed under testdata/npm")
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(bin)), filepath.FromSlash(realClaudePkg), "package.json"))
	var pkg struct{ Version string }
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	if err != nil || pkg.Version != realClaudeVersion {
		missing(realClaudePkg + " " + pkg.Version + " is installed, the tape is written for " + realClaudeVersion)
	}
	return bin
}

// realClaudeTape answers Claude Code 0.101.0's model calls. The main model (summit-main) gets
// the delegation, writes greeting.txt with its own Write tool (an absolute path: the worktree),
// runs a command with its Bash tool that writes built.txt (which asks: acceptEdits allows
// edits, and commands it knows to be file edits such as touch, only), then ends with a capsule. The small fast model (summit-fast) titles the session in the JSON it asks for.
const realClaudeTape = `
tapes:
  - name: claude-title
    match: {agent: summit-fast}
    steps:
      - say: '{"title": "Greeting file"}'
  - name: claude-main
    match: {agent: summit-main, task: "(?s)# Task\\s+write greeting\\.txt saying hello"}
    steps:
      - say: "Writing greeting.txt."
      - tool: Write
        args: {file_path: "WORKTREE/greeting.txt", content: "hello from claude\n"}
      - say: "Marking the build."
      - tool: Bash
        args: {command: "node -e \"require('fs').writeFileSync('built.txt', 'ok\\\\n')\"", description: "Mark the build"}
      - capsule: {summary: "wrote greeting.txt", confidence: 0.9}
`

func TestACPRealClaudeCode(t *testing.T) {
	bin := realClaude(t)
	start := time.Now()
	c := newRealCase(t)

	srv, served, home, key := startRealClaude(t, c, bin, realClaudeTape)
	o := c.live(nil, "/delegate write greeting.txt saying hello --agent-type claude-real", "/wait sa-1")
	t.Logf("the delegation took %v", time.Since(start).Round(time.Millisecond))
	checkSeq(t, o.events)

	if sp := o.find(session.TypeSubagentSpawned, "sa-1"); len(sp) != 1 || sp[0].Data.(session.SubagentSpawned).AgentType != "claude-real" {
		o.dumpSubagents(t)
		t.Fatalf("spawned: %+v", sp)
	}
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "wrote greeting.txt" || st.ToolInvocationCount != 2 {
		o.dumpSubagents(t)
		t.Fatalf("stop: %+v capsule %+v", st, st.Capsule)
	}
	// It wrote the files itself, never over fs/write_text_file: its artifacts are what its
	// worktree changed.
	if got := strings.Join(st.ArtifactPaths, ","); got != "built.txt,greeting.txt" {
		t.Errorf("artifacts: %s", got)
	}
	if st.Tokens.Input == 0 || st.Tokens.Output == 0 {
		t.Errorf("no tokens counted: %+v", st.Tokens)
	}
	// The agent is the real one, and says so.
	if !slices.ContainsFunc(o.transcript("sa-1", session.TranscriptMessage), func(e session.TranscriptEvent) bool {
		return e.Text == "the agent is "+realClaudePkg+" "+realClaudeVersion
	}) {
		t.Error("no message names the agent and its version")
	}
	tok := ""
	for _, e := range o.transcript("sa-1", session.TranscriptToken) {
		tok += e.Text
	}
	if !strings.HasPrefix(tok, "Writing greeting.txt.") || !strings.Contains(tok, `"summary": "wrote greeting.txt"`) {
		t.Errorf("tokens: %q", tok)
	}
	calls := o.transcript("sa-1", session.TranscriptToolCall)
	results := o.transcript("sa-1", session.TranscriptToolResult)
	if len(calls) != 2 || calls[0].Tool != "replace" || calls[1].Tool != "run_shell_command" {
		t.Errorf("tool calls: %+v", calls)
	}
	if len(results) != 2 || results[0].IsError || !strings.Contains(results[0].Result, "+hello from claude") || results[1].IsError {
		t.Errorf("tool results: %+v", results)
	}
	// Claude Code announces a call before its input; the result carries the call as it ran.
	if len(results) == 2 {
		in, _ := json.Marshal(results[0].Args)
		bash, _ := json.Marshal(results[1].Args)
		if !strings.Contains(string(in), "greeting.txt") || !strings.Contains(string(in), "hello from claude") || !strings.Contains(string(bash), "built.txt") {
			t.Errorf("the results do not record the calls as they ran: %s / %s", in, bash)
		}
	}
	// Its Bash call asked (acceptEdits allows edits only), and --approve all granted it.
	reqs := o.find(session.TypePermissionRequested, "sa-1")
	if len(reqs) != 1 || reqs[0].Data.(session.PermissionRequested).Tool != "run_shell_command" ||
		!strings.Contains(reqs[0].Data.(session.PermissionRequested).Reason, "built.txt") {
		t.Errorf("permission requests: %+v", reqs)
	}
	if g := o.find(session.TypePermissionGranted, "sa-1"); len(g) != len(reqs) {
		t.Errorf("%d grants for %d requests", len(g), len(reqs))
	}

	// Claude Code wrote both files itself, in its worktree: they are its recorded changes.
	checkRealEnd(t, c, o, []string{"built.txt added", "greeting.txt added"}, "CLAUDE_CONFIG_DIR="+home, srv.Close, key, home)
	// Every model call was a tape's: the title, and the main model's three turns.
	checkServed(t, served(), "tape claude-title, turn 1", "tape claude-main, turn 1", "tape claude-main, turn 2", "tape claude-main, turn 3")
}

// dumpSubagents logs every event about a subagent (when a check fails).
func (o outcome) dumpSubagents(t *testing.T) {
	t.Helper()
	for _, e := range o.events {
		if e.SubagentID != "" {
			t.Logf("%s %s %+v", e.SubagentID, e.Type, e.Data)
		}
	}
}

// checkServed checks that the model server served each of want and refused nothing.
func checkServed(t *testing.T, served []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(served, func(l string) bool { return strings.Contains(l, w) }) {
			t.Errorf("the server did not serve %q:\n%s", w, strings.Join(served, "\n"))
		}
	}
	for _, l := range served {
		if !strings.Contains(l, "attempt") {
			t.Errorf("a request was refused: %s", l)
		}
	}
}

// startRealClaude serves tape (WORKTREE: sa-1's worktree) as the Anthropic API in-process
// and configures the agent claude-real to run the adapter bin against it, with its state in a
// temporary home. served lists what the server answered; key is the agent's API key.
func startRealClaude(t *testing.T, c *acpCase, bin, tape string) (srv *httptest.Server, served func() []string, home, key string) {
	t.Helper()
	// The worktree is known before the session starts: the cache's worktrees/<session>/<id>.
	wt := filepath.Join(c.cache, "worktrees", "s-test", "sa-1")
	tapes, err := provider.ParseTapes([]byte(strings.ReplaceAll(tape, "WORKTREE", wt)), "claude.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log []string
	h := tapeserve.New(tapes, tapeserve.Options{NoSleep: true, Log: func(l string) {
		mu.Lock()
		log = append(log, l)
		mu.Unlock()
	}})
	debug, n := os.Getenv("SUMMIT_E2E_DEBUG"), 0
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, tapeserve.DefaultMaxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if debug != "" {
			mu.Lock()
			n++
			name := strconv.Itoa(n) + strings.ReplaceAll(r.URL.Path, "/", "_") + ".json"
			mu.Unlock()
			_ = os.WriteFile(filepath.Join(debug, name), b, 0o644)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("the model server served:\n%s", strings.Join(log, "\n"))
			mu.Unlock()
		}
	})

	// Claude Code's own state (settings, sessions, its device id) lives in a temporary
	// directory: no user settings apply and nothing is left behind.
	home = t.TempDir()
	key = "test-key-not-secret-e2e"
	c.config(map[string]any{"claude-real": map[string]any{"command": bin, "env": map[string]string{
		"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": key,
		"ANTHROPIC_MODEL": "summit-main", "ANTHROPIC_SMALL_FAST_MODEL": "summit-fast",
		"ANTHROPIC_DEFAULT_OPUS_MODEL": "summit-main", "ANTHROPIC_DEFAULT_SONNET_MODEL": "summit-main",
		"ANTHROPIC_DEFAULT_HAIKU_MODEL": "summit-fast", "CLAUDE_CONFIG_DIR": home, "HOME": home,
		"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}}})

	served = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(log)
	}
	return srv, served, home, key
}

// procsWithEnv lists the live processes whose environment holds kv (zombies run nothing).
// checkRealEnd checks what every real-agent delegation leaves: its worktree changes are
// exactly changes and the main workspace has none of them; no process with procEnv in its
// environment outlives the session; and, once closeServer has stopped the model endpoint, the
// recording holds none of secrets and replays as a success that shows greeting.txt.
func checkRealEnd(t *testing.T, c *acpCase, o outcome, changes []string, procEnv string, closeServer func(), secrets ...string) {
	t.Helper()
	var paths []string
	for _, f := range o.changes(t, "sa-1").Files {
		paths = append(paths, f.Path+" "+f.Kind)
	}
	if !slices.Equal(paths, changes) {
		t.Errorf("changes: %v", paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(c.ws, strings.Fields(p)[0])); err == nil {
			t.Errorf("the agent wrote %s in the main workspace", p)
		}
	}
	// No process of the agent outlives the session: none has its environment.
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := procsWithEnv(procEnv)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent processes left: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The recording replays with no external process (the server is gone too), and holds
	// none of the agent's environment.
	closeServer()
	rec, err := os.ReadFile(c.rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(rec, []byte(s)) {
			t.Errorf("the recording holds %q of the agent's environment", s)
		}
	}
	state, _, err := record.LoadFile(c.rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sa := state.Subagent("sa-1"); sa == nil || sa.Outcome != session.OutcomeSuccess {
		t.Fatalf("replayed: %+v", sa)
	}
	if out := render.Render(state); len(paths) == 0 || !strings.Contains(out, strings.Fields(paths[len(paths)-1])[0]) {
		t.Errorf("--print of the replay:\n%s", out)
	}
}

func procsWithEnv(kv string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !slices.Contains(strings.Split(string(env), "\x00"), kv) || pidGone(pid) {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}
