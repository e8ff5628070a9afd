package live

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// realGeminiMCPTape calls the MCP server's tools by the names Gemini CLI declares them to the
// model (mcp_<server>_<tool>): echo twice, then get-sum, then the capsule.
const realGeminiMCPTape = `
tapes:
  - name: gemini-mcp
    match: {agent: summit-main, task: "(?s)echo through the server"}
    steps:
      - tool: mcp_everything_echo
        args: {message: "hello from gemini"}
      - tool: mcp_everything_echo
        args: {message: "again"}
      - tool: mcp_everything_get-sum
        args: {a: 2, b: 3}
      - capsule: {summary: "echoed twice", confidence: 0.9}
`

// Gemini CLI 0.61.0 (real, against tapes serve) with the real MCP server-everything: its MCP
// calls, which it reports with kind other and a description as the title, are shown, recorded
// and asked as mcp__everything__echo and mcp__everything__get-sum (read from its toolCallId),
// and "allow for sa-1" given for echo covers echo only: the second echo is not asked, get-sum is.
func TestACPRealGeminiMCPToolNames(t *testing.T) {
	bin := realNPMAgent(t, realGeminiPkg, realGeminiVersion, realGeminiBin, true)
	index, _ := filepath.Abs("../../agents/mcp/testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(index); err != nil {
		msg := "needs @modelcontextprotocol/server-everything at " + index + " (see agents/mcp/everything_test.go)"
		if os.Getenv("SUMMIT_E2E") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	c := newRealCase(t)
	c.approve = ""
	srv, home, _ := startRealGemini(t, c, bin, realGeminiMCPTape)
	// startRealGemini wrote the agent; add the server and give it to the agent.
	b, err := os.ReadFile(filepath.Join(c.ws, ".summit", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["mcp_servers"] = map[string]any{"everything": map[string]any{"command": node, "args": []string{index, "stdio"}}}
	cfg["acp_agents"].(map[string]any)["gemini-real"].(map[string]any)["mcp_servers"] = []string{"everything"}
	b, _ = json.Marshal(cfg)
	write(t, filepath.Join(c.ws, ".summit"), "config.yaml", string(b))

	answer := func(x *Orchestrator, line string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			asked := false
			x.View(func(s *session.State) { asked = s.Subagent("sa-1") != nil && s.Subagent("sa-1").PendingRequest != "" })
			if asked {
				accept(t, x, line)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		x.View(func(s *session.State) {
			if sa := s.Subagent("sa-1"); sa != nil {
				for i := 0; i < sa.Transcript.Len(); i++ {
					t.Logf("sa-1 transcript: %+v %q", sa.Transcript.Item(i), sa.Transcript.Text(i))
				}
			}
		})
		t.Errorf("no permission request to answer with %s; served:\n%s", line, strings.Join(srv.log(), "\n"))
		_, _ = x.Submit(context.Background(), "/cancel sa-1")
	}
	o := c.live(func(x *Orchestrator) {
		answer(x, "/approve pr-1 --scope subagent")
		answer(x, "/deny pr-2")
	}, "/delegate echo through the server --agent-type gemini-real")
	checkSeq(t, o.events)
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "echoed twice" {
		o.dumpSubagents(t)
		t.Fatalf("stop: %+v", st)
	}
	var asked []string
	for _, r := range o.find(session.TypePermissionRequested, "sa-1") {
		asked = append(asked, r.Data.(session.PermissionRequested).Tool)
	}
	if strings.Join(asked, " ") != "mcp__everything__echo mcp__everything__get-sum" {
		t.Errorf("asked about %v; want echo (then allowed for sa-1), then get-sum", asked)
	}
	var called []string
	for _, e := range o.transcript("sa-1", session.TranscriptToolCall) {
		called = append(called, e.Tool)
	}
	if strings.Join(called, " ") != "mcp__everything__echo mcp__everything__echo mcp__everything__get-sum" {
		t.Errorf("tool calls shown as %v", called)
	}
	results := o.transcript("sa-1", session.TranscriptToolResult)
	if len(results) != 3 || !strings.Contains(results[0].Result, "Echo: hello from gemini") || !strings.Contains(results[1].Result, "Echo: again") || !results[2].IsError {
		t.Errorf("tool results: %+v", results)
	}
	if d := o.find(session.TypePermissionDenied, "sa-1"); len(d) != 1 {
		t.Errorf("denials: %+v", d)
	}
	_ = home
	for _, l := range srv.log() {
		if !strings.Contains(l, "attempt") {
			t.Errorf("a request was refused: %s", l)
		}
	}
}
