package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunSIGQUIT: `summit run` ends on SIGQUIT as on SIGTERM, with a shell command running:
// the recording's last line is SessionEnded with reason signal, and no goroutine dump (Go's
// default for SIGQUIT, with exit 2 and no SessionEnded). The workbench's case is in
// TestTerminalEndings.
func TestRunSIGQUIT(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := runWorkspace(t)
	tapes := t.TempDir()
	os.WriteFile(filepath.Join(tapes, "nap.yaml"), []byte(`tapes:
  - name: nap
    match: {task: "(?i)nap"}
    steps:
      - tool: run_shell_command
        args: {command: "sleep 30"}
      - capsule: {summary: "rested"}
`), 0o644)
	script := filepath.Join(t.TempDir(), "nap.summit")
	os.WriteFile(script, []byte("/delegate \"take a nap\" --agent-type tester\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	cmd := exec.Command(bin, "run", "--script", script, "--workspace", ws, "--tapes", tapes, "--approve", "shell", "--record", rec)
	errb := &lockedBuffer{}
	cmd.Stderr = errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(errb.String(), "sa-1 → run_shell_command"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell command never started:\n%s", errb.String())
		}
	}
	time.Sleep(500 * time.Millisecond) // the command runs
	start := time.Now()
	cmd.Process.Signal(syscall.SIGQUIT)
	err := cmd.Wait()
	took := time.Since(start)
	code := cmd.ProcessState.ExitCode()
	if code != 1 || took > 10*time.Second || strings.Contains(errb.String(), "goroutine ") {
		t.Errorf("after SIGQUIT: exit %d (%v) in %v, want 1 promptly without a goroutine dump:\n%.2000s", code, err, took, errb.String())
	}
	data, _ := os.ReadFile(rec)
	if last := lastLine(data); !strings.Contains(last, `"type":"SessionEnded"`) || !strings.Contains(last, `"reason":"signal"`) {
		t.Errorf("the recording's last line is not SessionEnded with reason signal: %s", last)
	}
	if !bytes.Contains(data, []byte(`"type":"SubagentStop"`)) {
		t.Errorf("the running subagent was not stopped:\n%s", data)
	}
}
