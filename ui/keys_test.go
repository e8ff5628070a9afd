package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// Esc then a fast key arrives as Alt+key: it is read as the two keys, never as Alt.
func TestEscThenTypingIsNotAlt(t *testing.T) {
	m, _ := newModel(t, 100, 30, &fakeBackend{})
	typeText(m, "/sta")
	m.Update(tea.KeyPressMsg{Code: 't', Mod: tea.ModAlt}) // esc (closes completion), then t
	m.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModAlt})
	m.Update(tea.KeyPressMsg{Code: 's', Mod: tea.ModAlt | tea.ModShift})
	if got := m.in.Value(); got != "/statuS" {
		t.Errorf("input %q, want /statuS", got)
	}
	// From the tree, esc+/ is esc (to the input) then /.
	m.in.SetValue("")
	press(m, "tab")
	m.Update(tea.KeyPressMsg{Code: '/', Mod: tea.ModAlt})
	if m.focus != focusInput || m.in.Value() != "/" {
		t.Errorf("focus %d input %q", m.focus, m.in.Value())
	}
}

// ctrl+c with subagents running asks first; a second quits. Any other key goes on.
func TestQuitAsksWhileRunning(t *testing.T) {
	m, _ := newModel(t, 100, 30, &fakeBackend{})
	m.Update(EventsMsg(upTo(events(t), session.TypePermissionRequested, false)))
	ctrlC := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	if _, cmd := m.Update(ctrlC); cmd != nil || m.quitting {
		t.Fatal("the first ctrl+c quit with subagents running")
	}
	if !strings.Contains(ansi.Strip(m.Render()), "ctrl+c again quits") {
		t.Errorf("no confirmation shown:\n%s", ansi.Strip(m.Render()))
	}
	press(m, "x")
	if m.quitArm {
		t.Error("another key did not cancel the question")
	}
	m.Update(ctrlC)
	if _, cmd := m.Update(ctrlC); cmd == nil || !m.quitting {
		t.Error("the second ctrl+c did not quit")
	}
	// Nothing running: at once.
	idle, _ := newModel(t, 100, 30, &fakeBackend{})
	if _, cmd := idle.Update(ctrlC); cmd == nil || !idle.quitting {
		t.Error("ctrl+c with nothing running did not quit")
	}
}

// The subagents end while the quit question stands: it says nothing runs any more (never "0
// subagents running ... cancels them"), and the second ctrl+c quits.
func TestQuitQuestionAfterAllEnded(t *testing.T) {
	g := &evGen{}
	m, _ := newModel(t, 200, 30, &fakeBackend{})
	m.Update(EventsMsg(g.start(2)))
	ctrlC := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	if _, cmd := m.Update(ctrlC); cmd != nil || m.quitting {
		t.Fatal("the first ctrl+c quit with subagents running")
	}
	if got := ansi.Strip(m.noticeLine()); !strings.Contains(got, "⚠ 2 subagents running: ctrl+c again quits and cancels them") {
		t.Fatalf("question while 2 run: %q", got)
	}
	m.Update(EventsMsg{g.ev("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}}),
		g.ev("sa-2", session.SubagentStop{Outcome: session.OutcomeFailure, ArtifactPaths: []string{}})})
	got := ansi.Strip(m.noticeLine())
	if want := "⚠ no subagent is running any more: ctrl+c again quits (the recording is closed cleanly); any other key goes on"; got != want {
		t.Errorf("question once all ended:\n got %q\nwant %q", got, want)
	}
	if strings.Contains(got, "0 subagents") || strings.Contains(got, "cancels") {
		t.Errorf("the question still speaks of cancelling: %q", got)
	}
	if _, cmd := m.Update(ctrlC); cmd == nil || !m.quitting {
		t.Error("the second ctrl+c did not quit")
	}
}

// /wait says what it waits for and marks each id as it ends.
func TestWaitFeedback(t *testing.T) {
	g := &evGen{}
	evs := g.start(2)
	m, _ := newModel(t, 120, 30, &fakeBackend{})
	m.Update(EventsMsg(evs))
	typeText(m, "/wait sa-1 sa-2")
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // the /wait's Cmd is not run: it is in flight
	if got := ansi.Strip(m.noticeLine()); !strings.Contains(got, "/wait: 2 of 2 pending · sa-1 running · sa-2 running") {
		t.Fatalf("wait line %q", got)
	}
	m.Update(EventsMsg{g.ev("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}})})
	if got := ansi.Strip(m.noticeLine()); !strings.Contains(got, "1 of 2 pending · sa-1 ✓ success · sa-2 running") {
		t.Fatalf("wait line after sa-1 %q", got)
	}
	m.Update(replyMsg{line: "/wait sa-1 sa-2", reply: Reply{Output: "waited 1.0s: sa-1 success · sa-2 failure"}})
	if got := ansi.Strip(m.noticeLine()); got != "waited 1.0s: sa-1 success · sa-2 failure" {
		t.Errorf("after the reply %q", got)
	}
}

// A failed convergence stands out in the tree; a complete one is ✓.
func TestConvergenceGlyphs(t *testing.T) {
	for _, c := range []struct {
		status, outcome, glyph string
		style                  int
	}{
		{session.ConvergenceRunning, "", spinner[0], rowRun},
		{session.ConvergenceReview, "", "⚠", rowWarn},
		{session.ConvergenceDone, session.OutcomeSuccess, "✓", rowOK},
		{session.ConvergenceDone, "partial", "◑", rowWarn},
		{session.ConvergenceDone, session.OutcomeFailure, "✗", rowBad},
	} {
		g, st := convergenceGlyph(&session.Convergence{Status: c.status, Outcome: c.outcome}, 0)
		if g != c.glyph || st != c.style {
			t.Errorf("%s/%s: %s %d, want %s %d", c.status, c.outcome, g, st, c.glyph, c.style)
		}
	}
}

func TestPlurals(t *testing.T) {
	for n, want := range map[int]string{0: "0 tool calls", 1: "1 tool call", 2: "2 tool calls"} {
		if got := session.Plural(n, "tool call"); got != want {
			t.Errorf("%d: %q", n, got)
		}
	}
	if got := session.Plural(3, "patch"); got != "3 patches" {
		t.Errorf("%q", got)
	}
}

// A refusal of several lines (an /apply that overlaps the workspace) opens the panel whole;
// the line stays in the input.
func TestLongRefusalShownWhole(t *testing.T) {
	msg := "/apply sa-1: nothing applied: 1 file overlaps the workspace as it is now:\n  main.go (contents)\n    <<<<<<< workspace\n    mine\n    =======\n    theirs\n    >>>>>>> sa-1\nedit the workspace"
	b := &fakeBackend{replies: map[string]Reply{"/apply sa-1": {Rejected: true, Error: msg}}}
	m, _ := newModel(t, 100, 30, b)
	typeText(m, "/apply sa-1")
	press(m, "enter")
	out := ansi.Strip(m.Render())
	if m.panel == nil || !strings.Contains(out, "<<<<<<< workspace") || !strings.Contains(out, ">>>>>>> sa-1") || m.in.Value() != "/apply sa-1" {
		t.Errorf("the refusal:\n%s", out)
	}
	// A refusal that is one line and its usage stays on the notice line.
	b.replies["/cancel sa-9"] = Reply{Rejected: true, Error: "/cancel: unknown subagent sa-9\nusage: /cancel <subagent_id>"}
	m.in.SetValue("")
	press(m, "esc")
	typeText(m, "/cancel sa-9")
	press(m, "enter")
	if m.panel != nil {
		t.Error("a one-line refusal opened the panel")
	}
}
