package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
)

// groupEvents: twelve subagents of three agent types, four of them on runners gpu-1 and
// gpu-2; sa-3 done, sa-5 failed, sa-7 and sa-11 wait for a permission decision.
func groupEvents() []session.Event {
	g := &evGen{}
	evs := []session.Event{g.ev("", session.SessionStarted{Schema: 1, ProgramVersion: "bench", Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script", AllowedTools: []string{}})}
	types := []string{"builder", "analyzer", "explore"}
	for i := 1; i <= 12; i++ {
		id := fmt.Sprintf("sa-%d", i)
		runner := ""
		if i%3 == 0 {
			runner = fmt.Sprintf("gpu-%d", 1+i%2)
		}
		evs = append(evs,
			g.ev(id, session.SubagentSpawned{AgentType: types[i%3], ParentSessionID: "s-bench", ParentSessionRef: "s-bench", PermissionMode: "acceptEdits",
				Tools: []string{}, TaskDescription: "task " + id, TimeoutS: 300, InheritContext: true, Runner: runner}),
			g.ev(id, session.SubagentActive{InitialState: "running"}))
	}
	return append(evs,
		g.ev("sa-3", session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}, DurationMS: 1000}),
		g.ev("sa-5", session.SubagentStop{Outcome: session.OutcomeFailure, ArtifactPaths: []string{}, DurationMS: 1000}),
		g.ev("sa-7", session.PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command", Args: map[string]any{"command": "make"}}),
		g.ev("sa-11", session.PermissionRequested{RequestID: "pr-2", Tool: "run_shell_command", Args: map[string]any{"command": "make"}}),
	)
}

// treeIDs are the ids and group headers the tree shows, in order, from its rows.
func treeIDs(m *Model) []string {
	var out []string
	for _, r := range m.rowsMemo() {
		out = append(out, r.id)
	}
	return out
}

// The tree groups by runner, agent type and state (g cycles), a group folds on enter, w jumps
// to the next subagent that waits for the user (unfolding its group), and the filter keeps
// the groups of the rows that match. Golden views of a grouped, a folded and a filtered tree.
func TestGoldenTreeGroups(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		m, _ := newModel(t, sz[0], sz[1], &fakeBackend{})
		m.dismissed = map[string]bool{"pr-1": true, "pr-2": true} // the inbox stays docked
		m.Update(EventsMsg(groupEvents()))
		m.ib = nil
		press(m, "tab")
		if m.focus != focusTree {
			t.Fatalf("tab from the empty input: focus %d, want the tree", m.focus)
		}
		press(m, "g")
		if m.groupBy != "runner" {
			t.Fatalf("g: grouped by %q, want runner", m.groupBy)
		}
		ids := strings.Join(treeIDs(m), " ")
		want := " group:local sa-1 sa-2 sa-4 sa-5 sa-7 sa-8 sa-10 sa-11 group:gpu-2 sa-3 sa-9 group:gpu-1 sa-6 sa-12"
		if ids != want {
			t.Errorf("by runner:\n got %q\nwant %q", ids, want)
		}
		golden(t, "tree-group-runner-"+size(sz), m)

		press(m, "g")
		if got := strings.Join(treeIDs(m), " "); got != " group:analyzer sa-1 sa-4 sa-7 sa-10 group:explore sa-2 sa-5 sa-8 sa-11 group:builder sa-3 sa-6 sa-9 sa-12" {
			t.Errorf("by type: %q", got)
		}
		press(m, "g")
		out := golden(t, "tree-group-state-"+size(sz), m)
		if got := strings.Join(treeIDs(m), " "); got != " group:waits for you sa-7 sa-11 group:running sa-1 sa-2 sa-4 sa-6 sa-8 sa-9 sa-10 sa-12 group:done sa-3 group:failed sa-5" {
			t.Errorf("by state: %q", got)
		}
		if !strings.Contains(out, "waits for you (2)") {
			t.Errorf("the state header does not count its rows:\n%s", out)
		}

		// Fold "running": down to its header, enter.
		for i := 0; i < 20 && m.sel != "group:running"; i++ {
			press(m, "down")
		}
		press(m, "enter")
		if m.focus != focusTree {
			t.Errorf("enter on a group header left the tree")
		}
		if got := strings.Join(treeIDs(m), " "); got != " group:waits for you sa-7 sa-11 group:running group:done sa-3 group:failed sa-5" {
			t.Errorf("folded: %q", got)
		}
		out = golden(t, "tree-group-folded-"+size(sz), m)
		if !strings.Contains(out, "▸ running (8)") {
			t.Errorf("a folded group shows ▸ and its count:\n%s", out)
		}

		// w: the next that waits, after the selection, wrapping around.
		press(m, "w")
		if m.sel != "sa-7" {
			t.Errorf("w from group:running: %q, want sa-7 (wrapped)", m.sel)
		}
		press(m, "w")
		if m.sel != "sa-11" {
			t.Errorf("w again: %q, want sa-11", m.sel)
		}

		// A filter: the groups with a match, and the matches only.
		typeText(m, "f")
		typeText(m, "explore")
		press(m, "enter")
		if got := strings.Join(treeIDs(m), " "); got != " group:waits for you sa-11 group:running group:failed sa-5" {
			t.Errorf("filtered: %q", got)
		}
		golden(t, "tree-group-filtered-"+size(sz), m)

		// w with the waiting row filtered out clears the filter; its folded group unfolds.
		press(m, "g", "g") // none, then runner
		if m.groupBy != "runner" {
			t.Fatalf("g g: %q", m.groupBy)
		}
		m.sel = "group:local"
		press(m, "enter") // fold local, which holds sa-7 and sa-11
		m.sel = "sa-11"
		press(m, "w")
		if m.sel != "sa-7" || m.filter != "" || m.collapsed["runner\x00local"] {
			t.Errorf("w to a folded, filtered row: sel %q filter %q folded %v", m.sel, m.filter, m.collapsed["runner\x00local"])
		}
		if !strings.Contains(strings.Join(treeIDs(m), " "), "group:local sa-1") {
			t.Errorf("the group w jumped into is not unfolded: %q", treeIDs(m))
		}
	}
}

// Grouping is view state: it changes no event, and w with nothing waiting says so.
func TestTreeGroupNothingWaits(t *testing.T) {
	m, _ := newModel(t, 80, 24, &fakeBackend{})
	g := &evGen{}
	m.Update(EventsMsg(g.start(3)))
	seq := m.st.LastSeq
	press(m, "tab", "g", "w")
	if m.notice != "nothing waits for you" {
		t.Errorf("w with nothing waiting: notice %q", m.notice)
	}
	if m.st.LastSeq != seq {
		t.Errorf("grouping folded an event: seq %d → %d", seq, m.st.LastSeq)
	}
}

// A remote subagent's row names its runner (SubagentSpawned.runner) after its agent type; a
// local one's does not, and the filter finds the subagents of a runner by its name.
func TestGoldenTreeRunnerRow(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		m, _ := newModel(t, sz[0], sz[1], &fakeBackend{})
		m.dismissed = map[string]bool{"pr-1": true, "pr-2": true}
		m.Update(EventsMsg(groupEvents()))
		m.ib = nil
		text := map[string]string{}
		for _, r := range m.rowsMemo() {
			text[r.id] = r.text
		}
		if text["sa-3"] != "sa-3 builder @gpu-2 ·edits" || text["sa-6"] != "sa-6 builder @gpu-1 ·edits" || text["sa-1"] != "sa-1 analyzer ·edits" {
			t.Errorf("rows: sa-1 %q, sa-3 %q, sa-6 %q", text["sa-1"], text["sa-3"], text["sa-6"])
		}
		out := golden(t, "tree-runner-"+size(sz), m)
		if !strings.Contains(out, "sa-9 builder @gpu-2") {
			t.Errorf("the view does not name sa-9's runner:\n%s", out)
		}
		press(m, "tab")
		typeText(m, "f")
		typeText(m, "@gpu-1")
		press(m, "enter")
		if got := strings.Join(treeIDs(m), " "); got != " sa-6 sa-12" {
			t.Errorf("filtered by @gpu-1: %q", got)
		}
	}
}

// /delegate … --on <tab> offers the live runners' names, asked of Options.Runners only for a
// line with --on.
func TestCompleteOnRunners(t *testing.T) {
	asked := 0
	m := New(Options{Backend: &fakeBackend{}, Dark: true, After: noTimer, Runners: func() []string {
		asked++
		return []string{"gpu-2", "gpu-1"}
	}})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	typeText(m, "/cancel ")
	press(m, "tab")
	if asked != 0 {
		t.Errorf("a line without --on asked for the runners %d times", asked)
	}
	m.in.SetValue("")
	typeText(m, `/delegate "t" --on `)
	press(m, "tab")
	if asked != 1 || len(m.cands) != 3 || m.in.Value() != `/delegate "t" --on gpu-1 ` {
		t.Fatalf("--on <tab>: asked %d, input %q, candidates %v", asked, m.in.Value(), m.cands)
	}
	if !strings.Contains(m.notice, "[gpu-1]  gpu-2  any") {
		t.Errorf("the notice line lists the candidates: %q", m.notice)
	}
	press(m, "tab")
	if m.in.Value() != `/delegate "t" --on gpu-2 ` {
		t.Errorf("tab cycles to gpu-2: %q", m.in.Value())
	}
}

// TestTreeFiguresFollowTheTick: a batch of tokens alone does not list the tree again (its
// figures move at the spinner's tick); the tick shows them, and any other event (a tool call,
// a stop) shows at once; the selected transcript streams with every batch.
func TestTreeFiguresFollowTheTick(t *testing.T) {
	g := &evGen{}
	m, _ := newModel(t, 120, 30, &fakeBackend{})
	m.Update(EventsMsg(g.start(3)))
	m.sel = "sa-2"
	tokens := func(id string, n int) string {
		var evs []session.Event
		for range n {
			evs = append(evs, g.ev(id, session.TranscriptEvent{EventType: session.TranscriptToken, Text: "word "}))
		}
		m.Update(EventsMsg(evs))
		return m.View().Content
	}
	count := func(id string) string {
		for _, r := range m.rowsMemo() {
			if r.id == id {
				return r.cols[3]
			}
		}
		t.Fatalf("no row %s", id)
		return ""
	}
	tokens("sa-1", 8) // 40 bytes: ~10
	if got := count("sa-1"); got != "~10" {
		t.Fatalf("after the first tokens sa-1 shows %q, want ~10 (the spawns rebuilt the rows)", got)
	}
	screen := tokens("sa-2", 40)
	if got := count("sa-2"); got != "0" {
		t.Errorf("tokens alone, before a tick: sa-2 shows %q, want 0 still", got)
	}
	if !strings.Contains(screen, "word word word") {
		t.Errorf("the selected transcript did not stream with the batch:\n%s", screen)
	}
	m.Update(tickMsg{})
	_ = m.View()
	if got := count("sa-2"); got != "~50" {
		t.Errorf("after the tick sa-2 shows %q, want ~50", got)
	}
	tokens("sa-3", 4)
	m.Update(EventsMsg{g.ev("sa-3", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c1", Tool: "read_file", Args: map[string]any{}})})
	_ = m.View()
	if got := count("sa-3"); got != "~5" {
		t.Errorf("a tool call after tokens: sa-3 shows %q, want ~5 at once", got)
	}
}
