package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunThousandSubagents: one `summit run` delegates to 1,000 subagents on script tapes
// (issue 29 item 10): every one of them ends, as done, and the process's peak RSS (the
// kernel's own figure for the child, rusage ru_maxrss) stays under 1 GB. The parallel cap
// is set at 1,000 too, so the orchestrator runs all of them at once (the cap must neither
// deadlock nor serialise them), and a second run with the default cap of 8 queues 992 of
// them and drains the queue. The tapes are short (a line and a capsule), so the run is
// about the orchestration, the fold and the recorder of 1,000 subagents, not model text.
func TestRunThousandSubagents(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	const n = 1000
	dir := t.TempDir()
	tapes := filepath.Join(dir, "tapes")
	os.MkdirAll(tapes, 0o755)
	tape := "tapes:\n  - name: quick\n    match: {agent: analyzer}\n    rate: 1000\n    steps:\n" +
		"      - say: \"looked at it: nothing to change here\"\n" +
		"      - capsule: {summary: \"nothing to change\", confidence: 0.9}\n"
	if err := os.WriteFile(filepath.Join(tapes, "quick.yaml"), []byte(tape), 0o644); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&script, "/delegate \"look at part %d\" --agent-type analyzer\n", i)
	}
	script.WriteString("/wait")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&script, " sa-%d", i)
	}
	script.WriteString("\n")
	sf := filepath.Join(dir, "s.summit")
	if err := os.WriteFile(sf, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, par := range []int{n, 8} {
		t.Run(fmt.Sprintf("max-parallel=%d", par), func(t *testing.T) {
			ws := runWorkspace(t)
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			// Bounded: a deadlock fails the test instead of hanging it (2 cores under load
			// run it in well under a minute).
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", "--script", sf, "--workspace", ws, "--tapes", tapes,
				"--record", rec, "--max-parallel", fmt.Sprint(par))
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = nil, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("summit run did not end in 5 minutes (deadlocked?); stderr tail:\n%s", tail(stderr.String(), 20))
			}
			if err != nil {
				t.Fatalf("summit run: %v\n%s", err, tail(stderr.String(), 20))
			}
			peak := peakRSS(t, cmd.ProcessState)
			t.Logf("%d subagents, cap %d: peak RSS %.1f MB, CPU %s", n, par, float64(peak)/1e6, cmd.ProcessState.SystemTime()+cmd.ProcessState.UserTime())
			if peak <= 0 || peak >= 1<<30 {
				t.Errorf("peak RSS %d bytes, want under 1 GB", peak)
			}
			spawned, stopped := recordedEnds(t, rec)
			if len(spawned) != n {
				t.Errorf("%d subagents spawned, want %d", len(spawned), n)
			}
			for i := 1; i <= n; i++ {
				id := fmt.Sprintf("sa-%d", i)
				if got := stopped[id]; got != "success" {
					t.Errorf("%s ended %q, want success", id, got)
					break
				}
			}
		})
	}
}

// recordedEnds reads a recording: the subagents spawned and each one's SubagentStop outcome.
func recordedEnds(t *testing.T, rec string) (map[string]bool, map[string]string) {
	t.Helper()
	f, err := os.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spawned, stopped := map[string]bool{}, map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e struct {
			Type string `json:"type"`
			Sub  string `json:"subagent_id"`
			Data struct {
				Outcome string `json:"outcome"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", rec, err)
		}
		switch e.Type {
		case "SubagentSpawned":
			spawned[e.Sub] = true
		case "SubagentStop":
			if _, dup := stopped[e.Sub]; dup {
				t.Errorf("%s stopped twice", e.Sub)
			}
			stopped[e.Sub] = e.Data.Outcome
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return spawned, stopped
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// TestTerminalTreeGroups: the tree's navigation in a real terminal: g groups by runner
// (local), enter on the header folds the group, g again groups by agent type and by state,
// w says when nothing waits, f filters within the groups, and esc clears the filter.
func TestTerminalTreeGroups(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := runWorkspace(t)
	tapes := t.TempDir()
	tape := "tapes:\n  - name: quick\n    match: {agent: analyzer}\n    steps:\n      - say: \"nothing to change\"\n      - capsule: {summary: \"nothing to change\"}\n"
	if err := os.WriteFile(filepath.Join(tapes, "quick.yaml"), []byte(tape), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	tm := newTerm(t, 120, 36, "cd "+ws+" && "+bin+" --tapes "+tapes+" --record "+rec+"; sleep 60")
	tm.waitFor(`type /help`, 10*time.Second)
	for i := 1; i <= 3; i++ {
		tm.keys(fmt.Sprintf("/delegate part %d --agent-type analyzer", i), "Enter")
		tm.waitFor(fmt.Sprintf(`sa-%d analyzer`, i), 10*time.Second)
	}
	tm.waitFor(` 0 running`, 20*time.Second)
	tm.keys("Tab")
	tm.waitFor(`┏━ tree`, 5*time.Second)
	tm.keys("g")
	tm.waitFor(`▾ local \(3\)`, 5*time.Second)
	tm.keys("Down", "Enter")
	s := tm.waitFor(`▸ local \(3\)`, 5*time.Second)
	if strings.Contains(panes(s), "sa-2 analyzer") {
		t.Errorf("a folded group still shows its rows:\n%s", s)
	}
	tm.keys("g")
	tm.waitFor(`▾ analyzer \(3\)`, 5*time.Second)
	tm.keys("g")
	tm.waitFor(`▾ done \(3\)`, 5*time.Second)
	tm.keys("w")
	tm.waitFor(`nothing waits for you`, 5*time.Second)
	tm.keys("f", "sa-2", "Enter")
	s = tm.waitFor(`▾ done \(1\)`, 5*time.Second)
	if strings.Contains(panes(s), "sa-1 analyzer") || !strings.Contains(s, "sa-2 analyzer") {
		t.Errorf("the filter within the groups:\n%s", s)
	}
	tm.keys("Escape")
	tm.waitFor(`▾ done \(3\)`, 5*time.Second)
	tm.keys("Escape", "C-u", "/quit", "Enter")
	waitEnded(t, rec)
}
