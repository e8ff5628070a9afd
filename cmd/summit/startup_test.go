package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartSpawnsNoTmux: inside tmux, neither `summit version` nor the workbench runs tmux
// to learn what the terminal supports. lipgloss's package Writer (colorprofile.Detect at
// initialisation) and Bubble Tea's colour detection each ran `tmux info` on every start; a
// tmux on PATH that logs its runs finds none.
func TestStartSpawnsNoTmux(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "tmux.log")
	tm := newTerm(t, 120, 40, "sleep 60") // skips when tmux is not installed
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte("#!/bin/sh\necho \"$*\" >>"+log+"\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	tm.tmux("respawn-pane", "-k", "-t", tm.name, "cd "+ws+" && export PATH="+dir+":$PATH XDG_CONFIG_HOME="+t.TempDir()+" && "+
		bin+" version >/dev/tty && "+bin+" version >"+filepath.Join(dir, "version")+" && exec "+bin+" --no-record")
	tm.waitFor(`Type /help`, 20*time.Second)
	time.Sleep(300 * time.Millisecond)
	if b, _ := os.ReadFile(filepath.Join(dir, "version")); len(b) == 0 {
		t.Fatal("summit version printed nothing")
	}
	if b, _ := os.ReadFile(log); len(b) > 0 {
		t.Errorf("summit ran tmux:\n%s", b)
	}
}

// TestWorkbenchLateStart: the work the workbench's first frame does not need (the leftovers
// scan, saving the inventory) runs after that frame, and still does what it did before it:
// the inventory is written while the workbench runs, and the leftovers line is on the
// terminal once the workbench has quit, above the recording's note, as when it was printed
// before the alt screen opened.
func TestWorkbenchLateStart(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	ws := runWorkspace(t)
	if code, _, errOut, _ := runScript(t, ws, "/delegate \"change the greeting\" --agent-type builder\n/wait sa-1\n", "--keep-worktrees"); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if err := os.Remove(filepath.Join(ws, ".summit", "inventory.json")); err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	errFile := filepath.Join(t.TempDir(), "stderr")
	tm := newTerm(t, 120, 40, "cd "+ws+" && XDG_CACHE_HOME="+cache+" XDG_CONFIG_HOME="+t.TempDir()+" "+bin+" 2>"+errFile+"; sleep 60")
	tm.waitFor(`Type /help`, 20*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, ".summit", "inventory.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running workbench never saved the inventory")
		}
		time.Sleep(50 * time.Millisecond)
	}
	tm.keys("/quit", "Enter")
	deadline = time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(errFile)
		s := string(b)
		if i, j := strings.Index(s, "left 1 leftover"), strings.Index(s, "recorded"); i >= 0 && j > i {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after quitting, stderr lacks the leftovers line above the recording's note:\n%s", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
