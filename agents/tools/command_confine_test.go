package tools

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// ConfinedCommand runs a long-lived process as the shell runs: writes in the root and in the
// extra paths only (a file among them in place, not its siblings), reads everywhere but the
// hidden paths. Without ConfineWrites it runs as is.
func TestConfinedCommand(t *testing.T) {
	if !ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: a command cannot be confined here")
	}
	base := t.TempDir()
	hidden := filepath.Join(base, "ws", ".summit")
	state, stateFile := filepath.Join(base, "state"), filepath.Join(base, "files", "state.json")
	for _, d := range []string{hidden, state, filepath.Dir(stateFile)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(hidden, "history"), []byte("secret"), 0o600)
	os.WriteFile(stateFile, []byte("{}"), 0o644)
	s, _ := fixture(t, Options{ConfineWrites: true, Hidden: []string{hidden}})
	run := func(script string) (string, error) {
		cmd, err := s.ConfinedCommand([]string{state, stateFile}, os.Environ(), "sh", "-c", script)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Dir = s.Root()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, script := range []string{
		"echo x > " + filepath.Join(base, "ws", "escape.txt"),
		"echo x > " + filepath.Join(hidden, "escape.txt"),
		"cat " + filepath.Join(hidden, "history"),
		"echo x > " + filepath.Join(base, "files", "sibling.json"), // beside a writable file
		"mv " + stateFile + " " + stateFile + ".bak",
	} {
		if out, err := run(script); err == nil {
			t.Errorf("%q was allowed: %s", script, out)
		}
	}
	if out, err := run("echo in > inside.txt && echo st > " + filepath.Join(state, "s") + " && echo '{\"a\":1}' > " + stateFile + " && cat /etc/hostname"); err != nil {
		t.Errorf("the allowed writes: %v %s", err, out)
	}
	if b, _ := os.ReadFile(stateFile); string(b) != "{\"a\":1}\n" {
		t.Errorf("state file: %q", b)
	}
	for _, p := range []string{filepath.Join(base, "ws", "escape.txt"), filepath.Join(hidden, "escape.txt"), filepath.Join(base, "files", "sibling.json")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	free, _ := fixture(t, Options{Hidden: []string{hidden}})
	cmd, err := free.ConfinedCommand(nil, os.Environ(), "sh", "-c", "cat "+filepath.Join(hidden, "history"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "secret" {
		t.Errorf("without ConfineWrites: %v %q", err, out)
	}
}

// A writable path may not reach a hidden one: not the path itself, one above it, one below
// it, nor a symlink to any of them.
func TestConfinedCommandRefusesHidden(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux confines a command")
	}
	base := t.TempDir()
	hidden := filepath.Join(base, "ws", ".summit")
	os.MkdirAll(hidden, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(filepath.Join(base, "ws"), link)
	s, _ := fixture(t, Options{ConfineWrites: true, Hidden: []string{hidden}})
	for _, p := range []string{hidden, filepath.Join(base, "ws"), filepath.Join(hidden, "agents"), link, filepath.Join(link, ".summit", "x"), base} {
		if _, err := s.ConfinedCommand([]string{p}, nil, "true"); err == nil || !strings.Contains(err.Error(), "which a subagent may not") {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{filepath.Join(base, "ws", ".summit2"), filepath.Join(base, "state")} {
		if _, err := s.ConfinedCommand([]string{p}, nil, "true"); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
