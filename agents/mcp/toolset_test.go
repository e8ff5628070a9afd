package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/runtime"
)

var _ runtime.MCPTools = (*Toolset)(nil)

func TestParseEntry(t *testing.T) {
	known := []string{"gh", "a__b", "context7"}
	for _, c := range []struct {
		raw, server, pattern string
		ok                   bool
	}{
		{"mcp__gh__search", "gh", "search", true},
		{"mcp__gh__*", "gh", "*", true},
		{"mcp__gh", "gh", "*", true},
		{"mcp__gh__get_*", "gh", "get_*", true},
		{"mcp__a__b__tool", "a__b", "tool", true}, // the longest known server wins
		{"mcp__x__y__z", "x", "y__z", true},       // unknown: the first __ splits
		{"context7/*", "context7", "*", true},
		{"context7/resolve", "context7", "resolve", true},
		{"context7:resolve", "context7", "resolve", true},
		{"gh/", "gh", "*", true},
		{"read_file", "", "", false},
		{"/x", "", "x", false},
	} {
		e, ok := parseEntry(c.raw, known)
		if ok != c.ok || ok && (e.server != c.server || e.pattern != c.pattern) {
			t.Errorf("parseEntry(%q) = %+v %v, want %s %s %v", c.raw, e, ok, c.server, c.pattern, c.ok)
		}
	}
}

func def(tools []string, meta map[string]any) *agents.Definition {
	return &agents.Definition{Name: "worker", Tools: tools, Metadata: meta}
}

var sessionTools = []string{agents.ToolReadFile, agents.ToolGlob, agents.ToolShell}

// grant runs both halves of a delegation: Resolve, then Toolset.
func grant(t *testing.T, m *Manager, d *agents.Definition, r agents.Request) (agents.Policy, *Toolset, error) {
	t.Helper()
	if r.SessionTools == nil {
		r.SessionTools = sessionTools
	}
	p, err := Resolve(m, d, r)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	ts, err := m.Toolset(context.Background(), d, &p)
	return p, ts, err
}

func TestWildcardsExpand(t *testing.T) {
	c := testServer(nil)
	m := newManager(t, map[string]provider.MCPServer{"t": c, "other": testServer(nil)}, Options{})
	all := []string{"mcp__t__add", "mcp__t__big", "mcp__t__echo", "mcp__t__fail", "mcp__t__image", "mcp__t__slow", "mcp__t__write"}
	for _, c := range []struct {
		name       string
		tools      []string
		disallowed []string
		flag       []string
		want       []string
		note       string
	}{
		{"exact", []string{"read_file", "mcp__t__echo"}, nil, nil, []string{"read_file", "mcp__t__echo"}, ""},
		{"star", []string{"mcp__t__*"}, nil, nil, all, ""},
		{"server alone", []string{"mcp__t"}, nil, nil, all, ""},
		{"slash", []string{"t/*", "read_file"}, nil, nil, append([]string{"read_file"}, all...), ""},
		{"slash one", []string{"t/add"}, nil, nil, []string{"mcp__t__add"}, ""},
		{"pattern", []string{"mcp__t__e*", "mcp__t__s*"}, nil, nil, []string{"mcp__t__echo", "mcp__t__slow"}, ""},
		{"duplicates", []string{"mcp__t__echo", "mcp__t__*"}, nil, nil, all[:1], ""}, // echo first, then the rest
		{"disallowed", []string{"mcp__t__*"}, []string{"mcp__t__fail", "t/s*", "t/w*"}, nil,
			[]string{"mcp__t__add", "mcp__t__big", "mcp__t__echo", "mcp__t__image"}, "mcp__t__fail removed: disallowedTools"},
		{"no match", []string{"read_file", "mcp__t__nosuch"}, nil, nil, []string{"read_file"},
			"mcp__t__nosuch matches none of the tools MCP server t offers (it offers add, big, echo, fail, image, slow, write)"},
		{"unconfigured", []string{"read_file", "mcp__gh__search", "context7/*"}, nil, nil, []string{"read_file"},
			"mcp__gh__search removed: MCP server gh is not configured (configured: other, t)"},
		{"--tools", []string{"read_file", "mcp__t__echo", "mcp__t__add"}, nil, []string{"mcp__t__echo"}, []string{"mcp__t__echo"}, ""},
		{"two servers", []string{"mcp__other__add", "mcp__t__add"}, nil, nil, []string{"mcp__other__add", "mcp__t__add"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := def(c.tools, nil)
			d.DisallowedTools = c.disallowed
			p, ts, err := grant(t, m, d, agents.Request{Tools: c.flag})
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if c.name == "duplicates" {
				want = []string{"mcp__t__echo", "mcp__t__add", "mcp__t__big", "mcp__t__fail", "mcp__t__image", "mcp__t__slow", "mcp__t__write"}
			}
			if !slices.Equal(p.Tools, want) {
				t.Errorf("tools %v, want %v", p.Tools, want)
			}
			var mcpWant []string
			for _, w := range want {
				if strings.HasPrefix(w, "mcp__") {
					mcpWant = append(mcpWant, w)
				}
			}
			if !slices.Equal(ts.Names(), mcpWant) {
				t.Errorf("toolset %v, want %v", ts.Names(), mcpWant)
			}
			if c.note != "" && !slices.Contains(ts.Notes(), c.note) {
				t.Errorf("notes %q lack %q", ts.Notes(), c.note)
			}
			if c.note == "" && len(ts.Notes()) > 0 {
				t.Errorf("notes %q", ts.Notes())
			}
			for _, tool := range ts.Names() {
				if p.Decide(tool).Verdict != agents.Ask {
					t.Errorf("%s: %+v", tool, p.Decide(tool))
				}
			}
		})
	}
	// An agent left with MCP tools of unconfigured servers only is refused at delegation, and
	// the reason names the server.
	p, err := Resolve(m, def([]string{"mcp__gh__search"}, nil), agents.Request{SessionTools: sessionTools})
	if err != nil || len(p.Tools) != 0 || !strings.Contains(strings.Join(p.Notes, ";"), "MCP server gh is not configured") {
		t.Errorf("policy %+v %v", p, err)
	}
	// Without a manager every MCP entry is dropped with a note.
	p, err = Resolve(nil, def([]string{"read_file", "mcp__t__echo"}, nil), agents.Request{SessionTools: sessionTools})
	if err != nil || !slices.Equal(p.Tools, []string{"read_file"}) || !strings.Contains(p.Notes[0], "(no MCP servers are)") {
		t.Errorf("no manager: %+v %v", p, err)
	}
	var none *Manager
	ts, err := none.Toolset(context.Background(), def([]string{"read_file"}, nil), &p)
	if err != nil || len(ts.Specs()) != 0 || ts.Has("mcp__t__echo") {
		t.Errorf("nil manager toolset %+v %v", ts, err)
	}
}

// The permission policy: MCP tools ask like the shell; the config's allow list lets them run
// in every mode, the agent's allowance everywhere but plan; bypassPermissions allows all.
func TestPolicyAllowLists(t *testing.T) {
	c := testServer(nil)
	c.Allow = []string{"echo", "a*"}
	m := newManager(t, map[string]provider.MCPServer{"t": c}, Options{})
	d := def([]string{"mcp__t__*"}, map[string]any{"permission": map[string]any{"mcp__t__big": "allow", "bash": "deny"},
		"permissions": map[string]any{"allow": []any{"t/image"}}})
	p, ts, err := grant(t, m, d, agents.Request{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool            string
		plan, acceptAll bool
	}{
		{"mcp__t__echo", true, true}, {"mcp__t__add", true, true}, // config
		{"mcp__t__big", false, true}, {"mcp__t__image", false, true}, // agent
		{"mcp__t__fail", false, false}, {"mcp__t__slow", false, false},
		{"mcp__t__nosuch", false, false},
	} {
		if got := ts.Allowed(c.tool, agents.ModePlan); got != c.plan {
			t.Errorf("%s in plan: allowed %v", c.tool, got)
		}
		if got := ts.Allowed(c.tool, agents.ModeAcceptEdits); got != c.acceptAll {
			t.Errorf("%s in acceptEdits: allowed %v", c.tool, got)
		}
	}
	if dec := p.Decide("mcp__t__fail"); dec.Verdict != agents.Ask {
		t.Errorf("fail: %+v", dec)
	}
	p.Mode = agents.ModeBypass
	if dec := p.Decide("mcp__t__fail"); dec.Verdict != agents.Allow {
		t.Errorf("fail in bypass: %+v", dec)
	}
	if dec := p.Decide("mcp__t__nosuch"); dec.Verdict != agents.Deny {
		t.Errorf("a tool outside the grant: %+v", dec)
	}
}

// An agent file's own mcpServers (Claude Code): a name refers to a configured server; an inline
// server that would start a command runs only when the config has the same server (an agent
// file may come with a cloned repository); an agent that restricts no tools gets all the tools
// of its servers.
func TestAgentServers(t *testing.T) {
	mine := provider.MCPServer{Type: "stdio", Command: serverBin, Allow: []string{"echo"}}
	src := "---\nname: worker\ndescription: d\nmcpServers:\n  - t\n  - mine:\n      type: stdio\n      command: " + serverBin +
		"\n      allow: [echo]\n  - missing\n  - broken: {url: x, command: y}\n---\nbody\n"
	d, probs := agents.Parse(filepath.Join(t.TempDir(), "worker.md"), []byte(src))
	for _, pr := range probs {
		if pr.Level == agents.LevelError {
			t.Fatalf("parse: %v", pr)
		}
	}
	// Not configured: the command is not run.
	m := newManager(t, map[string]provider.MCPServer{"t": testServer(nil)}, Options{})
	p, ts, err := grant(t, m, d, agents.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Tools, "mcp__t__echo") || slices.ContainsFunc(p.Tools, func(x string) bool { return strings.HasPrefix(x, "mcp__mine__") }) {
		t.Errorf("tools %v", p.Tools)
	}
	notes := strings.Join(ts.Notes(), "\n")
	for _, want := range []string{"mcpServers names missing, which is not configured (configured: t)", "mcpServers.broken ignored: give exactly one of command",
		"mcpServers.mine ignored: an agent file may not start a command (" + serverBin + "); add the server to mcp_servers in .summit/config.yaml to run it"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if r := ts.Call(context.Background(), "mcp__mine__echo", `{"text":"own"}`); !r.IsError {
		t.Errorf("an unconfigured inline server ran: %+v", r)
	}
	// The same server in the config: the agent's entry is the config's server.
	m = newManager(t, map[string]provider.MCPServer{"t": testServer(nil), "mine": mine}, Options{})
	p, ts, err = grant(t, m, d, agents.Request{})
	if err != nil || !slices.Contains(p.Tools, "mcp__mine__slow") {
		t.Fatalf("configured inline server: %v %v", p.Tools, err)
	}
	if r := ts.Call(context.Background(), "mcp__mine__echo", `{"text":"own"}`); r.Output != "echo: own" || r.IsError {
		t.Errorf("call %+v", r)
	}
	if id := m.register("mine", mine); id != "mine" {
		t.Errorf("the config's own definition got id %s", id)
	}
	// A map form, with a tools list that names one of the server's tools.
	d = def([]string{"mcp__mine__add"}, map[string]any{"mcpServers": map[string]any{"mine": map[string]any{"type": "stdio", "command": serverBin, "allow": []any{"echo"}}}})
	p, _, err = grant(t, m, d, agents.Request{})
	if err != nil || !slices.Equal(p.Tools, []string{"mcp__mine__add"}) {
		t.Errorf("map form: %v %v", p.Tools, err)
	}
}

// A server that cannot start fails the grant with its error; the policy is left alone.
func TestToolsetStartFailure(t *testing.T) {
	m := newManager(t, map[string]provider.MCPServer{"bad": testServer(map[string]string{"MCP_TEST_CRASH": "no such database"})}, Options{})
	d := def([]string{"read_file", "mcp__bad__*"}, nil)
	p, err := Resolve(m, d, agents.Request{SessionTools: sessionTools})
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(p.Tools)
	_, err = m.Toolset(context.Background(), d, &p)
	if err == nil || !strings.Contains(err.Error(), "MCP server bad: could not start it") || !strings.Contains(err.Error(), "no such database") {
		t.Errorf("error %v", err)
	}
	if !slices.Equal(p.Tools, before) {
		t.Errorf("tools changed to %v", p.Tools)
	}
}

// A grant with a tool that may write (no readOnlyHint) is reported by Writes; in a worktree
// its server runs for the subagent alone, with the worktree as its working directory and its
// one root, so what it writes lands there and never in the workspace; Release stops it. A
// read-only grant, or one whose writing tool is disallowed, writes nothing and stays shared.
func TestWritingServerRunsInTheWorktree(t *testing.T) {
	ws, wt := t.TempDir(), t.TempDir()
	m := newManager(t, map[string]provider.MCPServer{"t": testServer(nil)}, Options{Dir: ws})
	ctx := context.Background()
	resolve := func(d *agents.Definition) agents.Policy {
		p, err := Resolve(m, d, agents.Request{SessionTools: sessionTools})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	readOnly := def([]string{"mcp__t__echo", "mcp__t__add"}, nil)
	noWrite := def([]string{"mcp__t__*"}, nil)
	noWrite.DisallowedTools = []string{"mcp__t__write"}
	for _, d := range []*agents.Definition{readOnly, noWrite} {
		if w, err := m.Writes(ctx, d, resolve(d)); err != nil || len(w) != 0 {
			t.Errorf("%v less %v: writes %v %v", d.Tools, d.DisallowedTools, w, err)
		}
	}
	writer := def([]string{"mcp__t__echo", "mcp__t__write"}, nil)
	p := resolve(writer)
	w, err := m.Writes(ctx, writer, p)
	if err != nil || !slices.Equal(w, []string{"mcp__t__write"}) {
		t.Fatalf("writes %v %v", w, err)
	}
	shared := m.PIDs()
	ts, err := m.ToolsetIn(ctx, writer, &p, wt)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.PIDs()) != len(shared)+1 {
		t.Errorf("no server of its own for the worktree: %v, then %v", shared, m.PIDs())
	}
	r := ts.Call(ctx, "mcp__t__write", `{"path": "out.txt", "text": "from the server\n"}`)
	real, _ := filepath.EvalSymlinks(wt)
	if r.IsError || !strings.Contains(r.Output, "(cwd "+real+", roots "+wt+")") {
		t.Errorf("write: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(wt, "out.txt")); err != nil || string(b) != "from the server\n" {
		t.Errorf("the worktree's out.txt: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err == nil {
		t.Error("the server wrote in the workspace")
	}
	m.Release(wt)
	if got := m.PIDs(); !slices.Equal(got, shared) {
		t.Errorf("after Release: servers %v, want %v", got, shared)
	}
	// The session's own instance still serves the read-only grant.
	rp := resolve(readOnly)
	ts, err = m.ToolsetIn(ctx, readOnly, &rp, wt)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.Call(ctx, "mcp__t__echo", `{"text": "hi"}`); r.Output != "echo: hi" || !slices.Equal(m.PIDs(), shared) {
		t.Errorf("echo %+v, servers %v", r, m.PIDs())
	}
}
