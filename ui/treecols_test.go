package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// treeEvents: four subagents with figures of different widths: one calling a tool, one done
// with changes and a cost, one queued, one with a long name.
func treeEvents() []session.Event {
	g := &evGen{}
	evs := g.start(3)
	cost := 0.4213
	spawn := session.SubagentSpawned{AgentType: "performance-engineer", AgentName: "performance-engineer", ParentSessionID: "s-bench",
		ParentSessionRef: "s-bench", PermissionMode: "plan", Tools: []string{}, TaskDescription: "profile", TimeoutS: 300, InheritContext: true}
	return append(evs,
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: strings.Repeat("token ", 400)}),
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c1", Tool: "run_shell_command", Args: map[string]any{"command": "go test ./..."}}),
		g.ev("sa-2", session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}, DurationMS: 61000,
			Tokens: session.Tokens{Input: 12000, Output: 3400}, CostUSD: &cost}),
		g.ev("sa-4", spawn),
		g.ev("sa-4", session.SubagentActive{InitialState: "running"}),
	)
}

// The tree's figures stand in columns sized to their content, aligned across rows; while the
// transcript pane is idle (the session row selected, the focus elsewhere) the tree widens to
// show its columns whole, and it narrows back when a subagent is chosen.
func TestGoldenTreeColumns(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 30}, {200, 50}} {
		m, c := newModel(t, sz[0], sz[1], &fakeBackend{})
		m.Update(EventsMsg(treeEvents()))
		c.now = t0.Add(90 * time.Second)
		base := max(30, min(52, sz[0]*35/100))
		idle := ansi.Strip(m.Render())
		if sz[0] != 120 {
			idle = golden(t, "tree-idle-"+size(sz), m)
		}
		tw := m.treeWidth()
		rows := treeRows(idle, tw)
		if sz[0] >= 120 {
			if tw <= base {
				t.Errorf("%s: the idle tree stays %d wide (base %d) while its columns need more:\n%s", size(sz), tw, base, idle)
			}
			for _, r := range rows {
				if strings.Contains(r, "…") {
					t.Errorf("%s: the idle tree cuts a row: %q", size(sz), r)
				}
			}
			// Every subagent's elapsed time ends at the same column.
			ends := map[int]bool{}
			for _, r := range rows {
				if i := strings.Index(r, "00:"); i >= 0 {
					ends[ansi.StringWidth(r[:i+5])] = true
				}
			}
			if len(ends) != 1 {
				t.Errorf("%s: the elapsed times end at %d different columns:\n%s", size(sz), len(ends), strings.Join(rows, "\n"))
			}
			if !strings.Contains(idle, "run_shell_command") || !strings.Contains(idle, "$0.42") {
				t.Errorf("%s: the idle tree does not show its last columns:\n%s", size(sz), idle)
			}
		}
		// Choosing a subagent gives the transcript its width back.
		press(m, "tab", "down")
		sel := ansi.Strip(m.Render())
		if sz[0] != 120 {
			sel = golden(t, "tree-selected-"+size(sz), m)
		}
		if got := m.treeWidth(); got != base {
			t.Errorf("%s: with sa-1 selected the tree is %d wide, want %d:\n%s", size(sz), got, base, sel)
		}
		press(m, "up") // the session row again, focus on the tree: still idle
		if got := m.treeWidth(); got != tw {
			t.Errorf("%s: back on the session row the tree is %d wide, want %d", size(sz), got, tw)
		}
	}
}

// treeRows are the tree pane's row texts (inside its borders) on a screen.
func treeRows(screen string, tw int) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n")[2:] {
		r := ansi.Cut(l, 1, tw-1)
		if strings.Contains(r, "sa-") {
			out = append(out, r)
		}
	}
	return out
}
