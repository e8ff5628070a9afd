package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// summit run does not run an untrusted workspace's hooks, says so, and runs them with
// --trust-workspace (and its deprecated spelling --trust-hooks); the trust store and the user
// config are temp dirs.
func TestRunWorkspaceHooksTrust(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ws := runWorkspace(t)
	side := filepath.Join(t.TempDir(), "ran")
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	cfg := "hooks:\n  SubagentStart:\n    - command: echo start >> " + side + "\n"
	if err := os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "/delegate find markers --agent-type analyzer\n"
	code, out, errOut, _ := runScript(t, ws, script)
	if code != 0 || !strings.Contains(errOut, "workspace not trusted: ignored hooks (summit trust to enable)") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if _, err := os.Stat(side); err == nil || strings.Contains(out, "SubagentStart hook") {
		t.Fatalf("an untrusted workspace's hook ran")
	}
	code, out, errOut, _ = runScript(t, ws, script, "--trust-workspace")
	if b, _ := os.ReadFile(side); code != 0 || string(b) != "start\n" || !strings.Contains(out, "SubagentStart hook `echo start") {
		t.Fatalf("--trust-workspace: exit %d, ran %q\n%s\n%s", code, b, errOut, out)
	}
	code, _, errOut, _ = runScript(t, ws, script, "--trust-hooks")
	if b, _ := os.ReadFile(side); code != 0 || string(b) != "start\nstart\n" {
		t.Fatalf("--trust-hooks: exit %d, ran %q\n%s", code, b, errOut)
	}
	// A typo in the config is refused with file:line and the nearest event.
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("hooks:\n  SubagentStrat:\n    - command: x\n"), 0o644)
	code, _, errOut, _ = runScript(t, ws, script)
	if code != 2 || !strings.Contains(errOut, "config.yaml:2: hooks.SubagentStrat: not a hook event (did you mean SubagentStart?)") {
		t.Errorf("typo: exit %d\n%s", code, errOut)
	}
}
