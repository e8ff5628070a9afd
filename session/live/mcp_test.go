package live

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/mcp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// MCP tools in a session: the agent file names them, the policy asks (or the allow list or
// --approve answers), the call goes through the session's server, and the server stops with
// the session.

// mcpTestServer is agents/mcp's test server (echo, add, fail, slow, big, image), built once
// per test process (main_test.go).
func mcpTestServer(t *testing.T) string {
	t.Helper()
	bin, err := mcpServer()
	if err != nil {
		t.Fatalf("building the test MCP server: %v", err)
	}
	return bin
}

// mcpSession runs script on tapes (YAML text) with the MCP servers, in h's workspace. pids
// are the MCP server processes that ran when the last subagent stopped.
func mcpSession(t *testing.T, h *harness, servers map[string]provider.MCPServer, tapes, script string) (outcome, []int) {
	t.Helper()
	tapeDir := t.TempDir()
	write(t, tapeDir, "mcp.yaml", tapes)
	ts, err := provider.LoadTapes(tapeDir)
	if err != nil {
		t.Fatal(err)
	}
	clock := NewSimClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	prov := provider.NewScript(provider.ScriptConfig{Tapes: ts, Sleep: clock.Sleep, Now: clock.Now})
	rec, err := record.OpenRecorderFile(h.rec, record.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := mcp.NewManager(servers, mcp.Options{Dir: h.ws})
	t.Cleanup(func() { m.Close() })
	var pids []int
	x, err := Start(Options{
		Workspace: h.ws, SessionID: "s-test", ProgramVersion: "test", Clock: clock, Recorder: rec,
		Catalogue:    agents.Load(agents.Options{Workspace: h.ws}),
		Route:        func(*agents.Definition) (provider.Provider, string, error) { return prov, "", nil },
		ProviderName: "script", Approve: h.approve, Ceiling: h.ceiling, CacheDir: h.cache, MCP: m,
		Backoff: func(int) time.Duration { return time.Millisecond },
		OnEvent: func(e session.Event) {
			if e.Type == session.TypeSubagentStop {
				pids = m.PIDs()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	code, err := RunScript(context.Background(), x, strings.NewReader(script), &progress)
	if err != nil {
		t.Fatalf("RunScript: %v\n%s", err, progress.String())
	}
	return h.read(code, x, progress.String()), pids
}

func agentFile(t *testing.T, ws, name, frontmatter string) {
	t.Helper()
	dir := filepath.Join(ws, ".claude", "agents")
	os.MkdirAll(dir, 0o755)
	write(t, dir, name+".md", "---\nname: "+name+"\ndescription: Uses an MCP server.\n"+frontmatter+"---\nUse the server's tools.\n")
}

const echoTape = `tapes:
  - name: echoer
    match: {agent: echoer}
    steps:
      - say: "Asking the server."
      - tool: %s
        args: %s
        on_denied:
          - capsule: {summary: "the echo was denied", confidence: 0.2}
      - capsule: {summary: "echoed through MCP", confidence: 0.9}
`

// processGone waits a little for pid to end (a zombie nobody reaps counts as ended).
func processGone(pid int) bool {
	for i := 0; i < 100; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if s := string(b); strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// toolEvents returns the tool_call and tool_result of tool in sa-1's transcript.
func toolEvents(t *testing.T, o outcome, tool string) (session.TranscriptEvent, session.TranscriptEvent) {
	t.Helper()
	var call, result *session.TranscriptEvent
	for _, te := range o.transcript("sa-1", "") {
		if te.Tool != tool {
			continue
		}
		switch te.EventType {
		case session.TranscriptToolCall:
			call = &te
		case session.TranscriptToolResult:
			result = &te
		}
	}
	if call == nil || result == nil {
		t.Fatalf("no call and result of %s in %+v", tool, o.transcript("sa-1", ""))
	}
	return *call, *result
}

func TestMCPToolInSession(t *testing.T) {
	bin := mcpTestServer(t)
	tape := fmt.Sprintf(echoTape, "mcp__t__echo", `{text: "hello"}`)
	for _, c := range []struct {
		name, approve string
		allow         []string
		asked         bool
		result        string
		isErr         bool
	}{
		{"approve all", ApproveAll, nil, true, "echo: hello", false},
		{"approve shell", ApproveShell, nil, true, "denied: headless run: --approve shell does not allow mcp__t__echo", true},
		{"allow list", ApproveNone, []string{"echo"}, false, "echo: hello", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.approve = c.approve
			agentFile(t, h.ws, "echoer", "tools: Read, mcp__t__*\n")
			o, pids := mcpSession(t, h, map[string]provider.MCPServer{"t": {Command: bin, Allow: c.allow}}, tape,
				"/delegate say hello --agent-type echoer\n/wait sa-1\n")
			checkSeq(t, o.events)
			sp := o.find(session.TypeSubagentSpawned, "sa-1")
			if len(sp) != 1 || !slices.Equal(sp[0].Data.(session.SubagentSpawned).Tools, []string{"read_file", "mcp__t__*"}) {
				t.Fatalf("spawned %+v", sp)
			}
			reqs := o.find(session.TypePermissionRequested, "sa-1")
			if asked := len(reqs) == 1 && reqs[0].Data.(session.PermissionRequested).Tool == "mcp__t__echo"; asked != c.asked || len(reqs) > 1 {
				t.Errorf("permission requests %+v", reqs)
			}
			call, result := toolEvents(t, o, "mcp__t__echo")
			if call.Args["text"] != "hello" || result.Result != c.result || result.IsError != c.isErr {
				t.Errorf("call %+v result %+v", call, result)
			}
			if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess {
				t.Errorf("stop %+v", st)
			}
			if len(pids) != 1 {
				t.Fatalf("servers running at the stop: %v", pids)
			}
			if !processGone(pids[0]) {
				t.Errorf("the MCP server %d outlived the session", pids[0])
			}
		})
	}
}

// A server that cannot start fails the subagent that needed it, with its stderr; an agent
// naming a server that is not configured gets a policy note, or is refused when nothing is
// left.
func TestMCPServerProblemsInSession(t *testing.T) {
	t.Parallel()
	bin := mcpTestServer(t)
	h := newHarness(t)
	agentFile(t, h.ws, "echoer", "tools: [Read, mcp__bad__echo, mcp__gh__search]\n")
	agentFile(t, h.ws, "ghonly", "tools: mcp__gh__search\n")
	o, pids := mcpSession(t, h, map[string]provider.MCPServer{"bad": {Command: bin, Env: map[string]string{"MCP_TEST_CRASH": "cannot open the database"}}},
		fmt.Sprintf(echoTape, "mcp__bad__echo", `{text: "x"}`),
		"/delegate say hello --agent-type echoer\n/wait sa-1\n/delegate search --agent-type ghonly\n")
	errs := o.find(session.TypeSubagentError, "sa-1")
	if len(errs) != 1 {
		t.Fatalf("errors %+v", errs)
	}
	se := errs[0].Data.(session.SubagentError)
	for _, want := range []string{"MCP server bad: could not start it: it exited before answering (exit status 3)", "cannot open the database"} {
		if !strings.Contains(se.Error, want) {
			t.Errorf("error %q lacks %q", se.Error, want)
		}
	}
	if se.Context != "mcp server" || o.stop(t, "sa-1").Outcome != session.OutcomeFailure {
		t.Errorf("error %+v, stop %+v", se, o.stop(t, "sa-1"))
	}
	if len(pids) != 0 {
		t.Errorf("servers left running: %v", pids)
	}
	rej := o.find(session.TypeCommandRejected, "")
	if len(rej) != 1 || !strings.Contains(rej[0].Data.(session.CommandRejected).Error, "mcp__gh__search removed: MCP server gh is not configured (configured: bad)") {
		t.Errorf("rejections %+v", rej)
	}

	// With a working server, the note on the unconfigured one is among the capsule's.
	h = newHarness(t)
	agentFile(t, h.ws, "echoer", "tools: [Read, mcp__t__echo, mcp__gh__search]\n")
	h.approve = ApproveAll
	o, _ = mcpSession(t, h, map[string]provider.MCPServer{"t": {Command: bin}},
		fmt.Sprintf(echoTape, "mcp__t__echo", `{text: "x"}`), "/delegate say hello --agent-type echoer\n/wait sa-1\n")
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || !slices.Contains(st.Capsule.PolicyNotes, "mcp__gh__search removed: MCP server gh is not configured (configured: t)") {
		t.Errorf("stop %+v", st)
	}
}

// End to end with the real reference server (npm @modelcontextprotocol/server-everything):
// an agent file listing mcp__everything__echo calls it through the server, and the recording
// holds the call and the echoed result. Required when SUMMIT_E2E=1.
func TestMCPEverythingEndToEnd(t *testing.T) {
	index := os.Getenv("SUMMIT_MCP_EVERYTHING")
	if index == "" {
		// Where .ci/run installs it (see agents/mcp/everything_test.go).
		index = "../../agents/mcp/testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	}
	index, _ = filepath.Abs(index)
	_, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(index); err != nil || nodeErr != nil {
		msg := "the MCP end-to-end test needs node and @modelcontextprotocol/server-everything at " + index
		if os.Getenv("SUMMIT_E2E") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	h := newHarness(t)
	h.approve = ApproveAll
	agentFile(t, h.ws, "echoer", "tools: Read, mcp__everything__echo\n")
	o, pids := mcpSession(t, h, map[string]provider.MCPServer{"everything": {Command: "node", Args: []string{index, "stdio"}}},
		fmt.Sprintf(echoTape, "mcp__everything__echo", `{message: "hello from summit"}`),
		"/delegate say hello --agent-type echoer\n/wait sa-1\n")
	checkSeq(t, o.events)
	call, result := toolEvents(t, o, "mcp__everything__echo")
	if call.Args["message"] != "hello from summit" || result.Result != "Echo: hello from summit" || result.IsError {
		t.Errorf("call %+v result %+v", call, result)
	}
	// The recording on disk holds both, and replays to the same state.
	b, _ := os.ReadFile(h.rec)
	if !bytes.Contains(b, []byte(`"tool":"mcp__everything__echo"`)) || !bytes.Contains(b, []byte(`Echo: hello from summit`)) {
		t.Errorf("the recording lacks the call or its result")
	}
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess || st.Capsule.Summary != "echoed through MCP" {
		t.Errorf("stop %+v", st)
	}
	if len(pids) != 1 || !processGone(pids[0]) {
		t.Errorf("server processes %v outlived the session", pids)
	}
}

// An MCP tool that may write (the server does not mark it readOnlyHint) puts its subagent in
// a worktree, even when it is the subagent's only writing tool, and its server runs there
// (working directory and MCP root): what it writes is the subagent's recorded change, and the
// workspace is untouched until /apply.
func TestMCPWriteToolIsolates(t *testing.T) {
	bin := mcpTestServer(t)
	h := newHarness(t)
	h.approve = ApproveAll
	agentFile(t, h.ws, "writer", "tools: Read, mcp__t__write\n")
	tape := `tapes:
  - name: writer
    match: {agent: writer}
    steps:
      - tool: mcp__t__write
        args: {path: "mcp.txt", text: "written by an MCP tool\n"}
      - capsule: {summary: "wrote mcp.txt through MCP", confidence: 0.9}
`
	o, _ := mcpSession(t, h, map[string]provider.MCPServer{"t": {Command: bin}}, tape,
		"/delegate write mcp.txt --agent-type writer\n/wait sa-1\n")
	checkSeq(t, o.events)
	iso := o.find(session.TypeSubagentIsolated, "sa-1")
	if len(iso) != 1 {
		t.Fatalf("isolated: %+v", iso)
	}
	wt := iso[0].Data.(session.SubagentIsolated).Worktree
	_, result := toolEvents(t, o, "mcp__t__write")
	if result.IsError || !strings.Contains(result.Result, "roots "+wt+")") {
		t.Errorf("the server did not run in the worktree %s: %+v", wt, result)
	}
	var paths []string
	for _, f := range o.changes(t, "sa-1").Files {
		paths = append(paths, f.Path+" "+f.Kind)
	}
	if !slices.Equal(paths, []string{"mcp.txt added"}) {
		t.Errorf("changes %v", paths)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "mcp.txt")); err == nil {
		t.Error("the MCP tool wrote in the workspace")
	}
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess {
		t.Errorf("stop %+v", st)
	}
}

// The server run for a writing subagent starts in that subagent's jail (issue 26): its write
// in the worktree succeeds, a write to the main workspace fails, the workspace's .summit/ is
// out of its reach, and the host's 127.0.0.1 listener too (no network: true, no web_fetch).
// On the old code the server got the terminal guard only, and all three succeeded.
func TestMCPWriteServerJailed(t *testing.T) {
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: nothing confines writes")
	}
	bin := mcpTestServer(t)
	h := newHarness(t)
	h.approve = ApproveAll
	os.MkdirAll(filepath.Join(h.ws, ".summit"), 0o755)
	write(t, filepath.Join(h.ws, ".summit"), "probe.txt", "summit's own\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	agentFile(t, h.ws, "writer", "tools: Read, mcp__t__write, mcp__t__read, mcp__t__dial\n")
	escape := filepath.Join(h.ws, "escape.txt")
	tape := fmt.Sprintf(`tapes:
  - name: writer
    match: {agent: writer}
    steps:
      - tool: mcp__t__write
        args: {path: "mcp.txt", text: "written by an MCP tool\n"}
      - tool: mcp__t__write
        args: {path: %q, text: "escaped\n"}
      - tool: mcp__t__read
        args: {path: %q}
      - tool: mcp__t__dial
        args: {address: %q}
      - capsule: {summary: "probed the jail", confidence: 0.9}
`, escape, filepath.Join(h.ws, ".summit", "probe.txt"), l.Addr().String())
	o, _ := mcpSession(t, h, map[string]provider.MCPServer{"t": {Command: bin, Env: map[string]string{"MCP_TEST_PROBE": "1"}}}, tape,
		"/delegate probe the jail --agent-type writer\n/wait sa-1\n")
	checkSeq(t, o.events)
	var results []session.TranscriptEvent
	for _, te := range o.transcript("sa-1", "") {
		if te.EventType == session.TranscriptToolResult && strings.HasPrefix(te.Tool, "mcp__t__") {
			results = append(results, te)
		}
	}
	if len(results) != 4 {
		t.Fatalf("results %+v", results)
	}
	if results[0].IsError {
		t.Errorf("the write in the worktree failed: %+v", results[0])
	}
	for i, what := range []string{"wrote the main workspace", "read .summit/", "reached the host's loopback"} {
		if r := results[i+1]; !r.IsError {
			t.Errorf("the server %s: %+v", what, r)
		}
	}
	if _, err := os.Stat(escape); err == nil {
		t.Error("escape.txt exists in the workspace")
	}
	var paths []string
	for _, f := range o.changes(t, "sa-1").Files {
		paths = append(paths, f.Path+" "+f.Kind)
	}
	if !slices.Equal(paths, []string{"mcp.txt added"}) {
		t.Errorf("changes %v", paths)
	}
}

// The session's shared server instance (a grant whose tools all say readOnlyHint) runs in a
// read-only jail: a server that lies about readOnlyHint cannot write the workspace through
// it, and it reads the workspace but not its .summit/, nor reaches the host's loopback
// without network: true. On the old code it had the terminal guard only: the lying write
// landed in the workspace, unrecorded.
func TestMCPSharedServerJailed(t *testing.T) {
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: nothing confines writes")
	}
	bin := mcpTestServer(t)
	h := newHarness(t)
	h.approve = ApproveAll
	os.MkdirAll(filepath.Join(h.ws, ".summit"), 0o755)
	write(t, filepath.Join(h.ws, ".summit"), "probe.txt", "summit's own\n")
	write(t, h.ws, "plain.txt", "plain\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	agentFile(t, h.ws, "reader", "tools: Read, mcp__t__write, mcp__t__read, mcp__t__dial\n")
	lied := filepath.Join(h.ws, "lied.txt")
	tape := fmt.Sprintf(`tapes:
  - name: reader
    match: {agent: reader}
    steps:
      - tool: mcp__t__read
        args: {path: %q}
      - tool: mcp__t__write
        args: {path: %q, text: "a read-only tool wrote this\n"}
      - tool: mcp__t__read
        args: {path: %q}
      - tool: mcp__t__dial
        args: {address: %q}
      - capsule: {summary: "probed the shared jail", confidence: 0.9}
`, filepath.Join(h.ws, "plain.txt"), lied, filepath.Join(h.ws, ".summit", "probe.txt"), l.Addr().String())
	o, _ := mcpSession(t, h, map[string]provider.MCPServer{"t": {Command: bin, Env: map[string]string{"MCP_TEST_PROBE": "1", "MCP_TEST_LIE": "1"}}}, tape,
		"/delegate probe the shared jail --agent-type reader\n/wait sa-1\n")
	checkSeq(t, o.events)
	if iso := o.find(session.TypeSubagentIsolated, "sa-1"); len(iso) != 0 {
		t.Fatalf("a read-only grant was isolated: %+v", iso)
	}
	var results []session.TranscriptEvent
	for _, te := range o.transcript("sa-1", "") {
		if te.EventType == session.TranscriptToolResult && strings.HasPrefix(te.Tool, "mcp__t__") {
			results = append(results, te)
		}
	}
	if len(results) != 4 {
		t.Fatalf("results %+v", results)
	}
	if results[0].IsError || results[0].Result != "read: plain\n" {
		t.Errorf("reading the workspace (allowed): %+v", results[0])
	}
	for i, what := range []string{"wrote the workspace", "read .summit/", "reached the host's loopback"} {
		if r := results[i+1]; !r.IsError {
			t.Errorf("the shared server %s: %+v", what, r)
		}
	}
	if _, err := os.Stat(lied); err == nil {
		t.Error("lied.txt exists in the workspace")
	}
}

// Without Landlock a subagent's MCP servers cannot be kept to their files: its transcript says
// so (SUMMIT_SIMULATE_NO_LANDLOCK simulates such a kernel); on the old code nothing did.
func TestMCPServerUnconfinedSaysSo(t *testing.T) {
	t.Setenv("SUMMIT_SIMULATE_NO_LANDLOCK", "1")
	bin := mcpTestServer(t)
	h := newHarness(t)
	h.approve = ApproveAll
	agentFile(t, h.ws, "echoer", "tools: Read, mcp__t__echo\n")
	o, _ := mcpSession(t, h, map[string]provider.MCPServer{"t": {Command: bin}},
		fmt.Sprintf(echoTape, "mcp__t__echo", `{text: "hi"}`), "/delegate echo --agent-type echoer\n/wait sa-1\n")
	checkSeq(t, o.events)
	said := false
	for _, te := range o.transcript("sa-1", "") {
		said = said || te.EventType == session.TranscriptMessage && strings.Contains(te.Text, "MCP servers are not confined") && strings.Contains(te.Text, "no Landlock")
	}
	if !said {
		t.Errorf("the transcript does not say the MCP servers run unconfined: %+v", o.transcript("sa-1", ""))
	}
	if _, result := toolEvents(t, o, "mcp__t__echo"); result.IsError || result.Result != "echo: hi" {
		t.Errorf("echo without Landlock: %+v", result)
	}
}
