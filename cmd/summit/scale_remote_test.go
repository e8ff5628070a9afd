package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// TestRunThousandLocalAndRemote: one `summit run` holds 1,000 subagents, local and remote
// together (issue 29 items 10 and 12): Debian's nats-server, two `summit runner` processes,
// and 1,000 /delegate lines on script tapes of which a share goes `--on any`, all at once
// (--max-parallel 1000; the runners have a slot for each of theirs). Every subagent ends as
// success, each remote one on a runner named in its SubagentSpawned and both runners used,
// each transcript holds its tape's lines once (a remote event folded twice or lost shows), the
// recording's seqs go 1, 2, 3… with no gap, and the session's peak RSS (the kernel's figure
// for the child) and each runner's (VmHWM) stay under 1 GB. Plain `go test` places 60 on the
// runners; SUMMIT_E2E=1 (CI) places 300, as testdata/perf/scale-remote.sh measures.
func TestRunThousandLocalAndRemote(t *testing.T) {
	t.Parallel()
	const n = 1000
	remote := 60
	if os.Getenv("SUMMIT_E2E") == "1" {
		remote = 300
	}
	needNATSServer(t)
	bin := buildBinary(t)
	s := startNATS(t, nil, "127.0.0.1")
	home := e2eHome(t)
	key := sessionKey(t, bin, home)
	tapes := t.TempDir()
	// The sleep keeps the subagents alive together: with NATS the session runs on the wall
	// clock, and the last /delegate is read a few seconds after the first.
	tape := "tapes:\n  - name: quick\n    match: {agent: analyzer}\n    rate: 1000\n    steps:\n" +
		"      - say: \"looked at it: nothing to change here. \"\n" +
		"      - sleep: 2s\n" +
		"      - say: \"still nothing to change.\"\n" +
		"      - capsule: {summary: \"nothing to change\", confidence: 0.9}\n"
	if err := os.WriteFile(filepath.Join(tapes, "quick.yaml"), []byte(tape), 0o644); err != nil {
		t.Fatal(err)
	}
	runnersUp := []*e2eRunner{
		startRunner(t, bin, nil, s, key, tapes, "scale-1", remote/2),
		startRunner(t, bin, nil, s, key, tapes, "scale-2", remote-remote/2),
	}
	var script strings.Builder
	for i := 1; i <= n; i++ {
		on := ""
		if i > n-remote {
			on = " --on any"
		}
		fmt.Fprintf(&script, "/delegate \"look at part %d\" --agent-type analyzer%s\n", i, on)
	}
	script.WriteString("/wait")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&script, " sa-%d", i)
	}
	script.WriteString("\n")
	dir := t.TempDir()
	sf, rec := filepath.Join(dir, "s.summit"), filepath.Join(dir, "rec.jsonl")
	if err := os.WriteFile(sf, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Bounded: a deadlock or a lost job fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--script", sf, "--workspace", runWorkspace(t), "--tapes", tapes,
		"--record", rec, "--max-parallel", strconv.Itoa(n), "--nats", s.URL, "--creds", s.Creds)
	cmd.Env = append(os.Environ(), home...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("summit run did not end in 8 minutes; stderr tail:\n%s", tail(stderr.String(), 20))
	}
	if err != nil {
		t.Fatalf("summit run: %v\n%s", err, tail(stderr.String(), 20))
	}
	peak := peakRSS(t, cmd.ProcessState)
	var runnerPeaks []int64
	for _, r := range runnersUp {
		runnerPeaks = append(runnerPeaks, vmHWM(t, r))
	}
	t.Logf("%d subagents, %d on runners: %s wall, session peak RSS %.1f MB, runners' %v kB", n, remote,
		time.Since(t0).Round(time.Second), float64(peak)/1e6, runnerPeaks)
	if peak <= 0 || peak >= 1<<30 {
		t.Errorf("the session's peak RSS is %d bytes, want under 1 GB", peak)
	}
	for i, p := range runnerPeaks {
		if p <= 0 || p*1024 >= 1<<30 {
			t.Errorf("runner %s's peak RSS is %d kB, want under 1 GB", runnersUp[i].name, p)
		}
	}

	evs := events(t, rec) // seqs 1, 2, 3… with no gap
	subs := bySubagent(evs)
	perRunner := map[string]int{}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("sa-%d", i)
		sa := subs[id]
		if sa == nil || sa.spawned != 1 || len(sa.stops) != 1 || sa.stops[0].Outcome != session.OutcomeSuccess {
			t.Fatalf("%s: %+v, want spawned once and ended once as success", id, sa)
		}
		wantRunner := i > n-remote
		if (sa.runner != "") != wantRunner {
			t.Errorf("%s: runner %q, want one: %v", id, sa.runner, wantRunner)
		}
		perRunner[sa.runner]++
		text := sa.text.String()
		for _, line := range []string{"looked at it: nothing to change here.", "still nothing to change."} {
			if c := strings.Count(text, line); c != 1 {
				t.Fatalf("%s (runner %q): %q appears %d times in its transcript, want once:\n%s", id, sa.runner, line, c, text)
			}
		}
	}
	if perRunner["scale-1"] == 0 || perRunner["scale-2"] == 0 || perRunner["scale-1"]+perRunner["scale-2"] != remote {
		t.Errorf("subagents per runner %v: want %d spread over scale-1 and scale-2", perRunner, remote)
	}
	if names := slices.Sorted(maps.Keys(perRunner)); len(names) != 3 {
		t.Errorf("placements %v: want local, scale-1 and scale-2", names)
	}
}

// vmHWM is a running runner's peak resident set in kB (/proc/PID/status).
func vmHWM(t *testing.T, r *e2eRunner) int64 {
	t.Helper()
	pid, err := r.proc.PID()
	if err != nil {
		t.Fatalf("runner %s: %v\n%s", r.name, err, r.stderr.String())
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
