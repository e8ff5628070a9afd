package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// questionModel is a live workbench at w×h where the guided demo's step text stands on the
// notice line and sa-1, a builder, has taken control and asked a question.
func questionModel(t *testing.T, w, h int, question string) (*Model, *fakeBackend) {
	t.Helper()
	b := &fakeBackend{}
	m, c := newModel(t, w, h, b)
	ev := func(seq uint64, sub string, d session.Data) session.Event {
		return session.Event{V: 1, Seq: seq, TS: t0.Add(time.Duration(seq) * time.Second), SessionID: "s-demo", Type: d.Type(), SubagentID: sub, Data: d}
	}
	m.Update(EventsMsg{
		ev(1, "", session.SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script", AllowedTools: []string{}}),
		ev(2, "sa-1", session.SubagentSpawned{AgentType: "builder", ParentSessionID: "s-demo", ParentSessionRef: "s-demo", PermissionMode: "acceptEdits", Tools: []string{}, TaskDescription: "pair on the README", TimeoutS: 300, InheritContext: true}),
		ev(3, "sa-1", session.TranscriptEvent{EventType: session.TranscriptStart, Text: "pair on the README"}),
		ev(4, "sa-1", session.SubagentActive{InitialState: "running"}),
	})
	m.Update(NoticeMsg("4/5 · A builder takes control and asks you: type usage or testing, enter."))
	m.Update(EventsMsg{
		ev(5, "sa-1", session.HandoffInitiated{ParentSessionID: "s-demo", HandoffMode: session.HandoffTransferControl, TimeoutS: 600, OnFailure: "escalate"}),
		ev(6, "sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: question}),
		ev(7, "sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "waiting for a user message"}),
	})
	c.now = t0.Add(8 * time.Second)
	return m, b
}

// TestQuestionStandsOnNoticeLine (issue 28): the transfer-control question stands on the
// notice line even when another notice (the demo's step text) was put there, until the
// subagent gives control back; a question too long for the width keeps its end, where it asks.
func TestQuestionStandsOnNoticeLine(t *testing.T) {
	const q = "Should I add a Usage or a Testing section to README.md?"
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		m, _ := questionModel(t, sz[0], sz[1], q)
		if got := ansi.Strip(m.noticeLine()); strings.TrimSpace(got) != "⇄ sa-1 asks: "+q {
			t.Errorf("%s: notice line %q", size(sz), got)
		}
		// A later notice does not cover it either.
		m.Update(NoticeMsg("5/5 · something else"))
		if got := ansi.Strip(m.noticeLine()); !strings.Contains(got, "sa-1 asks: "+q) {
			t.Errorf("%s: after another notice: %q", size(sz), got)
		}
		press(m, "tab") // the tree: where step 1 of the demo sent the user
		typeText(m, "testing")
		golden(t, "question-"+size(sz), m)
	}
	long := "I can add a Usage or a Testing section to README.md. Which one should I write?"
	m, _ := questionModel(t, 80, 24, long)
	got := ansi.Strip(m.noticeLine())
	if !strings.HasPrefix(got, " ⇄ sa-1 asks: …") || !strings.HasSuffix(strings.TrimRight(got, " "), "Which one should I write?") || ansi.StringWidth(got) > 80 {
		t.Errorf("long question at 80 columns: %q", got)
	}
	// The user answers; the subagent's reply streams in: while it streams it is no question
	// (the notice says who has control), and the next wait for the user makes it one.
	m.Update(EventsMsg{
		{V: 1, Seq: 8, TS: t0.Add(9 * time.Second), SessionID: "s-demo", Type: session.TypeUserNote, SubagentID: "sa-1", Data: session.UserNote{Text: "testing"}},
		{V: 1, Seq: 9, TS: t0.Add(9 * time.Second), SessionID: "s-demo", Type: session.TypeTranscriptEvent, SubagentID: "sa-1",
			Data: session.TranscriptEvent{EventType: session.TranscriptToken, Text: "Added a Testing section to README.md"}},
	})
	if got := ansi.Strip(m.noticeLine()); strings.Contains(got, "asks") || !strings.Contains(got, "sa-1 has control") {
		t.Errorf("a reply streaming after the answer: %q", got)
	}
	m.Update(EventsMsg{{V: 1, Seq: 10, TS: t0.Add(9 * time.Second), SessionID: "s-demo", Type: session.TypeTranscriptEvent, SubagentID: "sa-1",
		Data: session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "waiting for a user message"}}})
	if got := ansi.Strip(m.noticeLine()); !strings.Contains(got, "sa-1 asks: Added a Testing section to README.md") {
		t.Errorf("waiting for the user again: %q", got)
	}
	// Control given back: the notice line is the notice again.
	m.Update(EventsMsg{{V: 1, Seq: 11, TS: t0.Add(9 * time.Second), SessionID: "s-demo", Type: session.TypeHandoffComplete, SubagentID: "sa-1",
		Data: session.HandoffComplete{Outcome: session.OutcomeSuccess}}})
	if got := ansi.Strip(m.noticeLine()); !strings.HasPrefix(got, "4/5 · ") {
		t.Errorf("after the subagent stopped: %q", got)
	}
}

// TestQuestionKeysGoToInput (issue 28): while a subagent has control, a printable key typed
// in the tree or the transcript goes to the input (with the focus), so a user who followed
// the demo's "tab to the tree" answers by typing: t, g, f and space are not pane keys then,
// and nothing is sent before enter in the input. Without a question the panes keep their keys.
func TestQuestionKeysGoToInput(t *testing.T) {
	for _, c := range []struct {
		name string
		tabs int
		text string
	}{{"tree", 1, "testing"}, {"transcript", 2, "go to usage"}} {
		m, b := questionModel(t, 80, 24, "Usage or Testing?")
		for range c.tabs {
			press(m, "tab")
		}
		typeText(m, c.text)
		if m.in.Value() != c.text || m.focus != focusInput {
			t.Errorf("%s: input %q focus %d", c.name, m.in.Value(), m.focus)
		}
		if m.thinking || !m.view("sa-1").follow || m.filtering || m.help {
			t.Errorf("%s: a typed letter acted as a pane key (thinking %v follow %v filter %v help %v)",
				c.name, m.thinking, m.view("sa-1").follow, m.filtering, m.help)
		}
		if len(b.lines) != 0 {
			t.Errorf("%s: sent before enter: %q", c.name, b.lines)
		}
		press(m, "enter")
		if len(b.lines) != 1 || b.lines[0] != c.text {
			t.Errorf("%s: sent %q, want %q", c.name, b.lines, c.text)
		}
	}
	// Caps lock on: still text. ctrl+t is not text: it stays with the pane.
	m, _ := questionModel(t, 80, 24, "Usage or Testing?")
	press(m, "tab")
	m.Update(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	if m.in.Value() != "" || m.focus != focusTree {
		t.Errorf("ctrl+t: input %q focus %d", m.in.Value(), m.focus)
	}
	m.Update(tea.KeyPressMsg{Code: 'U', Text: "U", Mod: tea.ModShift | tea.ModCapsLock})
	if m.in.Value() != "U" || m.focus != focusInput {
		t.Errorf("caps lock / ctrl: input %q focus %d", m.in.Value(), m.focus)
	}
	// Arrows still move in the tree while the question stands.
	m, _ = questionModel(t, 80, 24, "Usage or Testing?")
	press(m, "tab", "up")
	if m.focus != focusTree || m.sel == "sa-1" || m.in.Value() != "" {
		t.Errorf("up in the tree: focus %d sel %q input %q", m.focus, m.sel, m.in.Value())
	}
	// No question: t in the transcript shows thinking, f in the tree filters.
	b := &fakeBackend{}
	m, _ = newModel(t, 80, 24, b)
	m.Update(EventsMsg(events(t)))
	press(m, "tab", "tab", "t")
	if !m.thinking || m.in.Value() != "" {
		t.Errorf("t in the transcript without a question: thinking %v input %q", m.thinking, m.in.Value())
	}
	press(m, "tab", "tab", "f")
	if !m.filtering || m.in.Value() != "" {
		t.Errorf("f in the tree without a question: filtering %v input %q", m.filtering, m.in.Value())
	}
}
