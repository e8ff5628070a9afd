package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A session run with --keep-worktrees leaves its worktree; the next run says so, summit gc
// lists it (--dry-run changes nothing), then removes it, and the user's files are untouched.
func TestGCKeptWorktrees(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ws := runWorkspace(t)
	code, _, errOut, _ := runScript(t, ws, "/delegate \"change the greeting\" --agent-type builder\n/wait sa-1\n", "--keep-worktrees")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	cache := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "summit")
	wts, _ := filepath.Glob(filepath.Join(cache, "worktrees", "*", "sa-1"))
	if len(wts) != 1 {
		t.Fatalf("the kept worktree is not there: %v", wts)
	}
	if b, _ := os.ReadFile(filepath.Join(wts[0], "main.go")); !strings.Contains(string(b), "hello, world") {
		t.Errorf("the worktree lacks the builder's edit:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.go")); strings.Contains(string(b), "hello, world") {
		t.Errorf("the builder wrote the main workspace:\n%s", b)
	}
	_, _, errOut, _ = runScript(t, ws, "/agents\n")
	if !strings.Contains(errOut, "left 1 leftover") {
		t.Errorf("the next start does not mention the leftovers:\n%s", errOut)
	}
	code, out, _ := summit(t, "gc", "--dry-run")
	if code != 0 || !strings.Contains(out, "(kept)") || !strings.Contains(out, "1 worktree(s)") {
		t.Fatalf("gc --dry-run: %d\n%s", code, out)
	}
	if _, err := os.Stat(wts[0]); err != nil {
		t.Fatal("--dry-run removed the worktree")
	}
	if code, out, errb := summit(t, "gc"); code != 0 || !strings.Contains(errb, "summit: removed") {
		t.Fatalf("gc: %d\n%s\n%s", code, out, errb)
	}
	if _, err := os.Stat(wts[0]); err == nil {
		t.Error("gc left the worktree")
	}
	if _, out, _ := summit(t, "gc"); !strings.Contains(out, "nothing to clean") {
		t.Errorf("gc again: %s", out)
	}
}

// The same deterministic script run twice with --keep-worktrees: the second run's worktrees
// go beside the kept ones instead of failing on them.
func TestKeptWorktreesRerun(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ws := runWorkspace(t)
	for i := range 2 {
		if code, _, errOut, _ := runScript(t, ws, "/delegate \"change the greeting\" --agent-type builder\n/wait sa-1\n", "--keep-worktrees"); code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i+1, code, errOut)
		}
	}
	wts, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "summit", "worktrees", "*", "sa-1"))
	if len(wts) != 2 {
		t.Errorf("kept worktrees: %v", wts)
	}
}
