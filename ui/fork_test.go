package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session/record"
)

// TestReplayForkKey: F names the event a fork would continue from; only a second F ends the
// replay with that seq (a stray F, or F then another key, forks nothing); at the end of a
// recording it names the event before SessionEnded.
func TestReplayForkKey(t *testing.T) {
	r, err := OpenReplay(recording, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := New(Options{Replay: r, Now: time.Now, Dark: true, After: noTimer})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "5") // seek to 50 %
	r.WaitCaughtUp()
	seq := r.State().LastSeq
	press(m, "F")
	if out := ansi.Strip(m.Render()); !strings.Contains(out, "fork at #") {
		t.Errorf("F does not say where it would fork:\n%s", out)
	}
	press(m, ".") // another key calls it off (and steps)
	if m.ForkSeq() != 0 {
		t.Fatal("F then . forked")
	}
	press(m, "F")
	_, cmd := m.Update(keyMsg("F"))
	if m.ForkSeq() != seq+1 {
		t.Errorf("fork seq %d, want %d (the event stepped to)", m.ForkSeq(), seq+1)
	}
	if cmd == nil {
		t.Fatal("the second F does not end the replay")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("the second F does not quit")
	}

	m2 := New(Options{Replay: r, Now: time.Now, Dark: true, After: noTimer})
	m2.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m2, "$")
	r.WaitCaughtUp()
	end := r.State()
	if !end.Ended {
		t.Fatal("the test recording has no SessionEnded")
	}
	press(m2, "F")
	m2.Update(keyMsg("F"))
	if m2.ForkSeq() != end.LastSeq-1 {
		t.Errorf("at the end: fork seq %d, want %d", m2.ForkSeq(), end.LastSeq-1)
	}
}

// TestSplitForkKey: in a split replay, F twice in the leading pane ends the split asking to
// fork that pane's recording at the event it shows; w then F twice forks the other one.
func TestSplitForkKey(t *testing.T) {
	for _, lead := range []int{0, 1} {
		a, err := OpenReplay(recording, record.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := OpenReplay(recording, record.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := NewSplit(a, b, [2]string{"a", "b"}, SyncSeq, Options{Now: time.Now, Dark: true, After: noTimer})
		s.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
		send := func(k string) tea.Cmd {
			_, cmd := s.Update(keyMsg(k))
			return cmd
		}
		if lead == 1 {
			send("w")
		}
		send("3")
		[2]*Replay{a, b}[lead].WaitCaughtUp()
		want := [2]*Replay{a, b}[lead].State().LastSeq
		send("F")
		if pane, seq := s.ForkAt(); seq != 0 {
			t.Fatalf("one F forked pane %d at %d", pane, seq)
		}
		if cmd := send("F"); cmd == nil {
			t.Fatal("the second F does not end the split")
		}
		if pane, seq := s.ForkAt(); pane != lead || seq != want {
			t.Errorf("lead %d: ForkAt %d #%d, want %d #%d", lead, pane, seq, lead, want)
		}
		a.Close()
		b.Close()
	}
}
