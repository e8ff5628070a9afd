package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/ui"
)

// TestTerminalTables opens /status, /agents and the ? help in a real terminal at 120 columns:
// each is aligned in columns and no row wraps into another column; /status is a small panel
// over the panes, which stay visible.
func TestTerminalTables(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws, tapes := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(tapes, "hi.yaml"), []byte(`tapes:
  - name: hi
    match: {agent: builder}
    steps:
      - say: "Hello."
      - capsule: {summary: "said hello"}
`), 0o644)
	tm := newTerm(t, 120, 40, "cd "+ws+" && "+bin+" --tapes "+tapes+" --record "+filepath.Join(t.TempDir(), "rec.jsonl")+"; sleep 60")
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys(`/delegate "say hi" --agent-type builder`, "Enter")
	tm.waitFor(`✓ sa-1 builder`, 10*time.Second)

	// /status: the header's columns, sa-1 under "id", in a box narrower than the screen.
	tm.keys("/status", "Enter")
	s := tm.waitFor(`/status · esc closes`, 5*time.Second)
	rows := boxRows(s)
	if len(rows) != 3 || !strings.Contains(s, "─ tree") {
		t.Errorf("/status: %d rows in the panel, want 3 (session, header, sa-1), the tree visible:\n%s", len(rows), s)
	} else if colOf(rows[1], "id") != colOf(rows[2], "sa-1") || colOf(rows[1], "status") != colOf(rows[2], "done") {
		t.Errorf("/status: sa-1's cells are not under their headers:\n%s", strings.Join(rows, "\n"))
	}
	tm.keys("Escape")
	gone(t, tm, `/status · esc closes`)

	// /agents: every row starts under NAME (a ↳ line under the description), on one line.
	tm.keys("/agents", "Enter")
	s = tm.waitFor(`/agents · `, 5*time.Second)
	rows = boxRows(s)
	if len(rows) < 5 || !strings.HasPrefix(strings.TrimSpace(rows[0]), "name") {
		t.Fatalf("/agents:\n%s", s)
	}
	nameAt, descAt := colOf(rows[0], "name"), colOf(rows[0], "description")
	for _, r := range rows[1:] {
		if strings.TrimSpace(r) == "" {
			break // the legend follows the table
		}
		at := ansi.StringWidth(r) - ansi.StringWidth(strings.TrimLeft(r, " "))
		if at != nameAt && !(at == descAt && strings.HasPrefix(strings.TrimSpace(r), "↳")) {
			t.Errorf("/agents: a row starts at column %d (names at %d): %q", at, nameAt, r)
		}
		if f := strings.Fields(r); len(f) < 3 {
			t.Errorf("/agents: a row with fewer than 3 cells (wrapped?): %q", r)
		}
	}
	tm.keys("Escape")
	// Wait for the panel to close before the next key: ESC followed at once by "?" reads as
	// alt+? to a terminal's input parser, and the panel would stay open under the help.
	gone(t, tm, `/agents · `)

	// ?: keys and commands each in their own columns.
	tm.keys("?")
	s = tm.waitFor(`help · keys by pane`, 5*time.Second)
	// The title can be drawn while rows below still show the closed /agents panel (a capture
	// in the middle of a frame's write): read on until two captures agree.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(150 * time.Millisecond)
		again := tm.waitFor(`help · keys by pane`, 5*time.Second)
		if again == s {
			break
		}
		s = again
	}
	known := map[string]bool{"everywhere": true, "input": true, "tree": true, "transcript": true, "prompts and inbox": true, "output panels": true, "commands": true}
	km := reflect.ValueOf(ui.DefaultKeyMap())
	for i := range km.NumField() {
		if b, ok := km.Field(i).Interface().(key.Binding); ok {
			known[b.Help().Key] = true
		}
	}
	cmdAt := map[int]bool{}
	cmd := regexp.MustCompile(`/[a-z]+  +\S`)
	for _, r := range boxRows(s) {
		text := strings.TrimLeft(r, " ")
		if at := ansi.StringWidth(r) - ansi.StringWidth(text); text != "" && at < 17 {
			first, _, _ := strings.Cut(text, "  ")
			if !known[first] {
				t.Errorf("help: %q starts in the keys column (a description wrapped into it?): %q", first, r)
			}
		}
		if loc := cmd.FindStringIndex(r); loc != nil && loc[0] > 40 {
			cmdAt[ansi.StringWidth(r[:loc[0]])] = true
		}
	}
	if len(cmdAt) != 1 {
		t.Errorf("help: the commands start at %d different columns:\n%s", len(cmdAt), s)
	}
	tm.keys("Escape", "/quit", "Enter")
}

// gone waits until the screen no longer matches what.
func gone(t *testing.T, tm *tmuxTerm, what string) {
	t.Helper()
	re := regexp.MustCompile(what)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !re.MatchString(tm.screen()) {
			return
		}
	}
	t.Fatalf("the screen still shows %q:\n%s", what, tm.screen())
}

// boxRows are the lines inside the focused (heavy) box on a screen, without its borders.
func boxRows(screen string) []string {
	var rows []string
	in := false
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.Contains(l, "┏"):
			in = true
		case strings.Contains(l, "┗"):
			return rows
		case in:
			i, j := strings.Index(l, "┃"), strings.LastIndex(l, "┃")
			if i >= 0 && j > i {
				rows = append(rows, strings.TrimRight(l[i+len("┃"):j], " "))
			}
		}
	}
	return rows
}

// colOf is the display column where cell starts in line (-1 when it is not there).
func colOf(line, cell string) int {
	i := strings.Index(line, cell)
	if i < 0 {
		return -1
	}
	return ansi.StringWidth(line[:i])
}
