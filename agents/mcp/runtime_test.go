package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

type wallClock struct{}

func (wallClock) Now() time.Time  { return time.Now() }
func (wallClock) Simulated() bool { return false }
func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recording wraps a provider and keeps the tool specs of each request.
type recording struct {
	provider.Provider
	mu    sync.Mutex
	specs [][]provider.ToolSpec
}

func (r *recording) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	r.mu.Lock()
	r.specs = append(r.specs, req.Tools)
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req)
}

const loopTape = `tapes:
  - name: mcp-user
    match: {agent: worker}
    steps:
      - tool: mcp__t__echo
        args: {text: "through the server"}
      - tool: mcp__t__add
        args: {a: 1, b: 2}
      - tool: mcp__t__fail
      - tool: mcp__t__big
        args: {bytes: 3000}
      - tool: mcp__t__slow
        args: {seconds: 30}
      - tool: mcp__t__image
      - capsule: {summary: "used the server", confidence: 0.9}
`

// The agent loop offers the MCP tools with the servers' schemas, asks for them like the shell
// unless the allow list says otherwise, routes calls to the server with the model's arguments,
// and records capped results, server errors and timeouts as tool results.
func TestRuntimeRoutesMCP(t *testing.T) {
	c := testServer(nil)
	c.Allow = []string{"echo"}
	c.TimeoutS = 1
	m := newManager(t, map[string]provider.MCPServer{"t": c}, Options{MaxResult: 2000})
	d := def([]string{"read_file", "mcp__t__*"}, nil)
	d.DisallowedTools = []string{"mcp__t__image", "mcp__t__write"}
	p, ts, err := grant(t, m, d, agents.Request{})
	if err != nil {
		t.Fatal(err)
	}
	tapes, err := provider.ParseTapes([]byte(loopTape), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prov := &recording{Provider: provider.NewScript(provider.ScriptConfig{Tapes: tapes})}
	sb, _ := tools.New(t.TempDir(), tools.Options{})
	var events []session.Data
	var asked []string
	res := runtime.Run(context.Background(), runtime.Config{
		Agent: d, AgentType: "worker", Policy: p, Provider: prov, Sandbox: sb, Task: "use the server",
		Clock: wallClock{}, MCP: ts,
		Emit: func(e session.Data) error { events = append(events, e); return nil },
		Approve: func(_ context.Context, tool string, args map[string]any, reason string) (bool, string, error) {
			asked = append(asked, tool+": "+reason)
			return tool != "mcp__t__add", "denied by the test", nil
		},
	})
	if res.Err != nil || res.Outcome != session.OutcomeSuccess {
		t.Fatalf("result %+v", res)
	}
	// The specs: the sandbox's tool, then the server's, with its schema.
	var names []string
	for _, s := range prov.specs[0] {
		names = append(names, s.Name)
		if s.Name == "mcp__t__add" {
			props, _ := s.Parameters["properties"].(map[string]any)
			if _, ok := props["a"]; !ok || s.Description != "Add two numbers." {
				t.Errorf("add's spec %+v", s)
			}
		}
	}
	if got := strings.Join(names, " "); got != "read_file mcp__t__add mcp__t__big mcp__t__echo mcp__t__fail mcp__t__slow" {
		t.Errorf("specs %s", got)
	}
	// Every MCP tool asked but echo (allow list).
	if got := strings.Join(asked, "\n"); got != "mcp__t__add: mcp__t__add asks each time in acceptEdits\n"+
		"mcp__t__fail: mcp__t__fail asks each time in acceptEdits\nmcp__t__big: mcp__t__big asks each time in acceptEdits\n"+
		"mcp__t__slow: mcp__t__slow asks each time in acceptEdits" {
		t.Errorf("asked:\n%s", got)
	}
	results := map[string]session.TranscriptEvent{}
	var calls []string
	for _, e := range events {
		if te, ok := e.(session.TranscriptEvent); ok {
			switch te.EventType {
			case session.TranscriptToolResult:
				results[te.Tool] = te
			case session.TranscriptToolCall:
				calls = append(calls, te.Tool)
				if te.Tool == "mcp__t__echo" && te.Args["text"] != "through the server" {
					t.Errorf("echo's args %v", te.Args)
				}
			}
		}
	}
	if len(calls) != 6 {
		t.Errorf("calls %v", calls)
	}
	check := func(tool, want string, isErr bool) {
		t.Helper()
		r := results[tool]
		if !strings.HasPrefix(r.Result, want) || r.IsError != isErr {
			t.Errorf("%s: %q (error %v), want %q… (error %v)", tool, r.Result, r.IsError, want, isErr)
		}
	}
	check("mcp__t__echo", "echo: through the server", false)
	check("mcp__t__add", "denied: denied by the test", true)
	check("mcp__t__fail", "the fail tool failed", true)
	check("mcp__t__big", strings.Repeat("x", 2000)+"\n[... truncated: 3000 bytes total, showing the first 2000]", false)
	check("mcp__t__slow", "mcp__t__slow: MCP server t did not answer within 1s (its timeout_s)", true)
	check("mcp__t__image", "denied: mcp__t__image is not among this agent's tools", true)
	if !strings.Contains(strings.Join(res.Capsule.PolicyNotes, "\n"), "mcp__t__image removed: disallowedTools") {
		t.Errorf("policy notes %q", res.Capsule.PolicyNotes)
	}
}
