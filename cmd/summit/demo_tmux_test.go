package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// TestTerminalDemoLiteral (issue 28) runs 'summit demo' in tmux at 80×24 and follows each
// step's text literally, as a newcomer would: at step 1 it tabs to the tree and presses ↓ to
// watch a subagent (still streaming), picks a side at step 2, denies the shell at step 3 (the
// tester then ends as a failure, in the tree and in the recording), and at step 4 types its
// answer with the tree still focused: the answer reaches sa-5. The question stands on the
// notice line meanwhile. The tour reaches its end, and the recording has every answer.
// --pace 0.4 shortens the waits; TestDemoPace and TestDemoGuideHolds check the pacing itself.
func TestTerminalDemoLiteral(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	errFile := filepath.Join(dir, "stderr")
	data := filepath.Join(dir, "data")
	tm := newTerm(t, 80, 24, "XDG_DATA_HOME="+data+" "+bin+" demo --keep --pace 0.4 2>"+errFile+"; sleep 60")
	t0 := time.Now()
	step := func(i int) string {
		t.Helper()
		s := tm.waitFor(regexp.QuoteMeta(demoSteps[i].say), 40*time.Second)
		t.Logf("step %d at %v", i+1, time.Since(t0).Round(100*time.Millisecond))
		return s
	}

	// 1/5 · "tab to the tree, ↑↓ to watch one": the explorer is still streaming when watched.
	step(0)
	tm.keys("Tab")
	tm.waitFor(`┏━ tree`, 5*time.Second)
	tm.keys("Down")
	tm.waitFor(`sa-1 explore · active`, 5*time.Second)

	// 2/5 · "pick a side (1 or 2, then enter)": the review opens by itself over the tree.
	tm.waitFor(`conflict cf-1 · hunk cart\.go:13`, 40*time.Second)
	step(1)
	tm.waitFor(`↑↓ or 1-\d select`, 5*time.Second)
	tm.keys("2")
	tm.waitFor(`enter confirms ⚠ take sa-3 here`, 5*time.Second)
	tm.keys("Enter")

	// 3/5 · "1 allow, 3 deny, enter": deny. The tester could not test: ✗ in the tree.
	tm.waitFor(`permission pr-1 · sa-4 tester`, 40*time.Second)
	step(2)
	tm.waitFor(`↑↓ or 1-\d select`, 5*time.Second)
	tm.waitFor(`3 deny `, 5*time.Second)
	tm.keys("3")
	tm.waitFor(`enter confirms deny ·`, 5*time.Second)
	tm.keys("Enter")
	tm.waitFor(`✗ sa-4 tester`, 20*time.Second)

	// 4/5 · "type usage or testing, enter", typed with the tree focused (since step 1).
	tm.waitFor(regexp.QuoteMeta(demoSteps[3].say)+`|sa-5 has control`, 40*time.Second)
	s := tm.waitFor(`⇄ sa-5 asks: Should I add a Usage or a Testing section to README\.md\?`, 30*time.Second)
	if !strings.Contains(s, "┏━ tree") {
		t.Fatalf("the tree is not focused at step 4:\n%s", s)
	}
	tm.keys("testing")
	s = tm.waitFor(`sa-5 › testing`, 5*time.Second)
	if !strings.Contains(s, "sa-5 asks:") {
		t.Errorf("the question left the notice line while it is open:\n%s", s)
	}
	tm.keys("Enter")

	// 5/5: the end.
	final := step(4)
	if !strings.Contains(final, "0 running") {
		t.Errorf("still running at the end:\n%s", final)
	}
	tm.keys("C-c")

	var rec, ws string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && rec == ""; time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(errFile)
		m := regexp.MustCompile(`replay it with: \S*summit replay (\S+\.jsonl)`).FindSubmatch(b)
		k := regexp.MustCompile(`kept at (\S+)`).FindSubmatch(b)
		if m != nil && k != nil {
			rec, ws = string(m[1]), string(k[1])
		}
	}
	if rec == "" {
		b, _ := os.ReadFile(errFile)
		t.Fatalf("no recording reported; stderr:\n%s", b)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Every answer typed was delivered, and the tester's stop says it failed.
	var resolved, denied, note, ended bool
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.ConflictResolved:
			resolved = resolved || d.ConflictID == "cf-1" && d.Choice == "sa-3"
		case session.PermissionDenied:
			denied = denied || d.RequestID == "pr-1"
		case session.UserNote:
			note = note || e.SubagentID == "sa-5" && d.Text == "testing"
		case session.SubagentStop:
			if e.SubagentID == "sa-4" && d.Outcome != session.OutcomeFailure {
				t.Errorf("the tester whose shell was denied stopped with %s", d.Outcome)
			}
		case session.SessionEnded:
			ended = true
		}
	}
	if !resolved || !denied || !note || !ended {
		t.Errorf("the recording: cf-1 resolved for sa-3 %v, pr-1 denied %v, \"testing\" to sa-5 %v, ended %v", resolved, denied, note, ended)
	}
	if readme, _ := os.ReadFile(filepath.Join(ws, "README.md")); !strings.Contains(string(readme), "## Testing") {
		t.Errorf("sa-5 did not write what it was told; README.md:\n%s", readme)
	}
	t.Logf("done at %v", time.Since(t0).Round(100*time.Millisecond))
}
