package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTerminalBlame: in the workbench, /blame after a merge with a conflict shows each line of
// the file with the subagent, convergence and conflict behind it in the scrollable output
// panel, with the origins below; esc closes it.
func TestTerminalBlame(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n"), 0o644)
	tapes, _ := filepath.Abs("../../session/live/testdata/tapes")
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	tm := newTerm(t, 120, 40, "cd "+ws+" && "+bin+" --tapes "+tapes+" --record "+rec+"; sleep 60")
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys("/delegate variant a --agent-type builder", "Enter")
	tm.waitFor(`sa-1 builder`, 10*time.Second)
	tm.keys("/delegate variant b --agent-type builder", "Enter")
	tm.waitFor(`sa-2 builder`, 10*time.Second)
	tm.keys("/converge sa-1 sa-2 --strategy merge", "Enter")
	tm.waitFor(`cf-1`, 20*time.Second)
	tm.keys("/resolve cf-1 --choose sa-2", "Enter")
	tm.waitFor(`cv-1 merge \(sa-1, sa-2\)\s+complete`, 10*time.Second)
	tm.keys("/apply cv-1", "Enter")
	tm.waitFor(`cv-1 applied: 1 file`, 10*time.Second)
	tm.keys("/blame main.go", "Enter")
	s := tm.waitFor(`sa-2 · cv-1 · cf-1 │\s+println\("hello, " \+ user\(\)\)`, 10*time.Second)
	for _, w := range []string{"main.go · ", "unchanged", "│ package main"} {
		if !strings.Contains(s, w) {
			t.Errorf("the /blame panel lacks %q:\n%s", w, s)
		}
	}
	tm.keys("PageDown")
	tm.waitFor(`through: cv-1 merge · cf-1 resolved by manual: sa-2`, 10*time.Second)
	tm.keys("Escape", "/quit", "Enter")
	waitEnded(t, rec)
}
