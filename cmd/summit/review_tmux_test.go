package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTerminalWholeFileReview (issue 27): two builders on one file, A changes lines 3 and 10,
// B line 3. In a real terminal the review says, with "take sa-2 here" selected, that A's
// line 10 lands with it; "take sa-2's list.txt" then lands B's file exactly.
func TestTerminalWholeFileReview(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	var list strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&list, "l%d\n", i)
	}
	os.WriteFile(filepath.Join(ws, "list.txt"), []byte(list.String()), 0o644)
	tapes, _ := filepath.Abs("../../session/live/testdata/tapes")
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	tm := newTerm(t, 120, 40, "cd "+ws+" && "+bin+" --tapes "+tapes+" --record "+rec+"; sleep 60")
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys(`/delegate "review A lines 3 and 10" --agent-type builder`, "Enter")
	tm.keys(`/delegate "review B line 3" --agent-type builder`, "Enter")
	tm.keys("/converge sa-1 sa-2 --strategy merge", "Enter")
	tm.waitFor(`conflict cf-1 · hunk list\.txt`, 20*time.Second)
	tm.waitFor(`↑↓ or 1-\d select`, 10*time.Second)
	tm.keys("2")
	s := tm.waitFor(`enter confirms ⚠ take sa-2 here`, 5*time.Second)
	if !strings.Contains(s, "these changes of other sides also land") || !strings.Contains(s, "+A10") {
		t.Errorf("take sa-2 here does not say A's line 10 lands with it:\n%s", s)
	}
	// A's pattern goes with A's dropped line 3; B's lands.
	if !strings.Contains(s, "⚠ playbook: sa-1's ADD patterns_established: lines are rewritten by A is dropped") ||
		!strings.Contains(s, "playbook: sa-2's ADD patterns_established: lines are rewritten by B lands") {
		t.Errorf("take sa-2 here does not say which playbook pattern lands:\n%s", s)
	}
	tm.keys("3")
	tm.waitFor(`enter confirms ⚠ take sa-2's list\.txt`, 5*time.Second)
	tm.keys("Enter")
	tm.waitFor(`cv-1 merge \(sa-1, sa-2\)\s+complete`, 20*time.Second)
	tm.keys("/apply cv-1", "Enter")
	tm.waitFor(`applied`, 10*time.Second)
	want := strings.Replace(list.String(), "l3\n", "B3\n", 1)
	if got, _ := os.ReadFile(filepath.Join(ws, "list.txt")); string(got) != want {
		t.Errorf("list.txt after taking sa-2's whole file:\n%s", got)
	}
	tm.keys("/quit", "Enter")
	if data := waitEnded(t, rec); !strings.Contains(string(data), `"whole_file":true`) {
		t.Error("the recording lacks the whole-file resolution")
	}
}
