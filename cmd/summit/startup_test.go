package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
