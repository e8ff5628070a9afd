package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// agents list is a table: a header, one line per agent, every cell starting at its header's
// column measured in display cells (a wide rune counts two), plain when not on a terminal.
func TestAgentsListTable(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	dir := filepath.Join(ws, ".summit", "agents")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "wide.md"), []byte("---\nname: wide\ndescription: 日本語の説明、幅の広い文字\npermissionMode: plan\ntools: [read_file]\n---\nBe wide.\n"), 0o644)
	trustWS(t, ws)
	code, out, errOut := summit(t, "agents", "list", "--workspace", ws)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("piped output carries escape sequences:\n%q", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := []string{"NAME", "FROM", "MODE", "MODEL", "DESCRIPTION", "TOOLS"}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != strings.Join(header, " ") {
		t.Fatalf("header %q, want %v", lines[0], header)
	}
	cols := make([]int, len(header))
	for i, h := range header {
		cols[i] = ansi.StringWidth(lines[0][:strings.Index(lines[0], h)])
	}
	rows := 0
	for _, l := range lines[1:] {
		if l == "" {
			break // the legend follows
		}
		rows++
		if l != strings.TrimRight(l, " ") {
			t.Errorf("trailing spaces: %q", l)
		}
		// Each column's cell starts at its header's column: the cell before it ends with
		// two spaces at least (or the line is blank there).
		for _, c := range cols[1:] {
			if w := ansi.StringWidth(l); w <= c {
				continue
			}
			if before := ansi.Cut(l, c-2, c); strings.TrimSpace(before) != "" {
				t.Errorf("a cell runs into the column at %d: %q", c, l)
			}
		}
	}
	wide := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "wide ") {
			wide = l
		}
	}
	if wide == "" || !strings.Contains(wide, "plan") || !strings.Contains(wide, "日本語の説明、幅の広い文字") || !strings.HasSuffix(wide, "read_file") {
		t.Errorf("the wide agent's row: %q\n%s", wide, out)
	}
	if at := ansi.StringWidth(wide[:strings.Index(wide, "read_file")]); at != cols[5] {
		t.Errorf("after a wide-rune description TOOLS starts at %d, its header at %d:\n%s", at, cols[5], out)
	}
	if rows < 10 || !strings.Contains(out, "session's: it sets none") {
		t.Errorf("%d rows, or no legend:\n%s", rows, out)
	}
}
