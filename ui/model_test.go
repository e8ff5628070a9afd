package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// The subagent's pane title says which model runs it (↪ after a switch to a fallback) and
// what it cost; the tree row shows the cost.
func TestModelAndCostShown(t *testing.T) {
	m, _ := newModel(t, 160, 48, &fakeBackend{})
	at := t0
	seq := uint64(0)
	ev := func(sub string, d session.Data) session.Event {
		seq++
		at = at.Add(time.Second)
		e := session.New(sub, d)
		e.Seq, e.TS, e.SessionID = seq, at, "s-ui"
		return e
	}
	cost := 0.006
	m.Update(EventsMsg{
		ev("", session.SessionStarted{Schema: 1, Workspace: "/w", PermissionMode: "acceptEdits", Provider: "local"}),
		ev("sa-1", session.SubagentSpawned{AgentType: "coder", AgentName: "coder", TaskDescription: "t", TimeoutS: 60}),
		ev("sa-1", session.SubagentActive{InitialState: "running"}),
		ev("sa-1", session.ModelRouted{Requested: "gemini-3-pro-preview", Provider: "local", Model: "big", Why: "tier mapping"}),
		ev("sa-1", session.ModelSwitched{FromProvider: "local", FromModel: "big", ToProvider: "local", ToModel: "small", Reason: "404"}),
		ev("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}, Tokens: session.Tokens{Input: 1000, Output: 500}, CostUSD: &cost}),
	})
	press(m, "tab")
	m.sel = "sa-1"
	view := m.View().Content
	for _, want := range []string{"↪ local/small", "$0.0060"} {
		if !strings.Contains(view, want) {
			t.Errorf("the view lacks %q:\n%s", want, view)
		}
	}
	if strings.Count(view, "$0.0060") < 2 {
		t.Errorf("the cost is not on the tree row and the pane title:\n%s", view)
	}
}

// An external agent's current plan step shows on its tree row while it runs.
func TestPlanStepShown(t *testing.T) {
	m, _ := newModel(t, 160, 48, &fakeBackend{})
	at := t0
	seq := uint64(0)
	ev := func(sub string, d session.Data) session.Event {
		seq++
		at = at.Add(time.Second)
		e := session.New(sub, d)
		e.Seq, e.TS, e.SessionID = seq, at, "s-ui"
		return e
	}
	m.Update(EventsMsg{
		ev("", session.SessionStarted{Schema: 1, Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script"}),
		ev("sa-1", session.SubagentSpawned{AgentType: "gemini-cli", AgentName: "gemini-cli", TaskDescription: "t", TimeoutS: 60}),
		ev("sa-1", session.SubagentActive{InitialState: "running"}),
		ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Tool: session.PlanTool, Text: "plan", Args: map[string]any{"step": "write the tests"}}),
	})
	if sa := m.st.Subagent("sa-1"); sa.PlanStep != "write the tests" {
		t.Fatalf("plan step %q", sa.PlanStep)
	}
	if view := m.View().Content; !strings.Contains(view, "▸ write the tests") {
		t.Errorf("the tree lacks the plan step:\n%s", view)
	}
}

// An external agent's own subagents are nested under the subagent it runs as, at both
// sizes: a running child spins, an idle one says so, a disconnected one says its outcome is
// unknown (not a failure).
func TestGoldenChildren(t *testing.T) {
	for _, sz := range sizes {
		m, c := newModel(t, sz[0], sz[1], &fakeBackend{})
		at := t0
		seq := uint64(0)
		ev := func(sub string, d session.Data) session.Event {
			seq++
			at = at.Add(time.Second)
			e := session.New(sub, d)
			e.Seq, e.TS, e.SessionID = seq, at, "s-ui"
			return e
		}
		child := func(id, parent, name string) []session.Event {
			return []session.Event{
				ev(id, session.SubagentSpawned{AgentType: "claude-code/" + name, AgentName: name, TaskDescription: name, TimeoutS: 300,
					ParentSubagentID: parent, AgentSessionID: "agent-" + id}),
				ev(id, session.SubagentActive{InitialState: "running"}),
			}
		}
		evs := []session.Event{
			ev("", session.SessionStarted{Schema: 1, Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script"}),
			ev("sa-1", session.SubagentSpawned{AgentType: "claude-code", AgentName: "claude-code", TaskDescription: "t", TimeoutS: 300}),
			ev("sa-1", session.SubagentActive{InitialState: "running"}),
			ev("sa-2", session.SubagentSpawned{AgentType: "coder", AgentName: "coder", TaskDescription: "u", TimeoutS: 60}),
		}
		evs = append(evs, child("sa-3", "sa-1", "explorer")...)
		evs = append(evs, child("sa-4", "sa-3", "deep")...)
		evs = append(evs, ev("sa-4", session.TranscriptEvent{EventType: session.TranscriptMessage, Tool: session.AgentStateTool,
			Text: "the agent reports: idle (end_turn)", Args: map[string]any{"state": "idle"}}))
		evs = append(evs, child("sa-5", "sa-1", "reviewer")...)
		evs = append(evs, ev("sa-5", session.SubagentStop{Outcome: session.OutcomeDisconnected, ArtifactPaths: []string{}}))
		m.Update(EventsMsg(evs))
		c.now = m.st.LastTS
		out := golden(t, "children-"+size(sz), m)
		want := []string{"sa-1 claude-code", "  ◦ sa-4 claude-code", "◌ sa-5 claude-code/r", "sa-2 coder"}
		if sz[0] > 80 { // at 80 columns the tree pane has no room for the states
			want = append(want, "◦ sa-4 claude-code/deep", "idle", "◌ sa-5 claude-code/reviewer unknown")
		}
		for _, want := range want {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the tree lacks %q:\n%s", sz, want, out)
			}
		}
		// Tree order: each child right after its parent, the next delegation after them.
		if i, j, k := strings.Index(out, "sa-3"), strings.Index(out, "sa-4"), strings.Index(out, "sa-2"); !(i < j && j < k) {
			t.Errorf("%v: tree order:\n%s", sz, out)
		}
	}
}
