package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// The workbench's half of issue 29 item 8: `summit run` is killed (kill -9) while its subagent
// runs on a real `summit runner` over a real nats-server; `summit replay` of its recording in a
// terminal asks whether to reattach, naming the subagent, its runner and job. A stray y and
// enter do nothing; typing reattach and enter ends the replay and the session goes on live on
// the recording (summit resume's code), showing what it held: the job's events come home once
// each, in order, after the cursor, the subagent ends as success with its change set, and
// quitting ends the session on the same recording.
func TestTerminalReplayReattach(t *testing.T) {
	t.Parallel()
	bin, s, home, key, tapes := e2eSetup(t, nil, "127.0.0.1", 1, 6*time.Second)
	startRunner(t, bin, nil, s, key, tapes, "rt-1", 1)
	run := startRun(t, bin, s, home, "/delegate \"job 1\" --agent-type builder --on rt-1\n/wait sa-1\n", 2*time.Minute)
	waitFor(t, 90*time.Second, "job 1's first line recorded", func() bool {
		b, _ := os.ReadFile(run.rec)
		return strings.Contains(string(b), "job 1 line 1.")
	})
	if err := run.proc.Kill9(); err != nil {
		t.Fatal(err)
	}
	<-run.proc.Done()
	before := len(events(t, run.rec))

	tm := newTerm(t, 100, 30, "exec env "+strings.Join(home, " ")+" "+bin+" replay "+run.rec+" --nats "+s.URL+" --creds "+s.Creds)
	screen := tm.waitFor(`Type reattach and press enter`, 20*time.Second)
	if !strings.Contains(screen, "sa-1 on rt-1 as job") {
		t.Fatalf("the question does not name sa-1 and its runner:\n%s", screen)
	}
	tm.keys("y", "Enter")
	time.Sleep(300 * time.Millisecond)
	if screen := tm.screen(); !strings.Contains(screen, "type the word reattach") {
		t.Fatalf("y and enter left the question:\n%s", screen)
	}
	if n := len(events(t, run.rec)); n != before {
		t.Fatalf("the replay wrote to the recording (%d events, were %d) before the reattach", n, before)
	}
	tm.keys("BSpace", "reattach", "Enter")
	// The live workbench on the recording: what happened before the kill shows at once.
	tm.waitFor(`sa-1`, 20*time.Second)
	var sa *subagentRecord
	waitFor(t, 90*time.Second, "sa-1 ends after the reattach", func() bool {
		sa = bySubagent(events(t, run.rec))["sa-1"]
		return sa != nil && len(sa.stops) > 0
	})
	if sa.spawned != 1 || len(sa.stops) != 1 || sa.stops[0].Outcome != session.OutcomeSuccess {
		t.Fatalf("sa-1 after the reattach: %+v\n%s", sa, tm.screen())
	}
	checkJobText(t, "sa-1", sa) // every line once, in order
	// The screen folds the stop a moment after the file has it: a ctrl+c before that asks
	// first (a subagent still runs there), and one ctrl+c would not quit.
	tm.waitFor(`· 0 running`, 20*time.Second)
	tm.keys("C-c")
	if data := waitEnded(t, run.rec); !strings.Contains(string(data), `"reason":"quit"`) {
		t.Errorf("the reattached session did not end on the recording when quit:\n%s", tm.screen())
	}
	changed := false
	for _, e := range events(t, run.rec) {
		if d, ok := e.Data.(session.SubagentChanges); ok {
			for _, f := range d.Files {
				changed = changed || f.Path == "out/job-1.txt"
			}
		}
	}
	if !changed {
		t.Errorf("sa-1's change set (out/job-1.txt) did not come home")
	}
}
