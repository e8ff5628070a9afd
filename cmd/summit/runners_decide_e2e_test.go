package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// permTape is a builder tape (task "perm") whose shell call asks for permission: run, it
// writes out/shell.txt in the runner's worktree; denied, it says so and writes nothing.
const permTape = `tapes:
  - name: perm
    match: {agent: builder, task: "^perm$"}
    rate: 0
    steps:
      - say: "perm asks for the shell."
      - tool: run_shell_command
        args: {command: "mkdir -p out && echo ran-on-runner > out/shell.txt && echo shell-ran-ok"}
        on_denied:
          - say: "perm was denied the shell."
          - capsule: {status: failure, summary: "the shell was denied", confidence: 0.3}
      - say: "perm ran the shell."
      - capsule: {summary: "perm wrote out/shell.txt", confidence: 0.9}
`

// Issue 29 item 5: a runner's subagent asks for the shell; the request comes to the local
// session (its recording holds it, decided there by the local --approve), the answer goes back
// and the runner acts on it: granted, the command runs on the runner and its change set comes
// home; denied, the tape's on_denied branch runs and nothing is written. The runner decides
// nothing itself: every decision in the recording is the local session's.
func TestRunnersE2EPermissionRoundTrip(t *testing.T) {
	t.Parallel()
	bin, s, home, key, tapes := e2eSetup(t, nil, "127.0.0.1", 1, time.Second)
	if err := os.WriteFile(filepath.Join(tapes, "perm.yaml"), []byte(permTape), 0o644); err != nil {
		t.Fatal(err)
	}
	startRunner(t, bin, nil, s, key, tapes, "perm-1", 2)
	for _, c := range []struct {
		approve string
		grant   bool
	}{{"shell", true}, {"none", false}} {
		run := startRunApprove(t, bin, s, home, "/delegate \"perm\" --agent-type builder --on perm-1\n/wait sa-1\n", c.approve, 2*time.Minute)
		select {
		case <-run.proc.Done():
		case <-time.After(2 * time.Minute):
			t.Fatalf("--approve %s: summit run did not end:\n%s", c.approve, run.stderr.String())
		}
		evs := events(t, run.rec)
		var asked, granted, denied int
		var text strings.Builder
		changed := false
		for _, e := range evs {
			switch d := e.Data.(type) {
			case session.PermissionRequested:
				if d.Tool == "run_shell_command" && e.SubagentID == "sa-1" {
					asked++
				}
			case session.PermissionGranted:
				granted++
				if d.By != "--approve "+c.approve {
					t.Errorf("--approve %s: granted by %q, not the local session", c.approve, d.By)
				}
			case session.PermissionDenied:
				denied++
				if d.By != "--approve "+c.approve {
					t.Errorf("--approve %s: denied by %q, not the local session", c.approve, d.By)
				}
			case session.TranscriptEvent:
				text.WriteString(d.Text + d.Result + "\n")
			case session.SubagentChanges:
				changed = changed || slices.ContainsFunc(d.Files, func(f session.FileChange) bool { return f.Path == "out/shell.txt" })
			}
		}
		if asked != 1 {
			t.Fatalf("--approve %s: %d shell requests of sa-1 in the local recording, want 1\n%s", c.approve, asked, run.stderr.String())
		}
		sa := bySubagent(evs)["sa-1"]
		switch {
		case c.grant && (granted != 1 || denied != 0 || !strings.Contains(text.String(), "shell-ran-ok") || !strings.Contains(text.String(), "perm ran the shell.") || !changed):
			t.Errorf("granted: %d grants, %d denials, change set home %v; transcript:\n%s", granted, denied, changed, text.String())
		case !c.grant && (denied != 1 || granted != 0 || !strings.Contains(text.String(), "perm was denied the shell.") || strings.Contains(text.String(), "shell-ran-ok") || changed):
			t.Errorf("denied: %d grants, %d denials, change set home %v; transcript:\n%s", granted, denied, changed, text.String())
		}
		if sa == nil || len(sa.stops) != 1 {
			t.Fatalf("--approve %s: sa-1 %+v", c.approve, sa)
		}
		if want := map[bool]string{true: session.OutcomeSuccess, false: session.OutcomeFailure}[c.grant]; sa.stops[0].Outcome != want {
			t.Errorf("--approve %s: sa-1 ended %s, want %s", c.approve, sa.stops[0].Outcome, want)
		}
	}
}

// /delegate … --on any --retry: the runner the subagent runs on is killed with kill -9; the
// subagent is placed again, from its base, on the other runner, as a new job, and succeeds
// there; the recording says so (the error naming the dead runner and the re-placement, a second
// job's cursor on the other runner) and its change set comes home once.
func TestRunnersE2ERetry(t *testing.T) {
	t.Parallel()
	bin, s, home, key, tapes := e2eSetup(t, nil, "127.0.0.1", 1, 8*time.Second)
	r1 := startRunner(t, bin, nil, s, key, tapes, "retry-1", 2)
	r2 := startRunner(t, bin, nil, s, key, tapes, "retry-2", 2)
	run := startRun(t, bin, s, home, "/delegate \"job 1\" --agent-type builder --on any --retry\n/wait sa-1\n", 3*time.Minute)
	var victim, other *e2eRunner
	waitFor(t, 90*time.Second, "job 1 started on a runner", func() bool {
		switch {
		case strings.Contains(r1.stderr.String(), ") started"):
			victim, other = r1, r2
		case strings.Contains(r2.stderr.String(), ") started"):
			victim, other = r2, r1
		}
		return victim != nil
	})
	time.Sleep(time.Second)
	if err := victim.proc.Kill9(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.proc.Done():
	case <-time.After(3 * time.Minute):
		t.Fatalf("summit run did not end:\n%s", run.stderr.String())
	}
	evs := events(t, run.rec)
	sa := bySubagent(evs)["sa-1"]
	if sa == nil || sa.spawned != 1 || len(sa.stops) != 1 || sa.stops[0].Outcome != session.OutcomeSuccess {
		t.Fatalf("sa-1: %+v\n%s", sa, run.stderr.String())
	}
	var jobs []session.RunnerCursor
	replaced, changed := false, 0
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.RunnerCursor:
			if d.Seq == 0 {
				jobs = append(jobs, d)
			}
		case session.TranscriptEvent:
			replaced = replaced || strings.Contains(d.Text, "runner "+victim.name+" is gone") && strings.Contains(d.Text, "--retry places it again")
		case session.SubagentChanges:
			if slices.ContainsFunc(d.Files, func(f session.FileChange) bool { return f.Path == "out/job-1.txt" }) {
				changed++
			}
		}
	}
	if len(jobs) != 2 || jobs[0].Runner != victim.name || jobs[1].Runner != other.name || jobs[0].Job == jobs[1].Job {
		t.Errorf("placements %+v: want a job on %s, then a new one on %s", jobs, victim.name, other.name)
	}
	if !replaced {
		t.Errorf("no transcript line names %s gone and the re-placement", victim.name)
	}
	if changed != 1 {
		t.Errorf("out/job-1.txt in %d change sets, want 1", changed)
	}
	if !strings.Contains(sa.text.String(), "job 1 line 4.") {
		t.Errorf("the second job's text is not in sa-1's transcript:\n%s", sa.text.String())
	}
}
