package live

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/mcp"
)

// MCP tools and isolation. An MCP tool may change files as much as write_file does: unless its
// server marks it readOnlyHint, a subagent granted it works in a worktree, like one granted
// write_file, and the tool's server runs for that subagent alone, in the worktree, offered it
// as its one MCP root (mcp.Manager.ToolsetIn). What the tool writes is then the subagent's
// recorded changes (/diff, /apply, /undo), never a change to the workspace. Which tools may
// write is known only from the servers' tool lists, so the decision is taken when the
// subagent starts, not at /delegate: the session's instance of each server lists its tools
// (and is never called by an isolated subagent). The server run for the subagent starts
// through the subagent's own jail (its Sandbox.ConfinedCommandNet, via mcp.Manager.Confine),
// as its shell and its ACP agent process do.

// mcpToolset isolates s when its MCP grant may write and returns its MCP tools, with release
// to call when the run ends (it stops the servers run for the worktree). failed is the
// SubagentError context of an error: "isolation" or "mcp server".
func (x *Orchestrator) mcpToolset(ctx context.Context, s *sub) (ts *mcp.Toolset, release func(), failed string, err error) {
	release = func() {}
	hasMCP := slices.ContainsFunc(s.policy.Tools, func(t string) bool { return agents.ClassOf(t) == agents.ClassMCP })
	if s.wt == nil && !x.o.NoIsolation && x.o.MCP != nil && hasMCP {
		w, err := x.o.MCP.Writes(ctx, s.def, s.policy)
		if err != nil {
			return nil, release, "mcp server", err
		}
		if len(w) > 0 {
			if err := x.isolate(s); err != nil {
				return nil, release, "isolation", fmt.Errorf("no isolated worktree (%s may change files: none marks itself readOnlyHint): %w",
					strings.Join(w, ", "), err)
			}
		}
	}
	dir := ""
	if s.wt != nil {
		dir = s.wt.Root()
		release = func() { x.o.MCP.Release(dir) }
		if s.sandbox != nil {
			// The servers run for it start in its jail: they write only its worktree, their
			// temp dir and its private caches, read no .summit/, cannot signal summit, and
			// have the network only with network: true in their config or web_fetch.
			x.o.MCP.Confine(dir, s.sandbox.ConfinedCommandNet)
		}
	}
	ts, err = x.o.MCP.ToolsetIn(ctx, s.def, &s.policy, dir)
	if err != nil {
		release()
		return nil, func() {}, "mcp server", err
	}
	return ts, release, "", nil
}
