package live

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/session"
)

// Codex (@agentclientprotocol/codex-acp, which runs the bundled `codex app-server` of
// @openai/codex) drives a whole delegation offline, like TestACPRealClaudeCode: its model
// calls go to tapeserve's OpenAI Responses API through a model provider in CODEX_HOME's
// config.toml. Only the install needs the network:
//
//	npm install --prefix session/live/testdata/npm --no-save --no-audit --no-fund @agentclientprotocol/codex-acp@2.6.0
//
// npm install --no-save may remove packages the command did not name: to keep every real agent,
// install them in one command (npm install --prefix session/live/testdata/npm --no-save
// --no-audit --no-fund @agentclientprotocol/claude-agent-acp@0.101.0 @google/gemini-cli@0.61.0
// @agentclientprotocol/codex-acp@2.6.0). SUMMIT_E2E_DEBUG=DIR writes every request body there.

const (
	realCodexPkg     = "@agentclientprotocol/codex-acp"
	realCodexVersion = "2.6.0"
	realCodexBin     = "testdata/npm/node_modules/.bin/codex-acp"
)

// realCodexTape has Codex run two commands in its own sandbox: one writes greeting.txt and
// says on stdout what it wrote (the size read back from the file); one says something on
// stderr and fails with exit code 3 (one stream each: Codex merges them as they come). Codex reports their output and exit in _meta (terminal_output_delta,
// terminal_exit), for a terminal summit never created.
const realCodexTape = `
tapes:
  - name: codex-main
    match: {agent: gpt-5.1-codex, task: "(?s)write greeting\\.txt saying hello"}
    steps:
      - say: "Writing greeting.txt."
      - tool: exec_command
        args: {cmd: "` + realCodexWrite + `"}
      - say: "Checking."
      - tool: exec_command
        args: {cmd: "` + realCodexFail + `"}
      - capsule: {summary: "wrote greeting.txt", confidence: 0.9}
`

// realCodexWrite and realCodexFail are the commands, as the tape's YAML writes them.
const (
	realCodexWrite = `node -e \"const fs = require('fs'); fs.writeFileSync('greeting.txt', 'hello from codex\\\\n'); ` +
		`console.log('wrote ' + fs.statSync('greeting.txt').size + ' bytes')\"`
	realCodexFail = `node -e \"console.error('checking'); process.exit(3)\"`
)

// yamlUnquote undoes the escapes of a YAML double-quoted string the commands use.
var yamlUnquote = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace

// realCodexBroken is why the test skips (see realGeminiBroken); empty: it passes, and is
// required under SUMMIT_E2E=1.
const realCodexBroken = ""

func TestACPRealCodex(t *testing.T) {
	bin := realNPMAgent(t, realCodexPkg, realCodexVersion, realCodexBin, realCodexBroken == "")
	if realCodexBroken != "" && os.Getenv("SUMMIT_E2E_KNOWN_BROKEN") != "1" {
		t.Skip(realCodexBroken)
	}
	start := time.Now()
	c := newRealCase(t)
	// Confined, Codex runs its commands unasked: summit lets it only where it would too
	// (bypassPermissions, approved by --approve all; see TestACPRealCodexAcceptEditsRefused).
	c.ceiling = agents.ModeBypass

	srv, codexHome, home, key := startRealCodex(t, c, bin, realCodexTape)

	o := c.live(nil, "/delegate write greeting.txt saying hello --agent-type codex-real --permission-mode bypassPermissions", "/wait sa-1")
	t.Logf("the delegation took %v", time.Since(start).Round(time.Millisecond))
	checkSeq(t, o.events)

	if sp := o.find(session.TypeSubagentSpawned, "sa-1"); len(sp) != 1 || sp[0].Data.(session.SubagentSpawned).AgentType != "codex-real" {
		o.dumpSubagents(t)
		t.Fatalf("spawned: %+v", sp)
	}
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "wrote greeting.txt" || st.ToolInvocationCount != 2 {
		o.dumpSubagents(t)
		t.Fatalf("stop: %+v capsule %+v", st, st.Capsule)
	}
	// It wrote the file with its own shell (not over terminal/* nor fs/write_text_file): its
	// artifacts are what its worktree changed.
	if got := strings.Join(st.ArtifactPaths, ","); got != "greeting.txt" {
		t.Errorf("artifacts: %s", got)
	}
	if st.Tokens.Input == 0 || st.Tokens.Output == 0 {
		t.Errorf("no tokens counted: %+v", st.Tokens)
	}
	msgs := o.transcript("sa-1", session.TranscriptMessage)
	if !slices.ContainsFunc(msgs, func(e session.TranscriptEvent) bool {
		return e.Text == "the agent is "+realCodexPkg+" "+realCodexVersion
	}) {
		t.Error("no message names the agent and its version")
	}
	tok := ""
	for _, e := range o.transcript("sa-1", session.TranscriptToken) {
		tok += e.Text
	}
	// Codex's warning (the tape server has no model catalogue) comes as a message chunk without
	// a message id: a notice, not the agent's text.
	if !strings.HasPrefix(tok, "Writing greeting.txt.") || !strings.Contains(tok, "Checking.") || !strings.Contains(tok, `"summary": "wrote greeting.txt"`) || strings.Contains(tok, "Warning") {
		t.Errorf("tokens: %q", tok)
	}
	if !slices.ContainsFunc(msgs, func(e session.TranscriptEvent) bool {
		return strings.HasPrefix(e.Text, "Warning: Model metadata for `gpt-5.1-codex` not found.")
	}) {
		t.Errorf("the warning is not a notice: %+v", msgs)
	}
	// Each call records the command Codex ran (as title and input.command), each result its
	// output (stdout and stderr) and how it ended.
	calls := o.transcript("sa-1", session.TranscriptToolCall)
	results := o.transcript("sa-1", session.TranscriptToolResult)
	write, fail := yamlUnquote(realCodexWrite), yamlUnquote(realCodexFail)
	for i, want := range []struct {
		command, result string
		isErr           bool
	}{
		{write, "$ " + write + "\nwrote 17 bytes", false},
		{fail, "$ " + fail + "\nchecking\n[exit code 3]", true},
	} {
		if len(calls) != 2 || len(results) != 2 {
			o.dumpSubagents(t)
			t.Fatalf("%d tool calls, %d results", len(calls), len(results))
		}
		c, r := calls[i], results[i]
		in, _ := c.Args["input"].(map[string]any)
		if c.Tool != "run_shell_command" || c.Args["title"] != want.command || in["command"] != want.command {
			t.Errorf("call %d does not record its command %q: %+v", i, want.command, c)
		}
		if r.CallID != c.CallID || r.Result != want.result || r.IsError != want.isErr {
			t.Errorf("result %d: %+v, want %q", i, r, want.result)
		}
	}
	// Codex's full-access mode runs commands without asking: the one request is summit's, for
	// bypassPermissions, and --approve all granted it.
	if r, g := o.find(session.TypePermissionRequested, "sa-1"), o.find(session.TypePermissionGranted, "sa-1"); len(r) != 1 || len(g) != 1 ||
		r[0].Data.(session.PermissionRequested).Tool != "bypassPermissions" {
		t.Errorf("%d grants for %d requests: %+v", len(g), len(r), r)
	}

	checkRealEnd(t, c, o, []string{"greeting.txt added"}, "CODEX_HOME="+codexHome, srv.Close, key, home)
	checkRealImport(t, codexHome, 0, "greeting.txt") // the rollout this real Codex wrote
	served := srv.log()
	for _, want := range []string{"tape codex-main, turn 1", "tape codex-main, turn 2", "tape codex-main, turn 3"} {
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

// startRealCodex serves tape as the OpenAI Responses API and configures the agent codex-real
// to run the adapter bin against it, through a model provider in the config.toml of a
// CODEX_HOME in a temporary home. key is the agent's API key.
func startRealCodex(t *testing.T, c *acpCase, bin, tape string) (srv *tapeServer, codexHome, home, key string) {
	t.Helper()
	srv = newTapeServer(t, tape, "codex.yaml")
	home = t.TempDir()
	codexHome = filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, codexHome, "config.toml", `model = "gpt-5.1-codex"
model_provider = "tapes"
check_for_update_on_startup = false

[model_providers.tapes]
name = "tapes"
base_url = "`+srv.URL+`/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
`)
	key = "test-key-not-secret-e2e"
	c.config(map[string]any{"codex-real": map[string]any{"command": bin, "env": map[string]string{
		"OPENAI_API_KEY": key, "CODEX_HOME": codexHome, "HOME": home,
	}}})
	return srv, codexHome, home, key
}
