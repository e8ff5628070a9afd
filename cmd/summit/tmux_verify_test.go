package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTerminalVerify: in the workbench, /apply cv-1 --dry-run shows what would land and
// changes nothing; --verify with a failing command is refused, shown, and nothing lands; a
// passing check lands it and the tree row marks summit's measurement (verify ✓).
func TestTerminalVerify(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	orig := "package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n"
	os.WriteFile(filepath.Join(ws, "main.go"), []byte(orig), 0o644)
	tapes, _ := filepath.Abs("../../session/live/testdata/tapes")
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	tm := newTerm(t, 120, 40, "cd "+ws+" && "+bin+" --tapes "+tapes+" --record "+rec+"; sleep 60")
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys("/delegate iso replace --agent-type builder", "Enter")
	tm.keys("/delegate iso write --agent-type builder", "Enter")
	tm.keys("/converge sa-1 sa-2 --strategy merge", "Enter")
	tm.waitFor(`conflict cf-1 · hunk main\.go`, 20*time.Second)
	tm.waitFor(`↑↓ or 1-\d select`, 10*time.Second)
	tm.keys("2")
	tm.waitFor(`enter confirms take sa-2`, 5*time.Second)
	tm.keys("Enter")
	tm.waitFor(`cv-1 merge \(sa-1, sa-2\)\s+complete`, 20*time.Second)
	tm.keys("/apply cv-1 --dry-run", "Enter")
	s := tm.waitFor(`would change 1 file`, 20*time.Second)
	if !strings.Contains(s, `+	println("hello from B")`) && !strings.Contains(s, `+    println("hello from B")`) {
		t.Errorf("the dry run does not show the diff:\n%s", s)
	}
	tm.keys("Escape")
	tm.keys("/apply cv-1 --verify false", "Enter")
	tm.waitFor(`the check failed`, 30*time.Second)
	if got, _ := os.ReadFile(filepath.Join(ws, "main.go")); string(got) != orig {
		t.Fatalf("a failed check or a dry run changed main.go:\n%s", got)
	}
	tm.keys("Escape", "C-u")
	tm.keys(`/apply cv-1 --verify "grep -q 'hello from B' main.go"`, "Enter")
	tm.waitFor(`cv-1 applied: 1 file`, 30*time.Second)
	if s := tm.screen(); !strings.Contains(s, "verify ✓") {
		t.Errorf("the tree does not mark summit's measurement:\n%s", s)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "main.go")); !strings.Contains(string(got), "hello from B") {
		t.Errorf("main.go after a verified apply:\n%s", got)
	}
	tm.keys("/quit", "Enter")
	data := waitEnded(t, rec)
	if n := bytes.Count(data, []byte(`"type":"VerifyRan"`)); n != 2 {
		t.Errorf("%d VerifyRan events, want 2", n)
	}
}
