package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/cmd/summit/internal/netnstest"
	"github.com/summit-dev/summit/session"
)

// Issue 29 item 8's last sentence: the local summit is killed (kill -9) while its subagent runs
// on a runner, and `summit resume` on the same recording reattaches it: the job goes on there,
// its events come home after the cursor the recording holds (every tape line once, in order;
// seqs 1, 2, 3… with no gap across the restart), it ends as success and its change set comes
// home.
func TestRunnersE2EResume(t *testing.T) {
	t.Parallel()
	bin, s, home, key, tapes := e2eSetup(t, nil, "127.0.0.1", 1, 12*time.Second)
	// sa-2 asks for the shell only after the kill: the resumed session answers it, over the
	// job's control subject it follows again.
	late := strings.ReplaceAll(strings.ReplaceAll(permTape, "^perm$", "^late$"), `- say: "perm asks for the shell."`,
		"- say: \"late waits.\"\n      - sleep: 15s\n      - say: \"perm asks for the shell.\"")
	late = strings.Replace(late, "name: perm", "name: late", 1)
	if err := os.WriteFile(filepath.Join(tapes, "late.yaml"), []byte(late), 0o644); err != nil {
		t.Fatal(err)
	}
	startRunner(t, bin, nil, s, key, tapes, "res-1", 2)
	run := startRun(t, bin, s, home, "/delegate \"job 1\" --agent-type builder --on res-1\n/delegate \"late\" --agent-type builder --on res-1\n/wait sa-1 sa-2\n", 2*time.Minute)
	waitFor(t, 90*time.Second, "job 1's first line recorded", func() bool {
		b, _ := os.ReadFile(run.rec)
		return strings.Contains(string(b), "job 1 line 1.")
	})
	if err := run.proc.Kill9(); err != nil {
		t.Fatal(err)
	}
	<-run.proc.Done()
	before := events(t, run.rec)
	if subs := bySubagent(before); subs["sa-1"] == nil || len(subs["sa-1"].stops) != 0 {
		t.Fatalf("sa-1 before the resume: %+v", subs["sa-1"])
	}

	sp := filepath.Join(t.TempDir(), "resume.summit")
	if err := os.WriteFile(sp, []byte("/wait sa-1 sa-2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr netnstest.Buffer
	args := append(slices.Clone(home), bin, "resume", run.rec, "--script", sp, "--nats", s.URL, "--creds", s.Creds, "--approve", "shell")
	p, err := netnstest.StartHost(t, context.Background(), 2*time.Minute, &stdout, &stderr, "env", args...)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("summit resume did not end:\n%s", stderr.String())
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("summit resume: %v\n%s", err, stderr.String())
	}
	evs := events(t, run.rec) // seqs 1, 2, 3… across the restart
	if len(evs) <= len(before) {
		t.Fatalf("resume recorded nothing after #%d:\n%s", len(before), stderr.String())
	}
	sa := bySubagent(evs)["sa-1"]
	if sa == nil || sa.spawned != 1 || len(sa.stops) != 1 || sa.stops[0].Outcome != session.OutcomeSuccess {
		t.Fatalf("sa-1 after the resume: %+v\n%s", sa, stderr.String())
	}
	checkJobText(t, "sa-1", sa) // every line once, in order: nothing twice, nothing dropped
	if !slices.ContainsFunc(sa.notes, func(n string) bool { return strings.Contains(n, "reattached to job") }) {
		t.Errorf("no reattach note in sa-1's transcript: %q", sa.notes)
	}
	cursor := map[string]uint64{} // by job
	changed := false
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.RunnerCursor:
			if d.Seq != 0 && d.Seq <= cursor[d.Job] {
				t.Errorf("#%d: job %s's cursor goes from %d to %d", e.Seq, d.Job, cursor[d.Job], d.Seq)
			}
			cursor[d.Job] = d.Seq
		case session.SubagentChanges:
			for _, f := range d.Files {
				changed = changed || f.Path == "out/job-1.txt"
			}
		}
	}
	if !changed {
		t.Errorf("sa-1's change set (out/job-1.txt) did not come home")
	}
	granted := 0
	for _, e := range evs[len(before):] {
		if d, ok := e.Data.(session.PermissionGranted); ok && e.SubagentID == "sa-2" && d.By == "--approve shell" {
			granted++
		}
	}
	late2 := bySubagent(evs)["sa-2"]
	if granted != 1 || late2 == nil || len(late2.stops) != 1 || late2.stops[0].Outcome != session.OutcomeSuccess {
		t.Errorf("sa-2's shell request after the restart: %d grants by the resumed session; sa-2 %+v", granted, late2)
	}
}
