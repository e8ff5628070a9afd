package live

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

// An agent's own subagents (ACP child sessions) are children in the tree: each update,
// permission request and file write of a child is recorded on the child, nesting is kept,
// messages between sessions are on both sides, a child the user cancels is cancelled by its
// agent, and a child still running when its parent's turn ends is disconnected, not failed.
func TestACPChildSessions(t *testing.T) {
	c := newACPCase(t, `
say Splitting the work.
sub - c1 explorer|finds the files
msg c1 - c1 list the Go files
as c1 think looking around
as c1 tool t1 read main.go
as c1 done t1 package main
as c1 say found main.go
sub c1 c2 deep|looks deeper
as c2 say nested child here
substate c2 idle end_turn
as c1 ask a1 execute all rm -rf build
substate c1 idle end_turn
msg - c1 - found main.go
sub - c3 worker|writes the file
as c3 write pkg/child.go package pkg
substate c3 idle error it broke
sub - c4 slow|takes long
as c4 say working slowly
waitcancel c4 5000
sub - c5 orphan|never finishes
as c5 say still going
say `+capsule+`
`, nil)
	c.approve = ""
	o := c.live(func(x *Orchestrator) {
		// The child's request names the child, and is answered in summit like any other.
		waitState(t, x, "the child's permission request", func(s *session.State) bool {
			sa := s.Subagent("sa-2")
			return sa != nil && sa.PendingRequest != ""
		})
		accept(t, x, "/approve "+pending(x, "sa-2"))
		// A child cannot take input; it is cancelled through its agent.
		waitState(t, x, "the slow child", func(s *session.State) bool { return s.Subagent("sa-5") != nil })
		if r, err := x.Submit(context.Background(), "/handoff sa-5"); err != nil || !r.Rejected || !strings.Contains(r.Error, "under sa-1") {
			t.Errorf("/handoff of a child: %+v %v", r, err)
		}
		accept(t, x, "/cancel sa-5")
	}, "/delegate build it --agent-type fake")

	c.logHas(t, "subagents capability=true", "ask a1: allow", "cancel child c4", "child c4 ended: cancelled")
	want := []struct {
		id, parent, name, agentType, outcome string
		depth                                int
	}{
		{"sa-1", "", "fake", "fake", session.OutcomeSuccess, 0},
		{"sa-2", "sa-1", "explorer", "fake/finds the files", session.OutcomeSuccess, 1},
		{"sa-3", "sa-2", "deep", "fake/looks deeper", session.OutcomeSuccess, 2},
		{"sa-4", "sa-1", "worker", "fake/writes the file", session.OutcomeFailure, 1},
		{"sa-5", "sa-1", "slow", "fake/takes long", session.OutcomeCancelled, 1},
		{"sa-6", "sa-1", "orphan", "fake/never finishes", session.OutcomeDisconnected, 1},
	}
	tree := o.state.Tree()
	if len(tree) != len(want) {
		t.Fatalf("tree has %d nodes, want %d", len(tree), len(want))
	}
	for i, w := range want {
		n := tree[i]
		if n.ID != w.id || n.Parent != w.parent || n.Depth != w.depth || n.AgentName != w.name || n.AgentType != w.agentType || n.Outcome != w.outcome {
			t.Errorf("node %d: %s parent %q depth %d name %q type %q outcome %q; want %+v", i, n.ID, n.Parent, n.Depth, n.AgentName, n.AgentType, n.Outcome, w)
		}
	}
	if sa := o.state.Subagent("sa-6"); sa.Status != session.StatusDisconnected || sa.AgentSessionID != "c5" {
		t.Errorf("the orphan: status %s, agent session %q", sa.Status, sa.AgentSessionID)
	}

	// Each child's transcript is its own: the parent's text never holds a child's.
	texts := func(id, kind string) string {
		var b strings.Builder
		for _, te := range o.transcript(id, kind) {
			b.WriteString(te.Text + "\n")
		}
		return b.String()
	}
	if got := texts("sa-2", session.TranscriptToken); got != "found main.go\n" {
		t.Errorf("sa-2 tokens %q", got)
	}
	if got := texts("sa-1", session.TranscriptToken); strings.Contains(got, "found main.go") || strings.Contains(got, "nested") {
		t.Errorf("a child's text reached the parent: %q", got)
	}
	if got := texts("sa-2", session.TranscriptMessage); !strings.Contains(got, "message from its parent:\nlist the Go files") ||
		!strings.Contains(got, "the agent reports: idle (end_turn)") {
		t.Errorf("sa-2 messages %q", got)
	}
	if got := texts("sa-1", session.TranscriptMessage); !strings.Contains(got, "message from sa-2:\nfound main.go") {
		t.Errorf("sa-1 messages %q", got)
	}
	if calls := o.transcript("sa-2", session.TranscriptToolCall); len(calls) != 2 || calls[0].Tool != "read_file" || calls[1].Tool != "run_shell_command" {
		t.Errorf("sa-2 calls %+v", calls)
	}
	// The request and the write were the child's; the write is the run's artifact.
	if reqs := o.find(session.TypePermissionRequested, "sa-2"); len(reqs) != 1 {
		t.Errorf("sa-2 requests: %d", len(reqs))
	}
	if reqs := o.find(session.TypePermissionRequested, "sa-1"); len(reqs) != 0 {
		t.Errorf("sa-1 requests: %d", len(reqs))
	}
	if errs := o.find(session.TypeSubagentError, "sa-4"); len(errs) != 1 || errs[0].Data.(session.SubagentError).Error != "it broke" {
		t.Errorf("sa-4 errors %+v", errs)
	}
	if st := o.stop(t, "sa-1"); !strings.Contains(strings.Join(st.ArtifactPaths, " "), "pkg/child.go") {
		t.Errorf("the run's artifacts %v", st.ArtifactPaths)
	}
	// Every child stopped before its parent.
	last := map[string]uint64{}
	for _, e := range o.events {
		if e.Type == session.TypeSubagentStop {
			last[e.SubagentID] = e.Seq
		}
	}
	for _, w := range want[1:] {
		if last[w.id] == 0 || last[w.id] > last[w.parent] {
			t.Errorf("%s stopped at %d, its parent %s at %d", w.id, last[w.id], w.parent, last[w.parent])
		}
	}
}

// An ACP agent's mcp_servers go to it in session/new as the config defines them, variables
// read from summit's environment and never recorded; a server the config does not define, or
// one over HTTP for an agent that takes only stdio, fails the subagent with a clear error.
func TestACPAgentGetsMCPServers(t *testing.T) {
	c := newACPCase(t, "say "+capsule+"\n", nil)
	t.Setenv("SUMMIT_TEST_MCP_TOKEN", "tok-not-secret-mcp-1234")
	cfg := func(servers ...string) {
		b, _ := json.Marshal(map[string]any{
			"mcp_servers": map[string]any{
				"everything": map[string]any{"command": "node", "args": []string{"${SUMMIT_TEST_MCP_DIR}/index.js", "stdio"},
					"env": map[string]string{"TOKEN": "$SUMMIT_TEST_MCP_TOKEN"}},
				"docs": map[string]any{"url": "http://127.0.0.1:9/mcp"},
			},
			"acp_agents": map[string]any{"fake": map[string]any{"command": c.bin, "mcp_servers": servers,
				"env":      map[string]string{"FAKE_ACP_SCRIPT": strings.TrimSuffix(c.log, "agent.log") + "script", "FAKE_ACP_LOG": c.log},
				"writable": []string{filepath.Dir(c.log) + "/"}}},
		})
		write(t, filepath.Join(c.ws, ".summit"), "config.yaml", string(b))
	}
	t.Setenv("SUMMIT_TEST_MCP_DIR", "/opt/mcp")
	cfg("everything")
	o := c.live(nil, "/delegate one --agent-type fake")
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess {
		t.Fatalf("stop: %+v; errors %+v", st, o.find(session.TypeSubagentError, "sa-1")[0].Data)
	}
	c.logHas(t, "mcp=1", "mcp stdio everything: node /opt/mcp/index.js stdio env TOKEN=tok-not-secret-mcp-1234")
	if msgs := o.transcript("sa-1", session.TranscriptMessage); !slices.ContainsFunc(msgs, func(e session.TranscriptEvent) bool {
		return e.Text == "the agent gets MCP servers: everything (stdio)"
	}) {
		t.Errorf("no message says which servers the agent got: %+v", msgs)
	}
	if rec, _ := os.ReadFile(c.rec); bytes.Contains(rec, []byte("tok-not-secret-mcp-1234")) {
		t.Error("the server's environment is in the recording")
	}

	for _, tc := range []struct{ server, want string }{
		{"nowhere", "names MCP server nowhere, which no mcp_servers of the config defines (servers: docs, everything)"},
		{"docs", "MCP server docs is an HTTP server, and the agent takes only stdio servers"},
	} {
		cfg(tc.server)
		o := c.live(nil, "/delegate one --agent-type fake")
		errs := o.find(session.TypeSubagentError, "sa-1")
		if len(errs) != 1 || !strings.Contains(errs[0].Data.(session.SubagentError).Error, tc.want) {
			t.Errorf("%s: errors %+v", tc.server, errs)
		}
	}
}
