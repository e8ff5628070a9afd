package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHooksConfig(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	writeConfig(t, user, "hooks:\n  SessionEnded:\n    - command: echo user\n")
	writeConfig(t, filepath.Join(ws, ".summit"), "hooks:\n  max_blocks: 5\n  SubagentStop:\n    - matcher: code-reviewer\n      command: ./check.sh\n      timeout: 9\n  SessionEnded:\n    - {command: echo ws}\n")
	c, err := LoadConfig(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	end := c.Hooks.Events["SessionEnded"]
	if len(end) != 2 || end[0].Command != "echo user" || end[0].Workspace || end[1].Command != "echo ws" || !end[1].Workspace || end[1].Line != 8 {
		t.Errorf("SessionEnded = %+v: want the user's entry, then the workspace's (line 8)", end)
	}
	stop := c.Hooks.Events["SubagentStop"]
	if len(stop) != 1 || stop[0].Matcher != "code-reviewer" || stop[0].TimeoutOr() != 9 || stop[0].Line != 4 || !stop[0].Workspace {
		t.Errorf("SubagentStop = %+v", stop)
	}
	if c.Hooks.MaxBlocks != 5 {
		t.Errorf("max_blocks = %d, want 5", c.Hooks.MaxBlocks)
	}
	wsOnly := c.Hooks.WorkspaceOnly()
	if n := len(wsOnly.Events["SessionEnded"]) + len(wsOnly.Events["SubagentStop"]); n != 2 {
		t.Errorf("workspace hooks: %d entries, want 2: %+v", n, wsOnly)
	}
	if (Hook{Command: "x"}).TimeoutOr() != DefaultHookTimeout {
		t.Errorf("default timeout")
	}
}

func TestHooksConfigErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"hooks:\n  SubagentStpo:\n    - command: x\n", "config.yaml:2: hooks.SubagentStpo: not a hook event (did you mean SubagentStop?)"},
		{"hooks:\n  SessionEnded:\n    - command: x\n    - matcher: a\n", "config.yaml:4: hooks.SessionEnded[1]: command is required"},
		{"hooks:\n  SessionEnded:\n    - command: x\n      matcher: \"(\"\n", "config.yaml:3: hooks.SessionEnded[0]: matcher \"(\" is not a regular expression"},
		{"hooks:\n  SessionEnded:\n    - command: x\n      timeout: -1\n", "config.yaml:3: hooks.SessionEnded[0]: timeout -1"},
		{"hooks:\n  SessionEnded:\n    - command: x\n      timeout: soon\n", "line 4: cannot unmarshal !!str `soon`"},
		{"hooks:\n  SessionEnded:\n    - command: x\n      tiemout: 3\n", "line 4: field tiemout not found"},
		{"hooks:\n  max_blocks: 99\n", "config.yaml:2: hooks.max_blocks 99: want 1 to 20"},
		{"hooks:\n  SessionEnded: {command: x}\n", "line 2: cannot unmarshal !!map"},
		{"hooks:\n  SubagentStop:\n    - command: x\n      hooks: [{command: y}]\n", "config.yaml:3: hooks.SubagentStop[0]: an entry has a command or a hooks: list"},
		{"hooks:\n  SubagentStop:\n    - hooks: [{type: script, command: y}]\n", `config.yaml:3: hooks.SubagentStop[0]: type "script": summit runs command hooks only`},
		{"hooks:\n  SubagentStop:\n    - hooks: [{timeout: 3}]\n", "config.yaml:3: hooks.SubagentStop[0]: command is required"},
	} {
		ws := t.TempDir()
		writeConfig(t, filepath.Join(ws, ".summit"), c.text)
		if _, err := LoadConfig(ws, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

func TestHookMatcher(t *testing.T) {
	for _, c := range []struct {
		m, s string
		want bool
	}{
		{"", "anything", true}, {"*", "x", true}, {"code-reviewer", "code-reviewer", true},
		{"code-reviewer", "code-reviewer-2", false}, {"review", "code-reviewer", false},
		{".*review.*", "code-reviewer", true}, {"explore|plan", "plan", true}, {"explore|plan", "planner", false},
	} {
		re, err := CompileMatcher(c.m)
		if err != nil {
			t.Fatal(err)
		}
		if got := re == nil || re.MatchString(c.s); got != c.want {
			t.Errorf("matcher %q on %q = %v, want %v", c.m, c.s, got, c.want)
		}
	}
}

// TestHooksClaudeCodeShape: Claude Code's hooks settings, pasted as they are, give one entry per
// inner command, each with the outer matcher, its timeout, and the outer entry's line.
func TestHooksClaudeCodeShape(t *testing.T) {
	ws := t.TempDir()
	writeConfig(t, filepath.Join(ws, ".summit"), `hooks:
  SubagentStop:
    - matcher: "code-.*"
      hooks:
        - type: command
          command: ./lint.sh
          timeout: 30
        - {type: command, command: ./test.sh}
    - command: ./plain.sh
`)
	cfg, err := LoadConfig(ws, "")
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Hooks.Events["SubagentStop"]
	if len(got) != 3 {
		t.Fatalf("%d entries: %+v", len(got), got)
	}
	want := []struct {
		m, c string
		to   int
		line int
	}{{"code-.*", "./lint.sh", 30, 3}, {"code-.*", "./test.sh", 0, 3}, {"", "./plain.sh", 0, 9}}
	for i, w := range want {
		h := got[i]
		if h.Matcher != w.m || h.Command != w.c || h.Timeout != w.to || h.Line != w.line || !h.Workspace || h.Hooks != nil || h.Type != "" {
			t.Errorf("entry %d: %+v, want %+v", i, h, w)
		}
	}
}

// Claude Code's events load: those with a counterpart run, the others and prompt hooks are
// left out with a warning at file:line; the JSON block pastes under hooks: as it is.
func TestHooksClaudeCodeEvents(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(`hooks: {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "statusMessage": "checking"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "y"}]}],
  "PreCompact": [{"hooks": [{"type": "command", "command": "z"}]}],
  "Notification": [{"hooks": [{"type": "prompt", "prompt": "summarise"}]}]
}
`), 0o644)
	cfg, err := LoadConfig(ws, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Hooks.Events["PreToolUse"]) != 1 || len(cfg.Hooks.Events["Stop"]) != 1 || len(cfg.Hooks.Events["PreCompact"]) != 0 || len(cfg.Hooks.Events["Notification"]) != 0 {
		t.Errorf("events: %+v", cfg.Hooks.Events)
	}
	w := strings.Join(cfg.Hooks.Warnings, "\n")
	if !strings.Contains(w, "config.yaml:4: hooks.PreCompact: Claude Code's PreCompact has no counterpart in summit: this hook has no effect") ||
		!strings.Contains(w, "config.yaml:5: hooks.Notification[0]: a prompt hook has no effect") {
		t.Errorf("warnings:\n%s", w)
	}
}
