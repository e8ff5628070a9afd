package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// untrustedStart is the SessionStarted of a session in an untrusted workspace (session/trust).
func untrustedStart() session.Event {
	e := session.New("", session.SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/src/cloned", PermissionMode: "acceptEdits",
		Provider: "script", WorkspaceTrust: "untrusted",
		UntrustedIgnored: []string{"mcp_servers.fs", "providers.evil", "hooks", "agent file .summit/agents/general.md"},
		TrustItems: []string{"mcp_servers.fs: runs ./bin/fs-server", "providers.evil: kind openai, base_url http://203.0.113.9/v1, key from $OPENAI_API_KEY",
			"hooks.SubagentStop: runs ./scripts/check.sh", "agent general (.summit/agents/general.md): kind: acp (runs ./bin/agent)"}})
	e.Seq, e.TS, e.SessionID = 1, t0, "s-trust"
	return e
}

// The trust inbox item lists exactly what trusting enables; no single key answers it; select
// and enter sends /trust; WorkspaceTrusted closes it and the status says so.
func TestTrustInboxItem(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		b := &fakeBackend{}
		m, c := newModel(t, sz[0], sz[1], b)
		m.Update(EventsMsg([]session.Event{untrustedStart()}))
		if m.ib == nil || m.ib.id != session.TrustItem {
			t.Fatalf("%v: the trust item did not open while idle: %+v", sz, m.ib)
		}
		c.now = c.now.Add(time.Second)
		out := golden(t, "trust-"+size(sz), m)
		for _, want := range []string{"workspace not trusted", "mcp_servers.fs: runs ./bin/fs-server", "from $OPENAI_API_KEY",
			"hooks.SubagentStop: runs ./scripts/check.sh", "agent general", "1 trust this workspace", "2 not now"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the trust item lacks %q", sz, want)
			}
		}
		// Single keys decide nothing.
		for _, k := range []string{"enter", "1", "down", "up"} {
			press(m, k)
			if len(b.lines) != 0 {
				t.Fatalf("%v: after %q sent %v", sz, k, b.lines)
			}
		}
		press(m, "enter")
		if len(b.lines) != 1 || b.lines[0] != "/trust" {
			t.Fatalf("%v: select and enter sent %v", sz, b.lines)
		}
		// The orchestrator records it; the item is gone and /status's line says it applies.
		tr := session.New("", session.WorkspaceTrusted{Workspace: "/src/cloned", Items: m.st.Info.TrustItems, Note: "restart summit in this workspace to enable them"})
		tr.Seq, tr.TS, tr.SessionID = 2, t0.Add(time.Second), "s-trust"
		m.Update(EventsMsg([]session.Event{tr}))
		if m.ib != nil || len(m.waiting()) != 0 || m.st.TrustPending() {
			t.Errorf("%v: the trust item is still waiting: %+v", sz, m.ib)
		}
		if got := render.TrustText(m.st); !strings.Contains(got, "workspace trusted: in effect from the next session") {
			t.Errorf("%v: trust text %q", sz, got)
		}
	}
}

// "not now" docks the item without sending anything; ctrl+o reopens it.
func TestTrustInboxNotNow(t *testing.T) {
	b := &fakeBackend{}
	m, c := newModel(t, 100, 30, b)
	m.Update(EventsMsg([]session.Event{untrustedStart()}))
	c.now = c.now.Add(time.Second)
	press(m, "2", "enter")
	if len(b.lines) != 0 || m.ib != nil {
		t.Fatalf("not now: sent %v, inbox %+v", b.lines, m.ib)
	}
	if s := ansi.Strip(m.Render()); !strings.Contains(s, "workspace not trusted: 4 items of its own config and agent files ignored") {
		t.Errorf("the dock does not name the trust item:\n%s", s)
	}
	// A subagent whose definition took another's name is marked with where it comes from.
	sp := session.New("sa-1", session.SubagentSpawned{AgentType: "general", AgentName: "general", ParentSessionID: "s-trust",
		PermissionMode: "acceptEdits", TaskDescription: "hi", TimeoutS: 300, AgentShadows: "workspace .summit/agents/general.md, shadows built-in"})
	sp.Seq, sp.TS, sp.SessionID = 2, t0, "s-trust"
	m.Update(EventsMsg([]session.Event{sp}))
	if s := ansi.Strip(m.Render()); !strings.Contains(s, "sa-1 general [workspace]") {
		t.Errorf("the tree does not mark the shadowing agent:\n%s", s)
	}
	if !strings.Contains(render.TrustText(m.st), "workspace not trusted, ignored: mcp_servers.fs, providers.evil, hooks, agent file .summit/agents/general.md") {
		t.Errorf("trust text %q", render.TrustText(m.st))
	}
}
