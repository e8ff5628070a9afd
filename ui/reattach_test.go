package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session/record"
)

// reattachReplay is a replay opened with the reattach question for two subagents.
func reattachReplay(t *testing.T, w, h int) *Model {
	t.Helper()
	r, err := OpenReplay(recording, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	m := New(Options{Replay: r, Now: time.Now, Dark: true, After: noTimer,
		Reattach: []string{"sa-2 on gpu-1 as job 01JOBAAAA", "sa-3 on cpu-2 as job 01JOBBBBB"}})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// The question names each subagent and its runner and says what to type; at both sizes.
func TestGoldenReattachQuestion(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		m := reattachReplay(t, sz[0], sz[1])
		typeText(m, "reatt")
		out := golden(t, fmt.Sprintf("reattach-question-%dx%d", sz[0], sz[1]), m)
		for _, want := range []string{"sa-2 on gpu-1 as job 01JOBAAAA", "sa-3 on cpu-2", "Type reattach and press enter", "esc keeps a read-only replay", "> reatt"} {
			if !strings.Contains(out, want) {
				t.Errorf("%dx%d: the question lacks %q:\n%s", sz[0], sz[1], want, out)
			}
		}
	}
}

// No single key reattaches: enter alone, y, or a wrong word leave the question open; only the
// word reattach and enter end the replay with Reattach true.
func TestReattachNeedsTheWord(t *testing.T) {
	m := reattachReplay(t, 80, 24)
	for _, k := range []string{"enter", "y", "enter", "F", "F", "space", "enter"} {
		if _, cmd := m.Update(keyMsg(k)); cmd != nil {
			if _, ok := cmd().(tea.QuitMsg); ok {
				t.Fatalf("%q ended the replay", k)
			}
		}
	}
	if m.Reattach() || m.ForkSeq() != 0 {
		t.Fatal("a single key reattached or forked")
	}
	if out := ansi.Strip(m.Render()); !strings.Contains(out, "type the word reattach") {
		t.Errorf("enter on a wrong word does not say what to type:\n%s", out)
	}
	for range len("yFF ") {
		press(m, "backspace")
	}
	typeText(m, "reattach")
	_, cmd := m.Update(keyMsg("enter"))
	if !m.Reattach() {
		t.Fatal("reattach and enter did not choose to reattach")
	}
	if cmd == nil {
		t.Fatal("reattach and enter do not end the replay")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("reattach and enter do not quit the replay")
	}
}

// esc keeps the read-only replay: the question closes, nothing is chosen, and the replay's
// keys work again.
func TestReattachDeclined(t *testing.T) {
	m := reattachReplay(t, 80, 24)
	press(m, "esc")
	if m.Reattach() {
		t.Fatal("esc reattached")
	}
	out := ansi.Strip(m.Render())
	if strings.Contains(out, "Type reattach") || !strings.Contains(out, "read-only replay") {
		t.Errorf("after esc the question stays, or the notice does not say read-only:\n%s", out)
	}
	press(m, "$")
	m.o.Replay.WaitCaughtUp()
	press(m, "$")
	if !m.o.Replay.State().Ended {
		t.Error("after esc the replay keys do not work ($ did not seek to the end)")
	}
}
