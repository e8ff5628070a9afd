package trust

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// What trust covers: the config file, the gated agent files and the hook scripts; a change to
// any of them asks again, a change elsewhere does not.
func TestAssessCoversAndAsksAgain(t *testing.T) {
	ws := t.TempDir()
	store := filepath.Join(t.TempDir(), "summit", "trust", "workspaces.json")
	a, err := Assess(ws, store, false)
	if err != nil || a.Status != StatusNone || a.Notice() != "" {
		t.Fatalf("empty workspace: %+v %v", a, err)
	}
	write(t, filepath.Join(ws, ".summit", "config.yaml"), "hooks:\n  SessionEnded:\n    - command: ./scripts/check.sh --fast\nweb_allow_hosts: [127.0.0.1]\n")
	write(t, filepath.Join(ws, "scripts", "check.sh"), "#!/bin/sh\nexit 0\n")
	write(t, filepath.Join(ws, ".claude", "agents", "ext.md"), "---\nname: ext\ndescription: x\nkind: acp\ncommand: ./x\n---\n")
	write(t, filepath.Join(ws, ".summit", "agents", "plain.md"), "---\nname: plain\ndescription: only prompts\n---\nbody\n")
	a, err = Assess(ws, store, false)
	if err != nil || a.Status != StatusUntrusted || a.Trusted() {
		t.Fatalf("untrusted: %+v %v", a, err)
	}
	want := []string{"hooks.SessionEnded: runs ./scripts/check.sh --fast", "web_allow_hosts: web_fetch may reach 127.0.0.1", "agent ext (.claude/agents/ext.md): kind: acp (runs ./x)"}
	if !slices.Equal(a.Items, want) {
		t.Errorf("items %q, want %q", a.Items, want)
	}
	if ig := a.Ignored(); !slices.Equal(ig, []string{"hooks", "web_allow_hosts", "agent file .claude/agents/ext.md"}) {
		t.Errorf("ignored %q", ig)
	}
	if got := HookScripts(a.Workspace); len(got) != 1 || !strings.HasSuffix(got[0], "scripts/check.sh") {
		t.Errorf("hook scripts %q", got)
	}
	if b, err := Assess(ws, store, true); err != nil || b.Status != StatusTrusted || !b.Flag {
		t.Errorf("--trust-workspace: %+v %v", b, err)
	}
	if err := Record(store, a, time.Now()); err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{store: 0o600, filepath.Dir(store): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: %v %v, want %v", p, st.Mode().Perm(), err, mode)
		}
	}
	if b, _ := Assess(ws, store, false); b.Status != StatusTrusted {
		t.Fatalf("after Record: %+v", b)
	}
	// A file outside what trust covers changes nothing.
	write(t, filepath.Join(ws, ".summit", "agents", "plain.md"), "---\nname: plain\ndescription: other prompt\n---\nbody 2\n")
	write(t, filepath.Join(ws, "main.go"), "package main\n")
	if b, _ := Assess(ws, store, false); b.Status != StatusTrusted {
		t.Errorf("an uncovered file untrusted it: %+v", b)
	}
	// Each covered file untrusts it when it changes, and trusting again covers the change.
	for _, f := range []string{"scripts/check.sh", ".claude/agents/ext.md", ".summit/config.yaml"} {
		p := filepath.Join(ws, f)
		old, _ := os.ReadFile(p)
		write(t, p, string(old)+"# changed\n")
		b, err := Assess(ws, store, false)
		if err != nil || b.Status != StatusUntrusted || !b.Changed || !strings.Contains(b.Notice(), "changed since you trusted it") {
			t.Errorf("%s changed: %+v %v", f, b, err)
		}
		if err := Record(store, b, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// The key is the resolved path: a symlink to the workspace is the same workspace.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	if b, _ := Assess(link, store, false); b.Status != StatusTrusted {
		t.Errorf("through a symlink: %+v", b)
	}
	if had, err := Revoke(store, a.Workspace); !had || err != nil {
		t.Errorf("revoke: %v %v", had, err)
	}
	if b, _ := Assess(ws, store, false); b.Status != StatusUntrusted || b.Changed {
		t.Errorf("after revoke: %+v", b)
	}
	// A damaged store: untrusted, and the error says so; recording again repairs it.
	os.WriteFile(store, []byte("{not json"), 0o600)
	if b, err := Assess(ws, store, false); err == nil || b.Status != StatusUntrusted {
		t.Errorf("damaged store: %+v %v", b, err)
	}
}

func TestStorePath(t *testing.T) {
	env := map[string]string{"XDG_DATA_HOME": "/x/data", "HOME": "/home/u"}
	if p, _ := StorePath(func(k string) string { return env[k] }); p != "/x/data/summit/trust/workspaces.json" {
		t.Errorf("XDG: %s", p)
	}
	env["XDG_DATA_HOME"] = "relative"
	if p, _ := StorePath(func(k string) string { return env[k] }); p != "/home/u/.local/share/summit/trust/workspaces.json" {
		t.Errorf("HOME: %s", p)
	}
}

// A hook named as Claude Code's settings name it, "$CLAUDE_PROJECT_DIR"/path, is covered: a
// change to that script asks again.
func TestHookScriptsClaudeProjectDir(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	os.MkdirAll(filepath.Join(ws, ".claude", "hooks"), 0o755)
	os.WriteFile(filepath.Join(ws, ".claude", "hooks", "check.sh"), []byte("exit 0\n"), 0o755)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(`hooks: {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh"}]}]}`+"\n"), 0o644)
	got := HookScripts(ws)
	if len(got) != 1 || got[0] != filepath.Join(ws, ".claude", "hooks", "check.sh") {
		t.Fatalf("HookScripts = %v", got)
	}
}
