package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
)

// Resolve is agents.Resolve for a delegation, with the agent's MCP entries kept: those of a
// known server (configured, or the agent's own mcpServers) join the session's tools, so the
// usual intersection keeps them; those naming a server that is not configured are dropped
// with a policy note. No server starts here; Toolset expands the entries when the subagent
// runs. m may be nil (no MCP servers).
func Resolve(m *Manager, def *agents.Definition, r agents.Request) (agents.Policy, error) {
	d, extra, notes := m.prepare(def)
	r.SessionTools = append(slices.Clone(r.SessionTools), extra...)
	p, err := agents.Resolve(d, r)
	if err != nil {
		return p, err
	}
	p.Notes = append(notes, p.Notes...)
	return p, nil
}

// prepare returns the definition to resolve (without the entries of unknown servers), the
// entries to add to the session's tools, and notes on what was dropped.
func (m *Manager) prepare(def *agents.Definition) (*agents.Definition, []string, []string) {
	inline, refs, notes := m.agentServers(def)
	if m == nil && len(inline) > 0 {
		notes = append(notes, "mcpServers ignored: MCP servers are not available in this session")
		inline = nil
	}
	known := m.known(inline)
	var extra []string
	for _, r := range refs {
		if !slices.Contains(known, r) {
			notes = append(notes, fmt.Sprintf("mcpServers names %s, which is not configured%s", r, configuredList(m.Servers())))
		}
	}
	if def.Tools == nil {
		// An agent that restricts no tools gets all the tools of the servers it brings.
		var servers []string
		for _, name := range append(sortedKeys(inline), refs...) {
			if slices.Contains(known, name) && !slices.Contains(servers, name) {
				servers = append(servers, name)
				extra = append(extra, prefix+name+"__*")
			}
		}
		return def, extra, notes
	}
	d := def
	for _, t := range def.Tools {
		if agents.ClassOf(t) != agents.ClassMCP {
			continue
		}
		e, _ := parseEntry(t, known)
		if slices.Contains(known, e.server) {
			extra = append(extra, t)
			continue
		}
		if d == def {
			d = def.Clone()
		}
		d.Tools = slices.DeleteFunc(d.Tools, func(x string) bool { return x == t })
		notes = append(notes, fmt.Sprintf("%s removed: MCP server %s is not configured%s", t, e.server, configuredList(m.Servers())))
	}
	return d, extra, notes
}

// agentServers is the package's agentServers, less the inline servers that would start a
// command the user never configured: an agent file can come with a cloned repository, and
// delegating to it must not run what it names. Such a server runs only when the same one is
// in the config (mcp_servers); a url server needs no command and stays.
func (m *Manager) agentServers(def *agents.Definition) (map[string]provider.MCPServer, []string, []string) {
	inline, refs, notes := agentServers(def)
	for _, name := range sortedKeys(inline) {
		c := inline[name]
		if c.Command == "" {
			continue
		}
		if m != nil {
			if cc, ok := m.configured(name); ok && sameServer(cc, c) {
				continue
			}
		}
		delete(inline, name)
		notes = append(notes, fmt.Sprintf("mcpServers.%s ignored: an agent file may not start a command (%s); add the server to mcp_servers in .summit/config.yaml to run it", name, oneLine(c.Command)))
	}
	return inline, refs, notes
}

// known lists the server names an agent may use: the config's and its own.
func (m *Manager) known(inline map[string]provider.MCPServer) []string {
	out := m.Servers()
	for name := range inline {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// Toolset is the MCP part of one subagent's grant: the tools it may call by their qualified
// names. It is what the runtime offers the model and routes calls to (runtime.MCPTools). The
// zero Toolset (and a nil one) has no tools.
type Toolset struct {
	m     *Manager
	tools []granted
	notes []string
}

type granted struct {
	id         string // the Manager's server id
	tool       Tool
	allowUser  bool // the config's allow list names it: no asking, in every mode
	allowAgent bool // the agent lets it run without asking (not in plan mode)
}

// Toolset starts the servers p's MCP entries name (each once per session) and expands the
// entries to the tools the servers offer, in p.Tools in their place; disallowedTools patterns
// apply. A server that cannot start is an error naming it and the end of its stderr; p is then
// left as it was. Call it when the subagent starts, with the definition given to Resolve.
func (m *Manager) Toolset(ctx context.Context, def *agents.Definition, p *agents.Policy) (*Toolset, error) {
	return m.ToolsetIn(ctx, def, p, "")
}

// Writes lists the tools of p's grant that may change files: every one whose server does not
// mark it readOnlyHint. A subagent granted any works in a worktree, and ToolsetIn runs their
// servers there. It starts the servers (the session's instances) to read their tool lists;
// p is not changed.
func (m *Manager) Writes(ctx context.Context, def *agents.Definition, p agents.Policy) ([]string, error) {
	p.Tools = slices.Clone(p.Tools)
	ts, err := m.Toolset(ctx, def, &p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range ts.tools {
		if !g.tool.ReadOnly {
			out = append(out, g.tool.Qualified)
		}
	}
	return out, nil
}

// ToolsetIn is Toolset for a subagent that works in the worktree dir ("": the workspace): a
// server that grants it a tool that may write (not readOnlyHint) runs for it alone, in dir, with
// dir its MCP root (Manager.At; Release(dir) stops it when the subagent has stopped). Its
// writes are then the worktree's changes, never the workspace's. Read-only servers stay shared.
func (m *Manager) ToolsetIn(ctx context.Context, def *agents.Definition, p *agents.Policy, dir string) (*Toolset, error) {
	_, _, notes := m.prepare(def)
	ts := &Toolset{m: m, notes: notes}
	inline, _, _ := m.agentServers(def)
	if m == nil {
		inline = nil
	}
	known := m.known(inline)
	agentAllow := agentAllows(def)
	var kept []string
	type group struct {
		id, name string
		entries  []entry
	}
	var groups []*group
	for _, t := range p.Tools {
		if agents.ClassOf(t) != agents.ClassMCP {
			kept = append(kept, t)
			continue
		}
		e, ok := parseEntry(t, known)
		if !ok || !slices.Contains(known, e.server) {
			ts.notes = append(ts.notes, fmt.Sprintf("%s removed: no MCP server %s", t, e.server))
			continue
		}
		id := e.server
		if c, ok := inline[e.server]; ok {
			id = m.register(e.server, c)
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.id == id })
		if i < 0 {
			groups = append(groups, &group{id: id, name: e.server})
			i = len(groups) - 1
		}
		groups[i].entries = append(groups[i].entries, e)
	}
	var denied []entry
	for _, t := range def.DisallowedTools {
		if e, ok := parseEntry(t, known); ok && agents.ClassOf(t) == agents.ClassMCP {
			denied = append(denied, e)
		}
	}
	var added []string
	for _, g := range groups {
		offered, err := m.Tools(ctx, g.id)
		if err != nil {
			return nil, err
		}
		cfg, _ := m.configured(g.name)
		userServer := g.id == g.name // the config's server, wherever it runs
		if dir != "" && slices.ContainsFunc(offered, func(t Tool) bool {
			return !t.ReadOnly && slices.ContainsFunc(g.entries, func(e entry) bool { return e.matches(g.name, t.Name) }) &&
				!slices.ContainsFunc(denied, func(d entry) bool { return d.matches(g.name, t.Name) })
		}) {
			if g.id, err = m.At(g.id, dir); err == nil {
				offered, err = m.Tools(ctx, g.id)
			}
			if err != nil {
				return nil, err
			}
		}
		for _, e := range g.entries {
			n := 0
			for _, t := range offered {
				if !e.matches(g.name, t.Name) {
					continue
				}
				n++
				q := Qualify(g.name, t.Name)
				switch {
				case slices.Contains(added, q):
				case !modelName().MatchString(q):
					ts.notes = append(ts.notes, fmt.Sprintf("%s left out: model APIs take tool names of at most 64 letters, digits, _ and -", q))
				case slices.ContainsFunc(denied, func(d entry) bool { return d.matches(g.name, t.Name) }):
					ts.notes = append(ts.notes, q+" removed: disallowedTools")
				default:
					added = append(added, q)
					t.Server, t.Qualified = g.name, q
					gr := granted{id: g.id, tool: t, allowUser: userServer && matchAny(cfg.Allow, t.Name),
						allowAgent: matchAny(agentAllow, q) || slices.ContainsFunc(agentAllow, func(a string) bool {
							ae, ok := parseEntry(a, known)
							return ok && ae.matches(g.name, t.Name)
						})}
					if c, ok := inline[g.name]; ok && !userServer && matchAny(c.Allow, t.Name) {
						gr.allowAgent = true
					}
					ts.tools = append(ts.tools, gr)
				}
			}
			if n == 0 {
				ts.notes = append(ts.notes, fmt.Sprintf("%s matches none of the tools MCP server %s offers (%s)", e.raw, g.name, toolNames(offered)))
			}
		}
	}
	p.Tools = append(kept, added...)
	return ts, nil
}

func toolNames(ts []Tool) string {
	if len(ts) == 0 {
		return "it offers none"
	}
	var names []string
	for _, t := range ts {
		names = append(names, t.Name)
	}
	return "it offers " + strings.Join(names, ", ")
}

func (ts *Toolset) find(name string) (granted, bool) {
	if ts == nil {
		return granted{}, false
	}
	for _, g := range ts.tools {
		if g.tool.Qualified == name {
			return g, true
		}
	}
	return granted{}, false
}

// Names lists the qualified names of the tools, in grant order.
func (ts *Toolset) Names() []string {
	if ts == nil {
		return nil
	}
	var out []string
	for _, g := range ts.tools {
		out = append(out, g.tool.Qualified)
	}
	return out
}

// Specs describes the tools to the model, with the servers' input schemas.
func (ts *Toolset) Specs() []provider.ToolSpec {
	if ts == nil {
		return nil
	}
	var out []provider.ToolSpec
	for _, g := range ts.tools {
		desc := g.tool.Description
		if strings.TrimSpace(desc) == "" {
			desc = fmt.Sprintf("Tool %s of the MCP server %s.", g.tool.Name, g.tool.Server)
		}
		out = append(out, provider.ToolSpec{Name: g.tool.Qualified, Description: desc, Parameters: cloneMap(g.tool.InputSchema)})
	}
	return out
}

// Has reports whether name is one of the tools.
func (ts *Toolset) Has(name string) bool {
	_, ok := ts.find(name)
	return ok
}

// Allowed reports whether the tool runs without asking in mode: the config's allow list
// counts in every mode, the agent's own allowance everywhere but plan.
func (ts *Toolset) Allowed(name string, mode agents.PermissionMode) bool {
	g, ok := ts.find(name)
	return ok && (g.allowUser || g.allowAgent && mode != agents.ModePlan)
}

// Call runs the tool with args as the model wrote them. Every failure is an error result
// naming the tool, so the model sees what happened.
func (ts *Toolset) Call(ctx context.Context, name, args string) tools.Result {
	g, ok := ts.find(name)
	if !ok {
		return tools.Result{Output: name + ": not an MCP tool of this subagent", IsError: true}
	}
	r, err := ts.m.Call(ctx, g.id, g.tool.Name, args)
	if err != nil {
		return tools.Result{Output: clip(name+": "+err.Error(), ts.m.o.MaxResult), IsError: true}
	}
	return tools.Result{Output: r.Output, IsError: r.IsError}
}

// Notes are what the grant dropped or could not match, and why (policy notes).
func (ts *Toolset) Notes() []string {
	if ts == nil {
		return nil
	}
	return ts.notes
}

// cloneMap copies a schema deep enough that a provider may change its copy.
func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			out[k] = cloneMap(v)
		case []any:
			out[k] = slices.Clone(v)
		default:
			out[k] = v
		}
	}
	return out
}
