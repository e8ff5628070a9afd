package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With ConfineWrites, run_shell_command (and what it starts) writes inside the root only:
// absolute paths, .., a sibling that shares the root's prefix, and a child process are all
// refused, while reading outside and writing inside (and the temp dir) still work.
func TestShellConfinedWrites(t *testing.T) {
	if !ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: run_shell_command cannot be confined here")
	}
	hidden := filepath.Join(t.TempDir(), ".summit")
	os.MkdirAll(hidden, 0o700)
	os.WriteFile(filepath.Join(hidden, "history"), []byte("secret history"), 0o600)
	s, parent := fixture(t, Options{ConfineWrites: true, Hidden: []string{hidden}})
	victim := filepath.Join(parent, "victim.txt")
	os.WriteFile(victim, []byte("untouched"), 0o644)
	sib := filepath.Join(parent, "ws2")
	os.MkdirAll(sib, 0o755)
	ctx := context.Background()
	for _, cmd := range []string{
		"echo pwned > " + victim,
		"echo pwned > ../victim.txt",
		"echo pwned > " + filepath.Join(sib, "x.txt"),
		"sh -c 'echo pwned > " + victim + "'",
		"cp /etc/hostname " + filepath.Join(parent, "copied"),
		"rm -f " + victim,
		"cat " + filepath.Join(hidden, "history"),
		"ls " + hidden,
	} {
		r := s.Call(ctx, "run_shell_command", jsonArgs("command", cmd))
		if !r.IsError {
			t.Errorf("%q was allowed: %s", cmd, r.Output)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("victim.txt: %q", b)
	}
	if _, err := os.Stat(filepath.Join(sib, "x.txt")); err == nil {
		t.Error("the sibling was written")
	}
	r := s.Call(ctx, "run_shell_command", jsonArgs("command", "cat "+victim+" && echo ok > inside.txt && mktemp && cat inside.txt"))
	if r.IsError || !strings.Contains(r.Output, "untouched") || !strings.HasSuffix(strings.TrimSpace(r.Output), "ok") {
		t.Errorf("reading outside and writing inside: %+v", r)
	}
	// Without ConfineWrites (the main workspace's shell in a session without isolation) the
	// same command does write: the confinement above is what refused it.
	free, _ := fixture(t, Options{})
	if r := free.Call(ctx, "run_shell_command", jsonArgs("command", "echo written > "+victim)); r.IsError {
		t.Fatalf("unconfined: %+v", r)
	}
	if b, _ := os.ReadFile(victim); string(b) != "written\n" {
		t.Errorf("unconfined write: %q", b)
	}
}
