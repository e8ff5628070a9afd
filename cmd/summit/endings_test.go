package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTerminalEndings ends a workbench with a subagent running in every way a session ends
// while the terminal stays open — SIGTERM, SIGINT, SIGHUP, SIGQUIT, and ctrl+c twice — and checks the
// clean close: SessionEnded with its reason in the recording, the subagent stopped, the alt
// screen left and the cursor shown again, and the documented exit code. (tmux kill-session,
// which takes the terminal away, is TestTerminalClosed.)
func TestTerminalEndings(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	tapes, _ := filepath.Abs("../../session/live/testdata/tapes")
	for _, c := range []struct {
		name   string
		signal string // kill -s NAME; "" = keys
		keys   []string
		reason string
		exit   string
	}{
		{name: "SIGTERM", signal: "TERM", reason: "signal", exit: "1"},
		{name: "SIGINT", signal: "INT", reason: "signal", exit: "1"},
		{name: "SIGHUP", signal: "HUP", reason: "signal", exit: "1"},
		// Go's own SIGQUIT handler dumps goroutines and exits 2, in the alt screen, with no
		// SessionEnded: summit catches it like SIGTERM.
		{name: "SIGQUIT", signal: "QUIT", reason: "signal", exit: "1"},
		{name: "ctrl+c twice", keys: []string{"C-c", "C-c"}, reason: "quit", exit: "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			tm := newTerm(t, 100, 30, "cd "+ws+" && "+bin+" --tapes "+tapes+" --record "+rec+" 2>/dev/null; echo EXIT=$?; sleep 60")
			tm.waitFor(`type /help`, 10*time.Second)
			tm.keys("/delegate slow work --agent-type builder", "Enter")
			tm.waitFor(`sa-1 builder`, 10*time.Second)
			if alt := strings.TrimSpace(tm.tmux("display", "-p", "-t", tm.name, "#{alternate_on}")); alt != "1" {
				t.Fatalf("the workbench is not on the alt screen (alternate_on=%s)", alt)
			}
			if c.signal != "" {
				shell := strings.TrimSpace(tm.tmux("display", "-p", "-t", tm.name, "#{pane_pid}"))
				out, err := exec.Command("pkill", "-"+c.signal, "-P", shell, "-x", "summit").CombinedOutput()
				if err != nil {
					t.Fatalf("pkill: %v %s", err, out)
				}
			} else {
				tm.keys(c.keys[0])
				tm.waitFor(`ctrl\+c again quits`, 5*time.Second)
				tm.keys(c.keys[1:]...)
			}
			s := tm.waitFor(`EXIT=\d+`, 15*time.Second)
			if !strings.Contains(s, "EXIT="+c.exit) {
				t.Errorf("exit code: want %s\n%s", c.exit, s)
			}
			if alt := strings.TrimSpace(tm.tmux("display", "-p", "-t", tm.name, "#{alternate_on}")); alt != "0" {
				t.Errorf("the alt screen is still on after the session ended")
			}
			if cur := strings.TrimSpace(tm.tmux("display", "-p", "-t", tm.name, "#{cursor_flag}")); cur != "1" {
				t.Errorf("the cursor is still hidden (cursor_flag=%s)", cur)
			}
			data := waitEnded(t, rec)
			if !bytes.Contains(data, []byte(`"reason":"`+c.reason+`"`)) || !bytes.Contains(data, []byte(`"type":"SubagentStop"`)) {
				t.Errorf("the recording:\n%s", data)
			}
			if last := lastLine(data); !strings.Contains(last, `"type":"SessionEnded"`) || !strings.Contains(last, `"reason":"`+c.reason+`"`) {
				t.Errorf("the recording's last line is not SessionEnded (%s): %s", c.reason, last)
			}
		})
	}
}

// lastLine is the last non-empty line of a recording.
func lastLine(data []byte) string {
	ls := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return ls[len(ls)-1]
}
