package render

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Columns line up by display width (wide runes count two), the last column gives way with …,
// and a row never takes more than one line unless Wrap asks for it.
func TestTableAlignsByDisplayWidth(t *testing.T) {
	tb := Table{Header: []string{"name", "mode", "description"}, Rows: [][]string{
		{"builder", "acceptEdits", "writes code in its own worktree, then runs the tests"},
		{"日本語エージェント", "plan", "short"},
		{"x", "", "ok"},
	}}
	got := strings.Join(tb.Lines(0), "\n")
	want := "" +
		"name                mode         description\n" +
		"builder             acceptEdits  writes code in its own worktree, then runs the tests\n" +
		"日本語エージェント  plan         short\n" +
		"x                                ok"
	if got != want {
		t.Errorf("natural width:\n%s\nwant:\n%s", got, want)
	}
	if w := tb.Width(); w != 85 {
		t.Errorf("Width() = %d, want 85", w)
	}
	lines := tb.Lines(50)
	if len(lines) != 4 {
		t.Fatalf("at 50 columns the table takes %d lines, want 4 (no row wraps):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 50 {
			t.Errorf("%q is %d wide, > 50", l, w)
		}
	}
	if !strings.HasPrefix(lines[1], "builder             acceptEdits  writes code in") || !strings.HasSuffix(lines[1], "…") {
		t.Errorf("the description is not the column that gives way: %q", lines[1])
	}
	tb.Wrap = true
	lines = tb.Lines(50)
	if len(lines) != 7 || lines[2] != strings.Repeat(" ", 33)+"its own worktree," {
		t.Errorf("wrapped, the description stays in its column:\n%s", strings.Join(lines, "\n"))
	}
}

func TestAlignTabs(t *testing.T) {
	in := "session s · plan\nid\tstatus\nsa-1\tdone\nsa-10\trunning\nend\n"
	want := "session s · plan\nid     status\nsa-1   done\nsa-10  running\nend\n"
	if got := AlignTabs(in); got != want {
		t.Errorf("AlignTabs:\n%q\nwant\n%q", got, want)
	}
	if got := AlignTabs("no tables\n"); got != "no tables\n" {
		t.Errorf("text without tabs changed: %q", got)
	}
}

// One enormous cell in a first column does not squeeze the last column out: the widest
// other column gives way down to where the last keeps a third of the width.
func TestTableLongCellGivesWay(t *testing.T) {
	tb := Table{Header: []string{"name", "description"}, Rows: [][]string{
		{strings.Repeat("N", 300), "the description that matters"},
		{"short", "another"},
	}}
	lines := tb.Lines(90)
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 90 {
			t.Errorf("%d wide: %q", w, l)
		}
	}
	if !strings.Contains(lines[1], "the description that matters") || !strings.HasSuffix(strings.Fields(lines[1])[0], "…") {
		t.Errorf("the long name did not give way:\n%s", strings.Join(lines, "\n"))
	}
}
