package ui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

// slowerRecording writes the test recording again with every gap between events three times
// as long: the same seqs, other times, so syncing by seq and by time land apart.
func slowerRecording(t *testing.T) string {
	t.Helper()
	evs := events(t)
	var buf []byte
	start := evs[0].TS
	for _, e := range evs {
		e.TS = start.Add(3 * e.TS.Sub(start))
		var err error
		if buf, err = record.AppendLine(buf, e); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "slower.jsonl")
	if err := os.WriteFile(p, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newSplit(t *testing.T, w, h int, sync SyncMode) (*Split, *Replay, *Replay, string) {
	t.Helper()
	a, err := OpenReplay(recording, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slow := slowerRecording(t)
	b, err := OpenReplay(slow, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	c := &clock{now: t0}
	s := NewSplit(a, b, [2]string{"valid.jsonl", "slower.jsonl"}, sync, Options{Now: c.Now, Dark: true, After: noTimer})
	s.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return s, a, b, slow
}

// splitPress sends keys to the split the way the program would, running what they return.
func splitPress(s *Split, keys ...string) {
	for _, k := range keys {
		_, cmd := s.Update(keyMsg(k))
		runSplitCmd(s, cmd)
	}
}

func runSplitCmd(s *Split, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runSplitCmd(s, c)
		}
	case nil:
	default:
		_, next := s.Update(msg)
		runSplitCmd(s, next)
	}
}

func splitGolden(t *testing.T, name string, s *Split) string {
	t.Helper()
	got := ansi.Strip(s.Render())
	lines := strings.Split(got, "\n")
	if len(lines) != s.h {
		t.Errorf("%s: %d lines, want %d", name, len(lines), s.h)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > s.w {
			t.Errorf("%s: line %d is %d wide (> %d): %q", name, i+1, w, s.w, l)
		}
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./ui -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n%s", name, path, got)
	}
	return got
}

// folded is the state of the recording at path after its first n events, folded directly.
func folded(t *testing.T, path string, n int) string {
	t.Helper()
	r, err := OpenReplay(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Seek(n); err != nil {
		t.Fatal(err)
	}
	return render.Render(r.State())
}

// lastTS is the time of the last event applied, since the first.
func lastTS(r *Replay) time.Duration {
	if r.Pos() == 0 {
		return 0
	}
	return r.ix.TS(r.Pos() - 1).Sub(r.ix.TS(0))
}

// TestSplitSyncBySeq: A leads; every move of A (a seek, a step, a marker) brings B to the
// same seq, both panes draw the state at that point, and the node selected in A is selected
// in B.
func TestSplitSyncBySeq(t *testing.T) {
	s, a, b, slow := newSplit(t, 80, 24, SyncSeq)
	if a.Pos() != 1 || b.Pos() != 1 {
		t.Fatalf("start: A at %d, B at %d", a.Pos(), b.Pos())
	}
	splitPress(s, "5", "]")
	if a.Pos() == 1 || b.Pos() != a.Pos() || b.State().LastSeq != a.State().LastSeq {
		t.Fatalf("A at %d (seq %d), B at %d (seq %d)", a.Pos(), a.State().LastSeq, b.Pos(), b.State().LastSeq)
	}
	// Both states are the fold of their recording up to the synchronised point.
	if render.Render(b.State()) != folded(t, slow, b.Pos()) || render.Render(a.State()) != folded(t, recording, a.Pos()) {
		t.Error("a pane's state is not its recording folded to the synchronised point")
	}
	// Select the second tree row in A: B selects the same node.
	splitPress(s, "down", "down")
	if s.Pane(0).sel == "" || s.Pane(1).sel != s.Pane(0).sel {
		t.Errorf("selection A %q, B %q", s.Pane(0).sel, s.Pane(1).sel)
	}
	seq := a.State().LastSeq
	out := splitGolden(t, "split-seq-80x24", s)
	for _, want := range []string{"sync seq", "A leads", "▶ A · valid.jsonl", "  B · slower.jsonl",
		"A paused 1× · " + itoa(a.Pos()) + "/", "B paused 1× · " + itoa(b.Pos()) + "/", "seq " + itoa(int(seq)) + " ·"} {
		if !strings.Contains(out, want) {
			t.Errorf("view lacks %q", want)
		}
	}
	if strings.Count(out, "seq "+itoa(int(seq))+" ·") != 2 {
		t.Errorf("both panes should be at seq %d:\n%s", seq, out)
	}
	s.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	big := splitGolden(t, "split-seq-200x50", s)
	if !strings.Contains(big, "sa-") || strings.Count(big, "seq "+itoa(int(seq))+" ·") != 2 {
		t.Errorf("large view:\n%s", big)
	}

	// Steps back and forward follow too.
	splitPress(s, ",", ",")
	if b.Pos() != a.Pos() {
		t.Errorf("after stepping back: A %d, B %d", a.Pos(), b.Pos())
	}
	// Sync off: A moves alone.
	splitPress(s, "s", "s")
	if s.Sync() != SyncOff {
		t.Fatalf("sync %v", s.Sync())
	}
	at := b.Pos()
	splitPress(s, "$")
	if a.Pos() != a.Len() || b.Pos() != at {
		t.Errorf("sync off: A %d/%d, B moved to %d from %d", a.Pos(), a.Len(), b.Pos(), at)
	}
	// Back to seq: B catches up at once.
	splitPress(s, "s")
	if s.Sync() != SyncSeq || b.Pos() != b.Len() {
		t.Errorf("sync %v, B at %d of %d", s.Sync(), b.Pos(), b.Len())
	}
}

// TestSplitSyncByTime: by time, B (three times slower) shows what it had done as long after
// its start as A's point is after A's; w gives B the lead, and A follows it.
func TestSplitSyncByTime(t *testing.T) {
	s, a, b, slow := newSplit(t, 80, 24, SyncTime)
	splitPress(s, "9")
	d := lastTS(a)
	if d <= 0 {
		t.Fatal("A has not moved")
	}
	want := 0
	for i := 0; i < b.Len(); i++ {
		if b.ix.TS(i).Sub(b.ix.TS(0)) <= d {
			want = i + 1
		}
	}
	if b.Pos() != want || b.Pos() >= a.Pos() || lastTS(b) > d {
		t.Fatalf("A at %d (+%v), B at %d (+%v), want B at %d", a.Pos(), d, b.Pos(), lastTS(b), want)
	}
	if render.Render(b.State()) != folded(t, slow, b.Pos()) {
		t.Error("B's state is not its recording folded to the synchronised point")
	}
	splitGolden(t, "split-time-80x24", s)

	// B leads now: a step in B moves A to the same time.
	splitPress(s, "w")
	if s.Focus() != 1 {
		t.Fatal("w did not give B the lead")
	}
	splitPress(s, ".", ".", ".")
	if lastTS(a) > lastTS(b) || a.Pos() < a.Len() && a.ix.TS(a.Pos()).Sub(a.ix.TS(0)) <= lastTS(b) {
		t.Errorf("A at %d (+%v) is not the last event by B's time +%v", a.Pos(), lastTS(a), lastTS(b))
	}
	out := splitGolden(t, "split-time-b-leads-80x24", s)
	if !strings.Contains(out, "B leads") || !strings.Contains(out, "▶ B · slower.jsonl") {
		t.Errorf("view does not show B leading:\n%s", out)
	}
	// Playing moves the leader; each tick brings the follower along.
	splitPress(s, "space")
	if !b.Playing || a.Playing {
		t.Errorf("playing: A %v, B %v", a.Playing, b.Playing)
	}
	before := b.Pos()
	_, cmd := s.Update(paneMsg{pane: 1, msg: replayTickMsg{at: b.Pos()}})
	runSplitCmd(s, cmd)
	if b.Pos() <= before || SyncPos(b, a, SyncTime) != a.Pos() {
		t.Errorf("a tick: B %d → %d, A at %d, want %d", before, b.Pos(), a.Pos(), SyncPos(b, a, SyncTime))
	}
	// Handing the lead back hands the playing over.
	splitPress(s, "w")
	if !a.Playing || b.Playing {
		t.Errorf("after w: A playing %v, B playing %v", a.Playing, b.Playing)
	}
	// A key a pane types into (the tree filter) is that pane's, not the split's.
	splitPress(s, "space", "f", "s", "w")
	if s.Sync() != SyncTime || s.Focus() != 0 || s.Pane(0).filter != "sw" {
		t.Errorf("typing a filter: sync %v, focus %d, filter %q", s.Sync(), s.Focus(), s.Pane(0).filter)
	}
}

func TestParseSync(t *testing.T) {
	for _, c := range []struct {
		in   string
		want SyncMode
	}{{"seq", SyncSeq}, {"time", SyncTime}, {"off", SyncOff}} {
		if got, err := ParseSync(c.in); err != nil || got != c.want {
			t.Errorf("%q: %v %v", c.in, got, err)
		}
	}
	if _, err := ParseSync("tim"); err == nil || !strings.Contains(err.Error(), "seq, time or off") {
		t.Errorf("bad value: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestSplitHelp: ? opens the leader's help with the split's keys on top; while it is open the
// split's keys are the help's (they do not switch or resync), and esc closes it.
func TestSplitHelp(t *testing.T) {
	s, _, _, _ := newSplit(t, 80, 24, SyncSeq)
	splitPress(s, "?")
	out := ansi.Strip(s.Render())
	if !strings.Contains(out, "side by side") || !strings.Contains(out, "w      other recording (it leads)") || !strings.Contains(out, "play / pause") {
		t.Errorf("help:\n%s", out)
	}
	splitPress(s, "w", "s")
	if s.Focus() != 0 || s.Sync() != SyncSeq {
		t.Errorf("keys under the help reached the split: focus %d sync %v", s.Focus(), s.Sync())
	}
	_, cmd := s.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	runSplitCmd(s, cmd)
	if s.Pane(0).help {
		t.Error("esc did not close the help")
	}
	splitGolden(t, "split-seq-start-80x24", s)
}
