package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session/record"
)

// bigSizes (screens_test.go) are the golden sizes of these screens too.

// rejectedModel is a workbench whose backend refuses /diff cv-8, after the user sent it.
func rejectedModel(t *testing.T, w, h int) (*Model, *fakeBackend) {
	t.Helper()
	b := &fakeBackend{replies: map[string]Reply{"/diff cv-8": {Rejected: true, Error: "/diff: unknown id cv-8 (the session has none yet)"}}}
	m, _ := newModel(t, w, h, b)
	m.Update(EventsMsg(events(t)[:1]))
	typeText(m, "/diff cv-8")
	press(m, "enter")
	if m.in.Value() != "/diff cv-8" || !m.noticeErr {
		t.Fatalf("after the refusal: input %q, notice %q", m.in.Value(), m.notice)
	}
	return m, b
}

// A rejected line is kept, selected: it is drawn highlighted, and a printable key replaces it
// whole, so the next command is not glued to it (it was: "/diff cv-8/diff sa-1").
func TestRejectedLineSelected(t *testing.T) {
	for _, sz := range bigSizes {
		m, _ := rejectedModel(t, sz[0], sz[1])
		out := golden(t, "rejected-"+size(sz), m)
		if !strings.Contains(out, "› /diff cv-8  typing replaces it") {
			t.Errorf("%v: the selected line and its hint:\n%s", sz, out)
		}
		if !strings.Contains(m.Render(), m.sty.match.Render("/diff cv-8")) {
			t.Errorf("%v: the rejected line is not highlighted", sz)
		}
	}
	m, b := rejectedModel(t, 100, 30)
	typeText(m, "/diff sa-1")
	if got := m.in.Value(); got != "/diff sa-1" {
		t.Errorf("typing after a refusal: %q, want the new line alone", got)
	}
	if strings.Contains(ansi.Strip(m.Render()), "typing replaces it") {
		t.Error("the line is still drawn selected after typing")
	}
	// ? replaces it too (it does not open the help).
	m, _ = rejectedModel(t, 100, 30)
	press(m, "?")
	if m.help || m.in.Value() != "?" {
		t.Errorf("? on a selected line: help %v, input %q", m.help, m.in.Value())
	}
	// An editing key deselects and edits where the line is: backspace, then typing goes on.
	m, _ = rejectedModel(t, 100, 30)
	press(m, "backspace")
	typeText(m, "9")
	if got := m.in.Value(); got != "/diff cv-9" {
		t.Errorf("backspace then 9: %q", got)
	}
	// An arrow deselects and moves the cursor.
	m, _ = rejectedModel(t, 100, 30)
	m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	typeText(m, "1")
	if got := m.in.Value(); got != "/diff cv-18" {
		t.Errorf("left then 1: %q", got)
	}
	// enter sends it again, as it is.
	m, b = rejectedModel(t, 100, 30)
	press(m, "enter")
	if len(b.lines) != 2 || b.lines[1] != "/diff cv-8" {
		t.Errorf("enter on a selected line sent %q", b.lines)
	}
	// A paste replaces it.
	m, _ = rejectedModel(t, 100, 30)
	m.Update(tea.PasteMsg{Content: "/status"})
	if got := m.in.Value(); got != "/status" {
		t.Errorf("a paste over a selected line: %q", got)
	}
}

// A replay's empty session log names the replay's keys, not commands it cannot take.
func TestGoldenReplayEmpty(t *testing.T) {
	for _, sz := range bigSizes {
		r, err := OpenReplay(recording, record.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := &clock{now: t0}
		m := New(Options{Replay: r, Now: c.Now, Dark: true, After: noTimer})
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		out := golden(t, "replay-empty-"+size(sz), m)
		r.Close()
		if strings.Contains(out, "Type /help") || strings.Contains(out, "--agent-type") {
			t.Errorf("%v: a replay's empty state asks for commands:\n%s", sz, out)
		}
		for _, w := range []string{"A replay takes keys", "space", "play / pause", "$ :", "fork"} {
			if !strings.Contains(out, w) {
				t.Errorf("%v: the replay's empty state lacks %q:\n%s", sz, w, out)
			}
		}
	}
}
