//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/tools"
)

// jailFixture is a workspace with an agent that runs one shell command, its tape, and a
// script delegating to it.
func jailFixture(t *testing.T, command string) (ws, tapes, script string) {
	t.Helper()
	ws, tapes = t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit", "agents"), 0o755)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".summit", "agents", "prober.md"), []byte("---\nname: prober\ndescription: runs one shell command\n"+
		"tools: [read_file, write_file, run_shell_command]\n---\nProbe.\n"), 0o644)
	os.WriteFile(filepath.Join(tapes, "prober.yaml"), []byte("tapes:\n  - name: prober\n    match: {agent: prober}\n    steps:\n"+
		"      - tool: run_shell_command\n        args: {command: "+fmt.Sprintf("%q", command)+"}\n"+
		"      - capsule: {summary: \"probed\"}\n"), 0o644)
	script = filepath.Join(t.TempDir(), "probe.summit")
	os.WriteFile(script, []byte("/delegate probe --agent-type prober\n/wait sa-1\n"), 0o644)
	return ws, tapes, script
}

// From summit run, a subagent's shell reaches neither a loopback listener, nor summit (a
// signal, its environment), nor the shared module cache, nor a secret of the environment,
// and git commit works in its worktree. Each probe prints a word only when it got through.
func TestRunSubagentShellIsJailed(t *testing.T) {
	if !tools.ConfinementAvailable() {
		t.Skip("no Landlock here")
	}
	if err := tools.HardenProcess(); err != nil { // as main does
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	shared := t.TempDir()
	t.Setenv("GOMODCACHE", shared)
	t.Setenv("GITHUB_PAT", "ghp-run-jail-secret")
	pid := os.Getpid()
	cmd := fmt.Sprintf("kill -0 %d 2>/dev/null && echo ESC-KILL; cat /proc/%d/environ >/dev/null 2>&1 && echo ESC-ENVIRON; "+
		"(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo ESC-NET; env | grep -q GITHUB_PAT && echo ESC-PAT; "+
		"touch %s/poisoned 2>/dev/null && echo ESC-MODCACHE; (exec 3<>/dev/tty) 2>/dev/null && echo ESC-TTY; "+
		"git -c user.name=a -c user.email=b@c commit -q --allow-empty -m probe && echo COMMIT-OK; echo PROBE-DONE",
		pid, pid, ln.Addr().(*net.TCPAddr).Port, shared)
	ws, tapes, script := jailFixture(t, cmd)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	var out, errb bytes.Buffer
	code := run([]string{"run", "--script", script, "--tapes", tapes, "--approve", "all", "--workspace", ws, "--record", rec}, &out, &errb)
	all, _ := os.ReadFile(rec)
	b := toolResults(t, all)
	if code != 0 || !strings.Contains(b, "PROBE-DONE") {
		t.Fatalf("exit %d, stderr:\n%s\nrecording:\n%s", code, errb.String(), all)
	}
	for _, esc := range []string{"ESC-KILL", "ESC-ENVIRON", "ESC-NET", "ESC-PAT", "ESC-MODCACHE", "ESC-TTY"} {
		if strings.Contains(b, esc) {
			t.Errorf("the subagent's shell got through: %s", esc)
		}
	}
	if !strings.Contains(b, "COMMIT-OK") {
		t.Errorf("git commit failed in the worktree:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(shared, "poisoned")); err == nil {
		t.Errorf("the shared module cache was written")
	}
}

// Without Landlock a subagent's shell is refused, saying how to opt in; with
// --allow-unconfined-shell it runs, and stderr and SessionStarted say so.
func TestRunUnconfinedShellOptIn(t *testing.T) {
	t.Setenv("SUMMIT_SIMULATE_NO_LANDLOCK", "1")
	ws, tapes, script := jailFixture(t, "echo RAN-UNCONFINED")
	for _, optIn := range []bool{false, true} {
		rec := filepath.Join(t.TempDir(), "rec.jsonl")
		args := []string{"run", "--script", script, "--tapes", tapes, "--approve", "all", "--workspace", ws, "--record", rec}
		if optIn {
			args = append(args, "--allow-unconfined-shell")
		}
		var out, errb bytes.Buffer
		run(args, &out, &errb)
		all, _ := os.ReadFile(rec)
		first, _, _ := strings.Cut(string(all), "\n")
		b := toolResults(t, all)
		if optIn {
			if !strings.Contains(b, "RAN-UNCONFINED") || !strings.Contains(first, `"unconfined_shell":true`) ||
				!strings.Contains(errb.String(), "--allow-unconfined-shell: this system has no Landlock") {
				t.Errorf("opted in: stderr %s\nrecording:\n%s", errb.String(), b)
			}
			continue
		}
		if strings.Contains(b, "RAN-UNCONFINED") || !strings.Contains(b, "no Landlock") || !strings.Contains(b, "--allow-unconfined-shell") ||
			strings.Contains(first, "unconfined_shell") {
			t.Errorf("not opted in: the shell ran or the refusal does not say how to opt in:\n%s", b)
		}
	}
}

// toolResults is the text of the recording's tool results (not the commands, which hold the
// probes' words too).
func toolResults(t *testing.T, rec []byte) string {
	var sb strings.Builder
	for _, line := range strings.Split(string(rec), "\n") {
		var e struct {
			Data struct {
				EventType string `json:"event_type"`
				Result    string `json:"result"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Data.EventType == "tool_result" {
			sb.WriteString(e.Data.Result + "\n")
		}
	}
	return sb.String()
}

// doctor reports the confinement: Landlock, the network confinement, TIOCSTI probed.
func TestDoctorReportsConfinement(t *testing.T) {
	ws := t.TempDir()
	var out, errb bytes.Buffer
	run([]string{"doctor", "--workspace", ws}, &out, &errb)
	for _, want := range []string{"confinement:", "network confinement: ", "TIOCSTI blocked, no terminal reachable (subagent's shell)",
		"TIOCSTI blocked, no terminal reachable (hook or MCP server)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor lacks %q:\n%s%s", want, out.String(), errb.String())
		}
	}
	if tools.ConfinementAvailable() && !strings.Contains(out.String(), fmt.Sprintf("Landlock ABI %d", tools.LandlockABI())) {
		t.Errorf("doctor does not name the Landlock ABI:\n%s", out.String())
	}
	t.Setenv("SUMMIT_SIMULATE_NO_LANDLOCK", "1")
	out.Reset()
	if code := run([]string{"doctor", "--workspace", ws}, &out, &errb); code != 1 || !strings.Contains(out.String(), "no Landlock") {
		t.Errorf("without Landlock: exit %d\n%s", code, out.String())
	}
}
