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
)

// Gemini CLI (@google/gemini-cli, run as `gemini --acp`) drives a whole delegation offline,
// like TestACPRealClaudeCode: its model calls go to tapeserve's Gemini API through
// GOOGLE_GEMINI_BASE_URL. Only the install needs the network:
//
//	npm install --prefix session/live/testdata/npm --no-save --no-audit --no-fund @google/gemini-cli@0.61.0
//
// npm install --no-save may remove packages the command did not name: to keep every real agent,
// install them in one command (npm install --prefix session/live/testdata/npm --no-save
// --no-audit --no-fund @agentclientprotocol/claude-agent-acp@0.101.0 @google/gemini-cli@0.61.0
// @agentclientprotocol/codex-acp@2.6.0). SUMMIT_E2E_DEBUG=DIR writes every request body there.

const (
	realGeminiPkg     = "@google/gemini-cli"
	realGeminiVersion = "0.61.0"
	realGeminiBin     = "testdata/npm/node_modules/.bin/gemini"
)

// realNPMAgent is an installed npm agent's binary; the test skips without node or the install,
// and fails instead when SUMMIT_E2E=1 and required.
func realNPMAgent(t *testing.T, pkg, version, rel string, required bool) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		msg := why + "; install it with: npm install --prefix session/live/testdata/npm --no-save --no-audit --no-fund " +
			pkg + "@" + version
		if required && os.Getenv("SUMMIT_E2E") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH")
	}
	bin, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		missing(pkg + " is not installed under testdata/npm")
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(bin)), filepath.FromSlash(pkg), "package.json"))
	var p struct{ Version string }
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil || p.Version != version {
		missing(pkg + " " + p.Version + " is installed, the tape is written for " + version)
	}
	return bin
}

// tapeServer serves tapes over HTTP; served is its log, one line per request. With
// SUMMIT_E2E_DEBUG=DIR each request body is written there (its order, path and body).
type tapeServer struct {
	*httptest.Server
	mu     sync.Mutex
	served []string
}

func newTapeServer(t *testing.T, src, file string) *tapeServer {
	t.Helper()
	tapes, err := provider.ParseTapes([]byte(src), file)
	if err != nil {
		t.Fatal(err)
	}
	s := &tapeServer{}
	h := tapeserve.New(tapes, tapeserve.Options{NoSleep: true, Log: func(l string) {
		s.mu.Lock()
		s.served = append(s.served, l)
		s.mu.Unlock()
	}})
	debug, n := os.Getenv("SUMMIT_E2E_DEBUG"), 0
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, tapeserve.DefaultMaxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if debug != "" {
			s.mu.Lock()
			n++
			name := strconv.Itoa(n) + strings.ReplaceAll(strings.ReplaceAll(r.URL.Path, "/", "_"), ":", "_") + ".json"
			s.mu.Unlock()
			_ = os.WriteFile(filepath.Join(debug, name), b, 0o644)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the model server served:\n%s", strings.Join(s.log(), "\n"))
		}
	})
	return s
}

func (s *tapeServer) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.served)
}

// realGeminiTape answers Gemini CLI 0.61.0's model calls (all of them go to GEMINI_MODEL: in
// this version the delegation sends no routing, next-speaker or loop-detection side request).
// It writes greeting.txt with write_file (a path relative to the worktree; Gemini CLI checks
// for an existing file over fs/read_text_file first, then writes over fs/write_text_file),
// runs a command with run_shell_command that writes built.txt (Gemini CLI runs it itself, not
// over terminal/*, and asks: autoEdit allows edits only), then ends with a capsule.
const realGeminiTape = `
tapes:
  - name: gemini-main
    match: {agent: summit-main, task: "(?s)write greeting\\.txt saying hello"}
    steps:
      - say: "Writing greeting.txt."
      - tool: write_file
        args: {file_path: "greeting.txt", content: "hello from gemini\n"}
      - say: "Marking the build."
      - tool: run_shell_command
        args: {command: "node -e \"require('fs').writeFileSync('built.txt', 'ok\\\\n')\"", description: "Mark the build"}
      - capsule: {summary: "wrote greeting.txt", confidence: 0.9}
`

// realGeminiBroken is why the test skips: what summit gets wrong with Gemini CLI 0.61.0.
// SUMMIT_E2E_KNOWN_BROKEN=1 runs it anyway (to check a fix); clear it once the test passes
// three times in a row, and the test is then required under SUMMIT_E2E=1.
const realGeminiBroken = "" // fixed: missing files, _meta usage and the mode notice (agents/acp)

func TestACPRealGeminiCLI(t *testing.T) {
	bin := realNPMAgent(t, realGeminiPkg, realGeminiVersion, realGeminiBin, realGeminiBroken == "")
	if realGeminiBroken != "" && os.Getenv("SUMMIT_E2E_KNOWN_BROKEN") != "1" {
		t.Skip(realGeminiBroken)
	}
	start := time.Now()
	c := newRealCase(t)

	srv, home, key := startRealGemini(t, c, bin, realGeminiTape)

	o := c.live(nil, "/delegate write greeting.txt saying hello --agent-type gemini-real", "/wait sa-1")
	t.Logf("the delegation took %v", time.Since(start).Round(time.Millisecond))
	checkSeq(t, o.events)

	if sp := o.find(session.TypeSubagentSpawned, "sa-1"); len(sp) != 1 || sp[0].Data.(session.SubagentSpawned).AgentType != "gemini-real" {
		o.dumpSubagents(t)
		t.Fatalf("spawned: %+v", sp)
	}
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "wrote greeting.txt" || st.ToolInvocationCount != 2 {
		o.dumpSubagents(t)
		t.Fatalf("stop: %+v capsule %+v", st, st.Capsule)
	}
	// greeting.txt went over fs/write_text_file, built.txt by its own shell: both are what it made.
	if got := strings.Join(st.ArtifactPaths, ","); got != "built.txt,greeting.txt" {
		t.Errorf("artifacts: %s", got)
	}
	if st.Tokens.Input == 0 || st.Tokens.Output == 0 {
		t.Errorf("no tokens counted: %+v", st.Tokens)
	}
	if !slices.ContainsFunc(o.transcript("sa-1", session.TranscriptMessage), func(e session.TranscriptEvent) bool {
		return e.Text == "the agent is gemini-cli "+realGeminiVersion
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
	if len(results) != 2 || results[0].IsError || !strings.Contains(results[0].Result, "+hello from gemini") || results[1].IsError {
		t.Errorf("tool results: %+v", results)
	}
	// Its shell call asked (autoEdit allows edits only), and --approve all granted it.
	reqs := o.find(session.TypePermissionRequested, "sa-1")
	if len(reqs) != 1 || reqs[0].Data.(session.PermissionRequested).Tool != "run_shell_command" ||
		!strings.Contains(reqs[0].Data.(session.PermissionRequested).Reason, "built.txt") {
		t.Errorf("permission requests: %+v", reqs)
	}
	if g := o.find(session.TypePermissionGranted, "sa-1"); len(g) != len(reqs) {
		t.Errorf("%d grants for %d requests", len(g), len(reqs))
	}

	checkRealEnd(t, c, o, []string{"built.txt added", "greeting.txt added"}, "GEMINI_CLI_HOME="+home, srv.Close, key, home)
	checkRealImport(t, filepath.Join(home, ".gemini"), 0, "greeting.txt") // the chat this real Gemini CLI saved
	served := srv.log()
	for _, want := range []string{"tape gemini-main, turn 1", "tape gemini-main, turn 2", "tape gemini-main, turn 3"} {
		if !slices.ContainsFunc(served, func(l string) bool { return strings.Contains(l, want) }) {
			t.Errorf("the server did not serve %q:\n%s", want, strings.Join(served, "\n"))
		}
	}
	for _, l := range served {
		if !strings.Contains(l, "attempt") {
			t.Errorf("a request was refused: %s", l)
		}
	}
}

// startRealGemini serves tape as the Gemini API and configures the agent gemini-real to run
// bin (gemini --acp) against it. Gemini CLI's own state (settings, trusted folders, sessions)
// lives in a temporary HOME: no user settings apply and nothing is left behind. The workspace
// is trusted (else it refuses allow_always and runs in a restricted mode), and it does not
// relaunch itself. key is the agent's API key.
func startRealGemini(t *testing.T, c *acpCase, bin, tape string) (srv *tapeServer, home, key string) {
	t.Helper()
	srv = newTapeServer(t, tape, "gemini.yaml")
	home = t.TempDir()
	key = "test-key-not-secret-e2e"
	c.config(map[string]any{"gemini-real": map[string]any{"command": bin, "args": []string{"--acp"}, "env": map[string]string{
		"GOOGLE_GEMINI_BASE_URL": srv.URL, "GEMINI_API_KEY": key, "GEMINI_MODEL": "summit-main",
		"HOME": home, "GEMINI_CLI_HOME": home, "GEMINI_CLI_NO_RELAUNCH": "true",
		"GEMINI_TELEMETRY_ENABLED": "false", "GEMINI_CLI_TRUST_WORKSPACE": "true",
	}}})
	return srv, home, key
}
