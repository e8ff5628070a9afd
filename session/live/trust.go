package live

import (
	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// trustNote is why a trust given during a session applies from the next one: every running
// subagent reads the session's catalogue, routes, MCP servers, hooks and tool options without
// a lock, and they were built from the gated config at the start. Swapping them mid-session
// would race with those readers and could leave a subagent with half the workspace's config
// (its hooks on, its hosts not), so the session keeps what it started with.
const trustNote = "restart summit in this workspace to enable them; this session keeps the configuration it started with"

// shadowing is SubagentSpawned.agent_shadows for def: which file runs when a catalogue agent
// replaced another of its name ("" for every other definition).
func (x *Orchestrator) shadowing(def *agents.Definition) string {
	if cd, ok := x.o.Catalogue.Get(def.Name); !ok || cd != def {
		return ""
	}
	return x.o.Catalogue.Shadowing(def.Name, x.o.Workspace)
}

// trustWorkspace is /trust: the workbench's trust inbox item answered. Options.TrustWorkspace
// records the trust (the caller's store, session/trust); the session records WorkspaceTrusted.
func (x *Orchestrator) trustWorkspace(line string, c commands.Trust) (Reply, error) {
	x.mu.Lock()
	pending, info := x.state.TrustPending(), x.state.Info
	x.mu.Unlock()
	switch {
	case !pending && info.WorkspaceTrust == "untrusted":
		return x.rejectf(line, c, "the workspace was trusted earlier in this session")
	case !pending:
		return x.rejectf(line, c, "nothing to trust: the workspace is %s", orDefault(info.WorkspaceTrust, "not assessed"))
	case x.o.TrustWorkspace == nil:
		return x.rejectf(line, c, "this run cannot record trust: pass --trust-workspace, or run summit trust %s", session.Sanitize(info.Workspace))
	}
	if err := x.o.TrustWorkspace(); err != nil {
		return x.rejectf(line, c, "%s", session.Sanitize(err.Error()))
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	if _, err := x.emit("", session.WorkspaceTrusted{Workspace: info.Workspace, Items: info.TrustItems, Note: trustNote}); err != nil {
		return Reply{}, err
	}
	return Reply{Output: "workspace trusted: " + trustNote}, nil
}
