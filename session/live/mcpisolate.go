package live

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/mcp"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
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
	if len(ts.Names()) > 0 && !x.o.NoIsolation && !tools.ConfinementAvailable() {
		// Never silently: the jail's file rules need Landlock (its namespaces still hold).
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
			Text: "its MCP servers are not confined to their files: this system has no Landlock, so they can write wherever you can"})
	}
	return ts, release, "", nil
}

// sharedMCPJail is the read-only jail of the session's own MCP server instances (the shared
// ones: read-only grants, and every server's tool list), given with mcp.Manager.Confine("")
// unless the session runs without isolation (there the shared instance is what a subagent's
// writing tools call, in the workspace, as the user chose). rw[0] is the server's own temp
// dir (mcp removes it when the server exits): the jail's root, the one place it may write,
// with its private caches inside it (a private npm cache, so npx works). It reads everything
// but .summit/ and summit's own directories, cannot see or signal summit, and has the network
// only with network: true in its config. A server that says readOnlyHint and writes anyway
// fails here instead of changing the workspace.
func (x *Orchestrator) sharedMCPJail(rw, env []string, network bool, name string, args ...string) (*exec.Cmd, error) {
	if len(rw) == 0 {
		return nil, errors.New("no temp dir of its own for its jail")
	}
	opts := x.o.Tools
	opts.ConfineWrites = true
	opts.Network = false
	opts.Hidden = append(summitDirs(), filepath.Join(x.sandbox.Root(), tools.PrivateDir))
	opts.Hidden = append(opts.Hidden, x.otherSummitPaths(x.sandbox.Root())...)
	opts.PrivateDir = filepath.Join(rw[0], "private")
	sb, err := tools.New(rw[0], opts)
	if err != nil {
		return nil, err
	}
	return sb.ConfinedCommandNet(rw[1:], env, network, name, args...)
}
