package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTerminalDiffAndSearch (issue 28's screens): in a real terminal, /diff of an isolated
// builder's change is coloured (its hunk header and its added and removed lines carry colour
// escapes), and the transcript's search steps forward (n) and backward (N) with "K of N",
// wrapping around with a message.
func TestTerminalDiffAndSearch(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n"), 0o644)
	tapes, _ := filepath.Abs("../../session/live/testdata/tapes")
	start := time.Now()
	tm := newTerm(t, 100, 30, "cd "+ws+" && "+bin+" --tapes "+tapes+" --no-record; sleep 30")
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys("/delegate iso replace --agent-type builder", "Enter")
	tm.waitFor(`✓ sa-1 builder`, 20*time.Second)
	tm.keys("/diff sa-1", "Enter")
	tm.waitFor(`/diff sa-1 · esc closes`, 10*time.Second)
	s := tm.tmux("capture-pane", "-p", "-e", "-t", tm.name)
	colour := regexp.MustCompile("\x1b\\[[0-9;]*(3[0-7]|38;)[0-9;]*m")
	for _, want := range []string{"@@ -", "-\tprintln(\"hello\")", "+\tprintln(\"hello from A\")"} {
		line := ""
		for _, l := range strings.Split(s, "\n") {
			if plain := stripSGR(l); strings.Contains(plain, want) || strings.Contains(plain, strings.ReplaceAll(want, "\t", "    ")) {
				line = l
				break
			}
		}
		if line == "" {
			t.Fatalf("/diff lacks %q:\n%s", want, tm.screen())
		}
		i := strings.Index(line, strings.ReplaceAll(want, "\t", "    "))
		if i < 0 {
			i = strings.Index(line, want)
		}
		if !colour.MatchString(line[:max(0, i)]) {
			t.Errorf("/diff's %q line is not coloured: %q", want, line)
		}
	}
	// The transcript: tab to the tree, select sa-1, open it; search "main.go".
	tm.keys("Escape", "Tab", "Down", "Enter", "C-f")
	tm.keys("main.go", "Enter")
	count := regexp.MustCompile(`search: main\.go — (\d+) of (\d+)`)
	at := func() (int, int, string) {
		t.Helper()
		s := tm.waitFor(`search: main\.go — \d+ of \d+`, 5*time.Second)
		m := count.FindStringSubmatch(s)
		k, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		return k, n, s
	}
	k, n, s := at()
	if n < 2 || k != n {
		t.Fatalf("the first find is %d of %d, want the latest of at least 2:\n%s", k, n, s)
	}
	tm.keys("N")
	tm.waitFor(`— `+strconv.Itoa(n-1)+` of `+strconv.Itoa(n), 5*time.Second)
	tm.keys("n")
	tm.waitFor(`— `+strconv.Itoa(n)+` of `+strconv.Itoa(n), 5*time.Second)
	tm.keys("n")
	tm.waitFor(`— 1 of `+strconv.Itoa(n)+` · wrapped to the top`, 5*time.Second)
	tm.keys("N")
	tm.waitFor(`— `+strconv.Itoa(n)+` of `+strconv.Itoa(n)+` · wrapped to the bottom`, 5*time.Second)
	tm.keys("C-c")
	t.Logf("the session took %v", time.Since(start).Round(100*time.Millisecond))
}

// stripSGR drops colour sequences from a captured line.
func stripSGR(s string) string { return regexp.MustCompile("\x1b\\[[0-9;:]*m").ReplaceAllString(s, "") }
